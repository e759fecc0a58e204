/**
 * The configuration keys whose values git runs or loads: one table
 * ({@linkcode GIT_EXEC_KEYS}), and the workspace paths a resolved
 * configuration makes git run or load ({@linkcode gitExecTargets}). Each of
 * those paths is read-only to the model (the command sandbox mounts it
 * read-only, the file tools refuse it), since the host's git would run what
 * the model wrote there outside any sandbox.
 *
 * Commands are shell strings: every word that names a path relative to the
 * work tree (`./x`, `tools/x`), an absolute path or `~/…` is a target, and a
 * bare word (`fsmon`) is one when it exists in the work tree. Options
 * (`-F`) are skipped; `--opt=path` counts its path. `python -m <module>`
 * counts the names python would import `<module>` from in the work tree
 * ({@linkcode pythonModuleNames}).
 *
 * @module
 */
import { dirname } from "node:path";
import type { ConfigEntry, ConfigFile, ResolvedGitConfig } from "./git_config.ts";
import { gitBoolean } from "./git_config_parse.ts";
import { physicalPath } from "./git_path.ts";

/** How git uses a key's value. */
export type ExecKeyKind =
  /** A shell command (or a program path) git runs. */
  | "command"
  /** A directory of hooks git runs (relative to the work tree). */
  | "hooks"
  /** A file git reads, which decides what it runs. */
  | "file"
  /** A directory git copies or reads programs from. */
  | "dir"
  /**
   * A setting that lets git run a program it names elsewhere (a transport,
   * a remote helper): it names no path of its own.
   */
  | "setting";

/** One row of {@linkcode GIT_EXEC_KEYS}. */
export interface ExecKey {
  /** The key as git's documentation spells it; `*` stands for any subsection or name. */
  key: string;
  kind: ExecKeyKind;
  /** When git runs it (for the docs). */
  when: string;
  /** Whether a value names something to run (default: every value). */
  applies?: (value: string | null) => boolean;
  /** The shell command inside the value (default: the value itself). */
  command?: (value: string) => string;
}

const notBoolean = (v: string | null) => v !== null && gitBoolean(v) === undefined;
const shellAlias = (v: string | null) => v !== null && v.trimStart().startsWith("!");
/** An alias that runs a shell command, or passes git options (`-c core.pager=…`, `--exec-path`). */
const runningAlias = (v: string | null) =>
  v !== null && (shellAlias(v) || /(?:^|\s)-/.test(v.trimStart()));
/** A URL of git's `ext::` transport, which runs its command (`ext::sh -c x% y`). */
const extUrl = (v: string | null) => v !== null && /^\s*ext::/i.test(v);
/** The command of an `ext::` URL: `% ` is a space, `%%` a percent sign. */
const extCommand = (v: string) =>
  v.replace(/^\s*ext::/i, "").replace(
    /%(.)/g,
    (_, c: string) => (c === "%" ? "%" : c === " " ? " " : ""),
  );

/** Every key whose value git runs or loads a program from. */
export const GIT_EXEC_KEYS: readonly ExecKey[] = [
  { key: "core.hooksPath", kind: "hooks", when: "every hook (commit, checkout, merge, push…)" },
  { key: "core.fsmonitor", kind: "command", when: "status, diff, add…", applies: notBoolean },
  { key: "core.sshCommand", kind: "command", when: "fetch, push, clone over ssh" },
  { key: "core.gitProxy", kind: "command", when: "fetch over git://" },
  { key: "core.editor", kind: "command", when: "commit, rebase -i, tag -a" },
  { key: "core.pager", kind: "command", when: "log, diff, show…" },
  { key: "core.askPass", kind: "command", when: "any prompt for a password" },
  { key: "core.alternateRefsCommand", kind: "command", when: "fetch, push with alternates" },
  { key: "core.attributesFile", kind: "file", when: "picks filters and diff drivers" },
  { key: "core.excludesFile", kind: "file", when: "status, add" },
  { key: "core.worktree", kind: "dir", when: "moves the work tree (hooks run there)" },
  { key: "sequence.editor", kind: "command", when: "rebase -i" },
  { key: "pager.*", kind: "command", when: "the named command", applies: notBoolean },
  {
    key: "alias.*",
    kind: "command",
    when: "the alias",
    applies: runningAlias,
  },
  { key: "interactive.diffFilter", kind: "command", when: "add -p" },
  { key: "diff.external", kind: "command", when: "diff" },
  { key: "diff.*.textconv", kind: "command", when: "diff, log -p, blame" },
  { key: "diff.*.command", kind: "command", when: "diff" },
  { key: "difftool.*.cmd", kind: "command", when: "difftool" },
  { key: "difftool.*.path", kind: "command", when: "difftool" },
  { key: "mergetool.*.cmd", kind: "command", when: "mergetool" },
  { key: "mergetool.*.path", kind: "command", when: "mergetool" },
  { key: "merge.*.driver", kind: "command", when: "merge, rebase, cherry-pick" },
  { key: "filter.*.clean", kind: "command", when: "add, status, diff" },
  { key: "filter.*.smudge", kind: "command", when: "checkout, switch, reset" },
  { key: "filter.*.process", kind: "command", when: "add, checkout, status" },
  { key: "credential.helper", kind: "command", when: "fetch, push over https" },
  { key: "credential.*.helper", kind: "command", when: "fetch, push over https" },
  { key: "gpg.program", kind: "command", when: "commit -S, tag -s, log --show-signature" },
  { key: "gpg.*.program", kind: "command", when: "signing and verifying" },
  { key: "gpg.ssh.defaultKeyCommand", kind: "command", when: "ssh signing" },
  { key: "gpg.ssh.allowedSignersFile", kind: "file", when: "ssh signature checks" },
  { key: "hook.*.command", kind: "command", when: "the configured hook event" },
  { key: "submodule.*.update", kind: "command", when: "submodule update", applies: shellAlias },
  { key: "sendemail.smtpServer", kind: "command", when: "send-email (a program path)" },
  { key: "sendemail.*cmd", kind: "command", when: "send-email (also per identity)" },
  { key: "web.browser", kind: "command", when: "help --web, instaweb" },
  { key: "browser.*.cmd", kind: "command", when: "help --web" },
  { key: "browser.*.path", kind: "command", when: "help --web" },
  { key: "man.*.cmd", kind: "command", when: "help" },
  { key: "man.*.path", kind: "command", when: "help" },
  { key: "instaweb.httpd", kind: "command", when: "instaweb" },
  { key: "uploadpack.packObjectsHook", kind: "command", when: "serving a fetch" },
  { key: "remote.*.uploadpack", kind: "command", when: "fetch from a local remote" },
  { key: "remote.*.receivepack", kind: "command", when: "push to a local remote" },
  { key: "ssh.variant", kind: "command", when: "names the ssh program's kind" },
  { key: "init.templateDir", kind: "dir", when: "init, clone (copies its hooks)" },
  { key: "tar.*.command", kind: "command", when: "archive --format=<name>" },
  { key: "trailer.*.command", kind: "command", when: "commit --trailer, interpret-trailers" },
  { key: "trailer.*.cmd", kind: "command", when: "commit --trailer, interpret-trailers" },
  { key: "guitool.*.cmd", kind: "command", when: "git gui, gitk tools menu" },
  { key: "imap.tunnel", kind: "command", when: "imap-send" },
  { key: "sendemail.*.smtpServer", kind: "command", when: "send-email (per identity)" },
  { key: "help.browser", kind: "command", when: "help --web" },
  { key: "instaweb.browser", kind: "command", when: "instaweb" },
  {
    key: "remote.*.url",
    kind: "command",
    when: "fetch, push, pull (an ext:: URL runs its command)",
    applies: extUrl,
    command: extCommand,
  },
  {
    key: "remote.*.pushurl",
    kind: "command",
    when: "push (an ext:: URL runs its command)",
    applies: extUrl,
    command: extCommand,
  },
  {
    key: "submodule.*.url",
    kind: "command",
    when: "submodule update (an ext:: URL runs its command)",
    applies: extUrl,
    command: extCommand,
  },
  { key: "protocol.allow", kind: "setting", when: "allows ext:: (runs the URL's command)" },
  { key: "protocol.*.allow", kind: "setting", when: "allows ext:: (runs the URL's command)" },
  { key: "url.*.insteadOf", kind: "setting", when: "rewrites URLs (into ext:: too)" },
  { key: "url.*.pushInsteadOf", kind: "setting", when: "rewrites push URLs (into ext:: too)" },
  { key: "remote.*.vcs", kind: "setting", when: "fetch, push (runs git-remote-<vcs>)" },
  // Other programs that read the repository's configuration and run what it names (attack
  // round 28 f02): git-lfs through the user's global lfs filter, git-annex, git-svn, git-secrets.
  { key: "lfs.extension.*.clean", kind: "command", when: "add, status, diff (git-lfs filter)" },
  { key: "lfs.extension.*.smudge", kind: "command", when: "checkout (git-lfs filter)" },
  { key: "lfs.customtransfer.*.path", kind: "command", when: "git-lfs push, pull, checkout" },
  { key: "lfs.standalonetransferagent", kind: "setting", when: "git-lfs runs a custom agent" },
  { key: "lfs.*.standalonetransferagent", kind: "setting", when: "git-lfs runs a custom agent" },
  { key: "annex.*-command", kind: "command", when: "git-annex (get, add, commit…)" },
  { key: "annex.*-hook", kind: "command", when: "git-annex hook special remotes" },
  { key: "remote.*.annex-*-command", kind: "command", when: "git-annex special remotes" },
  { key: "remote.*.annex-*-options", kind: "command", when: "git-annex ssh, rsync (-e cmd)" },
  { key: "remote.*.annex-rsync-transport", kind: "command", when: "git-annex rsync remotes" },
  { key: "svn.authorsProg", kind: "command", when: "git svn fetch, clone" },
  { key: "secrets.providers", kind: "command", when: "git-secrets scans (commit hooks)" },
];

/** `pattern` (with `*`) as a whole-key test; keys compare without case. */
function keyRegExp(pattern: string): RegExp {
  const body = pattern.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".+");
  return new RegExp(`^${body}$`, "is");
}

const KEY_TESTS = GIT_EXEC_KEYS.map((k) => ({ row: k, re: keyRegExp(k.key) }));

/** The table row `key` (a configuration key as parsed) falls under, if any. */
export function execKeyOf(key: string): ExecKey | undefined {
  return KEY_TESTS.find((t) => t.re.test(key))?.row;
}

/** A workspace path git may run or load, and why. */
export interface ExecTarget {
  /** Absolute path, as git would use it (links resolved as the kernel does: `git_path.ts`). */
  path: string;
  /** The symbolic links on the way to it, which a command could re-point. */
  links?: string[];
  /**
   * The entries a `..` of the configured path stepped out of: a command that
   * made one of them a link would send the path elsewhere.
   */
  via?: string[];
  /** The key naming it, as the table spells it (`core.hooksPath`), or `include.path`. */
  key: string;
  /** The value of that key. */
  value: string;
  /** The configuration file that set it. */
  file: string;
  /** How git uses it: `run` (a program or hooks directory) or `read` (configuration). */
  use: "run" | "read";
  /** What stands in for it while missing. */
  missing: "dir" | "file";
  /** A bare command word: a target only when it exists. */
  ifExists?: boolean;
  /** Why git uses it, for refusals, when not `<key> = <value>` (a hook's file, a convention). */
  why?: string;
}

/**
 * The words of shell command `cmd` that may name paths; `$HOME` and `${HOME}` at a word's start
 * read as `~` (git runs the command through `sh -c`, which expands them: a `textconv`, an alias,
 * `core.fsmonitor` or `core.sshCommand` naming `$HOME/proj/x` left `x` writable, and the user's
 * git ran the model's code: attack round 32 w06). Other variables are not known here.
 */
export function commandWords(cmd: string): string[] {
  const words: string[] = [];
  for (const raw of cmd.split(/[\s;|&()<>`'"!]+/)) {
    if (raw === "") continue;
    const parts = raw.startsWith("-") ? raw.split("=").slice(1) : raw.split("=");
    for (const part of parts) {
      const w = homeWord(part);
      if (w !== "" && !w.startsWith("-") && !w.startsWith("$")) words.push(w);
    }
  }
  return words;
}

/** `word` with a leading `$HOME` or `${HOME}` as `~`. */
export function homeWord(word: string): string {
  const m = /^(?:\$HOME|\$\{HOME\})(?=\/|$)/.exec(word);
  return m ? "~" + word.slice(m[0].length) : word;
}

/** A Python interpreter's name: `python`, `python3`, `python3.12`, `pypy3`. */
const PYTHON = /^(?:python|pypy)[0-9.]*$/;

/**
 * The modules shell command `cmd` runs with `python -m <module>` (also
 * `-um <module>`, `-m<module>`): python looks them up in the current
 * directory (the work tree, for a command git runs) before its own, unless
 * `-I` or `-P` keeps it off `sys.path`.
 */
export function pythonModules(cmd: string): string[] {
  const words = cmd.split(/[\s;|&()<>`'"!]+/).filter((w) => w !== "");
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    if (!PYTHON.test(words[i]!.split("/").pop()!)) continue;
    // -I (isolated) and -P (3.11+) keep the current directory off sys.path.
    let safe = false;
    for (let j = i + 1; j < words.length; j++) {
      const w = words[j]!;
      // Flags may be combined (`-um x`); -W and -X take an argument; -c, -, -- or a script end it.
      const m = /^-([bBdEhiIOPqRsSuvV]*)m(.*)$/.exec(w);
      if (m) {
        const mod = m[2] || words[j + 1];
        safe ||= /[IP]/.test(m[1]!);
        if (!safe && mod && /^[A-Za-z_][\w.]*$/.test(mod)) out.push(mod);
        break;
      }
      if (/^-[bBdEhiIOPqRsSuvVWX]*[IP]/.test(w)) safe = true;
      if (/^-[bBdEhiIOPqRsSuvV]*[WX]$/.test(w)) j++;
      else if (!/^-[bBdEhiIOPqRsSuvVWX]/.test(w) || /c/.test(w)) break;
    }
  }
  return out;
}

/**
 * The work-tree names python would import the top package of `module` from,
 * ahead of its installed copy: source, bytecode, an extension module without
 * a platform tag, a package directory. (Tagged extension modules, such as
 * `x.cpython-312-x86_64-linux-gnu.so`, and the other modules it imports are
 * not covered: see docs/security.md.)
 */
export function pythonModuleNames(module: string): string[] {
  const top = module.split(".")[0]!;
  return [top, `${top}.py`, `${top}.pyc`, `${top}.so`, `${top}.abi3.so`];
}

function expandHome(p: string, home: string | undefined): string | undefined {
  if (p === "~" || p.startsWith("~/")) return home ? home + p.slice(1) : undefined;
  return p.startsWith("~") ? undefined : p;
}

/** One path of an assignment, relative to every base, resolved as git opens it. */
async function located(
  p: string,
  bases: readonly string[],
  fields: Omit<ExecTarget, "path">,
): Promise<ExecTarget[]> {
  const out: ExecTarget[] = [];
  for (const b of p.startsWith("/") ? ["/"] : bases) {
    const { path, links, via } = await physicalPath(b, p);
    out.push({
      ...fields,
      path,
      ...(links.length ? { links } : {}),
      ...(via.length ? { via } : {}),
    });
  }
  return out;
}

/** The paths of one assignment. */
async function targetsOf(
  e: ConfigEntry,
  row: ExecKey,
  bases: readonly string[],
  home: string | undefined,
): Promise<ExecTarget[]> {
  const value = e.value ?? "";
  const base = { key: row.key, value, file: e.file };
  if (row.kind === "setting") return [];
  if (row.kind !== "command") {
    const p = expandHome(value.trim(), home);
    if (!p) return [];
    const missing = row.kind === "file" ? "file" : "dir";
    const use = row.kind === "file" ? "read" : "run";
    return await located(p, bases, { ...base, use, missing });
  }
  const out: ExecTarget[] = [];
  const command = row.command ? row.command(value) : value;
  // `python -m x` imports x from the work tree first: those names are run too (a stand-in is a
  // directory, which python's import ignores as a module file, and an empty one as a package).
  for (const mod of pythonModules(command)) {
    for (const name of pythonModuleNames(mod)) {
      out.push(...await located(name, bases, { ...base, use: "run", missing: "dir" }));
    }
  }
  for (const word of commandWords(command)) {
    const p = expandHome(word, home);
    if (!p) continue;
    const bare = !p.startsWith("/") && !p.includes("/") && !p.startsWith(".");
    const fields = { ...base, use: "run" as const, missing: "dir" as const };
    out.push(...await located(p, bases, bare ? { ...fields, ifExists: true } : fields));
  }
  return out;
}

/**
 * Every path `config` makes git run or load: the values of the keys of
 * {@linkcode GIT_EXEC_KEYS}, taken from `workTree` when relative (and from
 * the `core.worktree` it names, if any), and every included configuration
 * file. Paths outside the workspace are returned too; the caller keeps the
 * ones the model can write. Each is resolved as the kernel resolves it when
 * git opens it ({@linkcode physicalPath}).
 */
/** The target of an included file `f`, read by git because `from` includes it under `key`. */
export function includeTarget(f: ConfigFile, from: string, key: string): ExecTarget {
  return {
    path: f.path,
    key,
    value: f.path,
    file: from,
    use: "read",
    missing: "file",
    ...(f.links?.length ? { links: f.links } : {}),
    ...(f.via?.length ? { via: f.via } : {}),
  };
}

export async function gitExecTargets(
  config: ResolvedGitConfig,
  workTree: string,
  home: string | undefined,
): Promise<ExecTarget[]> {
  const bases = [workTree];
  for (const e of config.entries) {
    if (e.key === "core.worktree" && e.value) {
      const p = expandHome(e.value, home);
      if (p) bases.push((await physicalPath(dirname(e.file), p)).path);
    }
  }
  const out: ExecTarget[] = [];
  for (const f of config.files) {
    if (f.scope !== "include" || !f.from || !f.key) continue;
    const key = f.key.startsWith("includeif.") ? "includeIf.*.path" : "include.path";
    out.push(includeTarget(f, f.from, key));
  }
  for (const e of config.entries) {
    const row = execKeyOf(e.key);
    if (!row || (row.applies && !row.applies(e.value))) continue;
    if (row.key === "core.worktree") continue; // the work tree itself: its hooks are covered above
    out.push(...await targetsOf(e, row, bases, home));
  }
  return out;
}
