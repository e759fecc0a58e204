/**
 * What the shell snapshot's value rules check against the host: plain path
 * components and paths, whether a path exists or a program is on the host's
 * `PATH`, and what the host environment already shows ({@linkcode KnownPaths}:
 * its `HOME`, `TMPDIR` and `PATH` entries, its user name, the conda
 * environments of the snapshot). See docs/security.md ("The command
 * environment carries only configuration").
 *
 * @module
 */

/** A UUID, anywhere (Heroku-style API keys). */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** Characters of a plain component: letters (any script), digits, space and `._@+~%,-`. */
const COMPONENT_CHARS = /^[\p{L}\p{N} ._@+~%,-]*$/u;

/** Letter/digit alternations in the letters and digits of `s`: `x86_64` has 1, `a1b2c3` has 5. */
function alternations(s: string): number {
  const t = s.replace(/[^A-Za-z0-9]/g, "");
  let n = 0;
  for (let i = 1; i < t.length; i++) {
    if (/\d/.test(t[i]!) !== /\d/.test(t[i - 1]!)) n++;
  }
  return n;
}

/**
 * True for one plain path component or word: at most 64 characters of
 * letters, digits, space and `._@+~%,-`, and no random-looking run in it —
 * no UUID, no 12 or more hex digits in a row (with a digit among them), no
 * run of 16 or more letters and digits mixing both, and fewer than 8
 * letter/digit alternations in all (so a token cut by dots is no plain
 * component). `x86_64-unknown-linux-gnu`, `v20.11.1`, `python@3.12`,
 * `en_US.UTF-8` are plain.
 */
export function isPlainComponent(c: string): boolean {
  if (c.length > 64 || !COMPONENT_CHARS.test(c) || UUID.test(c)) return false;
  if ((c.match(/[0-9a-f]{12,}/gi) ?? []).some((h) => /\d/.test(h))) return false;
  for (const run of c.match(/[A-Za-z0-9]{16,}/g) ?? []) {
    if (/[A-Za-z]/.test(run) && /\d/.test(run)) return false;
  }
  return alternations(c) < 8;
}

/**
 * A Nix store entry's first component: 32 characters of Nix's base-32
 * alphabet (no `e`, `o`, `t`, `u`), then `-` and a name.
 */
const NIX_HASH = /^[0-9abcdfghijklmnpqrsvwxyz]{32}-(.+)$/;

/**
 * What the host environment already tells commands, so no startup file can
 * hide a secret in it: the host's `HOME` and `TMPDIR` (a path under them is
 * checked only past them; macOS's `TMPDIR` and a temporary home are random
 * looking) and the host's own `PATH` entries (kept as they are).
 */
export interface KnownPaths {
  /** Absolute directories whose own components are not checked. */
  prefixes: readonly string[];
  /** Search-path entries that pass unchecked. */
  entries: readonly string[];
  /** The host's home, for `~` paths (else the process's `HOME`). */
  home?: string | undefined;
  /** The host's own user names (its `USER`, `LOGNAME`, the passwd entry of the uid): all `USER` may be. */
  users?: readonly string[];
  /** Conda environments `CONDA_DEFAULT_ENV` may name: `base` and the one of a passing `CONDA_PREFIX`. */
  condaEnvs?: readonly string[];
}

/** The {@linkcode KnownPaths} of host environment `host`. */
export function knownPaths(host: Record<string, string>): KnownPaths {
  const prefixes = [host["HOME"], host["TMPDIR"]]
    .map((p) => (p ?? "").replace(/\/+$/, ""))
    .filter((p) => p.startsWith("/"));
  const entries = (host["PATH"] ?? "").split(":").filter((p) => p.startsWith("/"));
  const users = [host["USER"], host["LOGNAME"], passwdUser()]
    .filter((u): u is string => u !== undefined && u !== "");
  return { prefixes, entries, home: host["HOME"], users };
}

/** The user name of this process's uid in `/etc/passwd`, if it can be read. */
function passwdUser(): string | undefined {
  let uid: number | null;
  let text: string;
  try {
    uid = Deno.uid();
    text = Deno.readTextFileSync("/etc/passwd");
  } catch {
    return undefined;
  }
  if (uid === null) return undefined;
  for (const line of text.split("\n")) {
    const f = line.split(":");
    if (f.length >= 3 && f[2] === String(uid) && f[0] !== "") return f[0];
  }
  return undefined;
}

/** Nothing known of the host: no prefix, no `PATH` entry, no user. */
export const NO_KNOWN: KnownPaths = { prefixes: [], entries: [] };

/**
 * True when absolute or `~` path `path` exists on the host (a directory
 * when `dir`), following symbolic links; false when it cannot be looked at.
 */
export function existsOnHost(path: string, dir: boolean, known: KnownPaths): boolean {
  const home = known.home ?? Deno.env.get("HOME") ?? "";
  const full = path === "~" || path.startsWith("~/") ? home + path.slice(1) : path;
  if (!full.startsWith("/") || /[\n\0]/.test(full)) return false;
  try {
    const st = Deno.statSync(full);
    return dir ? st.isDirectory : true;
  } catch {
    return false;
  }
}

/** True when `name` (no `/`) is an executable file in one of the host's `PATH` entries. */
export function programOnHost(name: string, known: KnownPaths): boolean {
  if (!/^[A-Za-z0-9._+-]{1,64}$/.test(name) || name.startsWith(".")) return false;
  return known.entries.some((d) => {
    try {
      const st = Deno.statSync(`${d}/${name}`);
      return st.isFile && ((st.mode ?? 0o111) & 0o111) !== 0;
    } catch {
      return false;
    }
  });
}

/**
 * True for an absolute or `~` path whose every component is plain
 * ({@linkcode isPlainComponent}), past a known prefix when under one. The
 * component right after `/nix/store/` may start with a Nix store hash: only
 * its name part is checked.
 */
export function isPlainPath(path: string, known: KnownPaths = NO_KNOWN): boolean {
  if (path !== "~" && !path.startsWith("/") && !path.startsWith("~/")) return false;
  const prefix = known.prefixes.find((p) => path === p || path.startsWith(p + "/"));
  if (prefix !== undefined) return path.slice(prefix.length).split("/").every(isPlainComponent);
  const parts = path.split("/").slice(1);
  return parts.every((c, i) => {
    const nix = path.startsWith("/nix/store/") && i === 2 ? NIX_HASH.exec(c) : null;
    return isPlainComponent(nix ? nix[1]! : c);
  });
}
