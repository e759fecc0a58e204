/**
 * What ssh's configuration names: the files it includes and every path its
 * lines name (the programs of `ProxyCommand`, `Match exec`, `LocalCommand`,
 * `KnownHostsCommand`, the keys and sockets it uses), read as ssh reads them,
 * so that the plan keeps those in a writable root read-only (`_home_plan.ts`):
 * the user's next `ssh` or `git fetch` over ssh runs them on the host (attack
 * round 18 imports B7, 18c #20–#25).
 *
 * Read: the home's `~/.ssh/config`, the files of `~/.ssh/config.d/`, and the
 * system's `/etc/ssh/ssh_config`, then every file an `Include` names, to any
 * depth. An `Include` path may be relative (to `~/.ssh` in the user's files,
 * to `/etc/ssh` in the system's), start with `~` or ssh's `%d` (the home), and
 * hold globs: the directory a glob lists is named too (a file the model adds
 * there would match), and each match is followed. In every line, each word
 * that starts with `/`, `~/` or `%d/`, inside quotes or a command string
 * alike, is a named path (an over-approximation: a word of a command that is
 * no path names nothing the plan changes). Bounded: at most
 * {@linkcode MAX_FILES} files of at most {@linkcode MAX_FILE_BYTES} each; an
 * unreadable or larger file is not followed.
 *
 * @module
 */
import { isAbsolute, join, normalize } from "node:path";
import { listDirNow, readRegularTextNow } from "./_look.ts";

/** Files read at most. */
export const MAX_FILES = 64;
/** The largest file read. */
export const MAX_FILE_BYTES = 1 << 20;

/** What ssh's configuration names, as absolute paths. */
export interface SshReferences {
  /** Every file read and every path a line names (existing or not). */
  paths: string[];
  /** The directories an `Include` glob lists. */
  globDirs: string[];
}

const GLOB = /[*?[]/;

/** The words of `text`: split at whitespace, quotes and shell punctuation. */
function words(text: string): string[] {
  // `$HOME` and `${HOME}` read as `~`: ssh runs `ProxyCommand` and `Match exec` through the
  // user's shell, which expands them (attack round 32 w05).
  return text.split(/[\s"'`;|&()<>=,]+/).filter((w) => w !== "").map((w) =>
    w.replace(/^(?:\$HOME|\$\{HOME\})(?=\/|$)/, "~")
  );
}

/** `word` as an absolute path (`~` and `%d` are the home), or undefined. */
function expand(word: string, home: string, base: string | undefined): string | undefined {
  let w = word;
  if (w === "~" || w.startsWith("~/")) w = home + w.slice(1);
  else if (w === "%d" || w.startsWith("%d/")) w = home + w.slice(2);
  if (isAbsolute(w)) return normalize(w);
  return base === undefined ? undefined : normalize(join(base, w));
}

/** The paths a glob `pattern` (absolute) matches in its directory, and that directory. */
function globbed(pattern: string): { dir: string; matches: string[] } {
  const parts = pattern.split("/");
  const first = parts.findIndex((p) => GLOB.test(p));
  const dir = parts.slice(0, first).join("/") || "/";
  if (first !== parts.length - 1) return { dir, matches: [] }; // a glob above the last name
  const re = new RegExp(
    "^" + parts[first]!.replace(/[.+^${}()|\\]/g, "\\$&").replace(/\*/g, ".*").replace(
      /\?/g,
      ".",
    ) + "$",
  );
  let matches: string[] = [];
  try {
    matches = listDirNow(dir).filter((e) => re.test(e.name)).map((e) => join(dir, e.name));
  } catch {
    // no such directory
  }
  return { dir, matches };
}

/** {@linkcode SshReferences} of the home `home`. */
export function sshConfigReferences(home: string): SshReferences {
  const userDir = join(home, ".ssh");
  const queue: { path: string; base: string }[] = [
    { path: join(userDir, "config"), base: userDir },
    { path: "/etc/ssh/ssh_config", base: "/etc/ssh" },
  ];
  try {
    for (const e of listDirNow(join(userDir, "config.d"))) {
      queue.push({ path: join(userDir, "config.d", e.name), base: userDir });
    }
  } catch {
    // none
  }
  const paths = new Set<string>();
  const globDirs = new Set<string>();
  const read = new Set<string>();
  while (queue.length > 0 && read.size < MAX_FILES) {
    const { path, base } = queue.shift()!;
    if (read.has(path)) continue;
    read.add(path);
    paths.add(path);
    const text = readRegularTextNow(path, MAX_FILE_BYTES);
    if (text === undefined) continue;
    for (const raw of text.split("\n")) {
      const line = raw.trim();
      if (line === "" || line.startsWith("#")) continue;
      const m = /^(\S+?)(?:\s*=\s*|\s+)(.*)$/.exec(line);
      const keyword = (m?.[1] ?? line).toLowerCase();
      const rest = m?.[2] ?? "";
      if (keyword === "include") {
        for (const w of words(rest)) {
          const p = expand(w, home, base);
          if (p === undefined) continue;
          if (GLOB.test(p)) {
            const { dir, matches } = globbed(p);
            globDirs.add(dir);
            for (const f of matches) queue.push({ path: f, base });
          } else queue.push({ path: p, base });
        }
        continue;
      }
      for (const w of words(rest)) {
        if (!(w.startsWith("/") || w.startsWith("~/") || w.startsWith("%d/"))) continue;
        const p = expand(w, home, undefined);
        if (p === undefined) continue;
        if (GLOB.test(p)) globDirs.add(globbed(p).dir);
        else paths.add(p);
      }
    }
  }
  return { paths: [...paths], globDirs: [...globDirs].map((d) => normalize(d)) };
}
