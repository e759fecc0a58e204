/**
 * Path confinement for the file tools: one function, {@linkcode resolveWorkspacePath},
 * decides whether a path the model gave may be touched, and returns the real
 * path to do the I/O on.
 *
 * Deno's path permissions do not resolve symlinks (a granted directory holding
 * a link to `/etc` grants `/etc` through it), so the check is ours: the path
 * is resolved against the workspace, every symlink in it is resolved
 * (`Deno.realPath`, or the nearest existing ancestor plus the remaining
 * segments for a path that does not exist yet, following a dangling final
 * link by hand), and the result must lie inside the real path of the
 * workspace, the session scratchpad or one of the sandbox's revealed
 * writable directories (the agent's memory and shared_env directories, which the command
 * sandbox binds writable as well: one list decides for both), or, for
 * reading only, inside one of the read-only roots (the agent's installed
 * skills). `..`, absolute paths, symlinks and `/proc/self/{root,cwd,…}` are
 * all judged by where they really lead.
 *
 * Hard links: a file with more than one name (`lstat` of the real path,
 * only when `nlink > 1`) is checked by identity against the files penguin
 * protects outside the roots (`lib/sandbox/protected_ids.ts`, resolved by
 * the host and passed to the confined workers as `protectedFiles`): the
 * other name of a secret (`~/.ssh/id_ed25519`) is refused for any use, of a
 * kept file (`~/.bashrc`, git configuration, hooks, the home's programs) for
 * writes. `write_file` and `edit_file` never write through a hard link of
 * any file: `writeFileAtomic` writes a new file and renames it over the
 * name, which replaces that name and leaves the file's other names as they
 * were.
 *
 * Limits, by design: a hard link inside the workspace to an outside file
 * penguin does not protect is an ordinary file to the file tools, and the
 * protected files are looked up once per process (bounded as in
 * `_protected_files.ts`). A check-then-use race remains against a
 * concurrent process swapping a directory for a symlink or a file for a
 * link; using the real path for the I/O shrinks it, and a swapped-in link is
 * replaced by the rename, not written through.
 *
 * @module
 */
import { isInside } from "../sandbox/plan.ts";
import { findGitLayout, type GitAccess, gitWriteRefusal } from "../sandbox/git_guard.ts";
import { nestedRepoRefusal } from "../sandbox/git_nested.ts";
import { otherRunDirs } from "../sandbox/_standin_registry.ts";
import { type ProtectedFileId, protectedFileIds } from "../sandbox/protected_ids.ts";
import { isCredentialFileName, MAX_DIR_DEPTH } from "../sandbox/_toolchain_creds.ts";
import {
  type ExecTarget,
  gitConfigRefusal,
  gitConfigTargets,
} from "../sandbox/git_config_guard.ts";
import { basename, dirname, join, resolve } from "node:path";
import { errorMessage } from "../protocol/errors.ts";
import { type StartupFacts, startupFacts, startupRefusal } from "./_startup_refusal.ts";
import { xdgConfigHomes } from "../sandbox/_xdg_config.ts";
import { HOME_SECRET_PATTERNS, HOME_SECRETS } from "../sandbox/policy.ts";
import {
  HOME_READABLE_DEFAULTS,
  SEALED_DIRS,
  SEALED_SHOWN,
  sealedHomes,
  secretPatternCovers,
  TOOLCHAIN_PATHS,
} from "../sandbox/home.ts";

/**
 * Whether `real` lies in penguin's run state (the stand-in registry of
 * `lib/sandbox/_standin_registry.ts`: `~/.penguin/run`, or
 * `/tmp/penguin-<uid>` without a home), which a workspace of `$HOME` or
 * `/tmp` contains, or in another penguin's `PENGUIN_RUN_DIR` (`others`).
 */
function isPenguinRunState(real: string, others: readonly string[]): boolean {
  if (/^\/tmp\/penguin-\d+(\/|$)/.test(real)) return true;
  if (others.some((dir) => isInside(real, dir))) return true;
  let home: string | undefined;
  try {
    home = Deno.env.get("HOME");
  } catch {
    home = undefined;
  }
  let override: string | undefined;
  try {
    override = Deno.env.get("PENGUIN_RUN_DIR");
  } catch {
    override = undefined;
  }
  if (override !== undefined && override.startsWith("/") && isInside(real, override)) return true;
  return home !== undefined && home.startsWith("/") &&
    isInside(real, join(home, ".penguin", "run"));
}

/** Basenames the file tools refuse anywhere (lower-cased comparison). */
export const SECRET_BASENAMES: readonly string[] = [".project_config.toml", ".vault.toml"];

/**
 * Workspace paths the file tools never write besides the git directory,
 * whose rule (`lib/sandbox/git_guard.ts`) is shared with the command
 * sandbox; the sandbox mounts these read-only too.
 */
export const PROTECTED_WRITE_PATHS: readonly string[] = ["penguin.jsonc"];

/** Why each protected path is protected. */
const PROTECTED_WHY: Record<string, string> = {
  "penguin.jsonc": "it is the workspace's confinement policy",
};

/** The directories file tools may reach (real paths preferred; they are re-resolved anyway). */
export interface PathRoots {
  /** The session's workspace. */
  workspace: string;
  /** The session scratchpad; may not exist yet. */
  scratchpad?: string | undefined;
  /** Directories that may be read and never written (the agent's skills); missing ones are skipped. */
  readOnlyRoots?: string[] | undefined;
  /**
   * The command sandbox's policy, for its git access (`sandbox.git`); absent
   * or without it, the git directory is read-only.
   */
  sandbox?: { git?: GitAccess; revealWritable?: readonly string[] };
  /** The git access when no sandbox policy is at hand (a confined worker); `sandbox.git` wins. */
  git?: GitAccess;
  /**
   * More directories the file tools may read and write (the sandbox
   * policy's `revealWritable`: the agent's memory directories), when no
   * sandbox policy is at hand; `sandbox.revealWritable` wins.
   */
  revealWritable?: readonly string[];
  /** The user's home directory (default `$HOME`), for the home rule of `lib/sandbox/home.ts`. */
  home?: string | undefined;
  /**
   * What git's configuration makes read-only, as the host resolved it (a
   * confined worker cannot read the user's global git configuration); added
   * to what is resolved here.
   */
  gitTargets?: readonly ExecTarget[];
  /**
   * The run directories other penguin processes keep (`PENGUIN_RUN_DIR`),
   * as the host found them (a confined worker cannot read their list);
   * absent: looked up here.
   */
  runDirs?: readonly string[];
  /**
   * The files penguin protects outside the roots that have other names (hard
   * links), by identity, as the host found them (a confined worker cannot
   * read the home); absent: looked up here.
   */
  protectedFiles?: readonly ProtectedFileId[];
  /**
   * What the home's startup files source or name, and where each leads, as
   * the host found them (a confined worker cannot read the home); absent:
   * looked up here.
   */
  startupFacts?: StartupFacts;
}

/** A path that passed confinement. */
export interface ResolvedPath {
  /** The path as the model gave it. */
  input: string;
  /** Absolute lexical path (resolved against the workspace, `..` normalised, links not followed). */
  path: string;
  /** Real path: every symlink resolved; for a missing file, its real parent plus the rest. Do I/O here. */
  real: string;
  /**
   * Which root contains `real` (`shared`: a revealed writable directory: memory, shared_env;
   * `read-only`: one of the read-only roots, for a read).
   */
  root: "workspace" | "scratchpad" | "shared" | "read-only";
  /** Real path of that root. */
  rootReal: string;
  /** Whether the lexical path's last component is a symlink (its target was checked). */
  viaSymlink: boolean;
}

/** The outcome of {@linkcode resolveWorkspacePath}: a confined path or the refusal to show the model. */
export type PathResolution = ({ ok: true } & ResolvedPath) | { ok: false; message: string };

const MAX_LINK_HOPS = 40;

/** What the file tools can reach, for refusals. */
function reach(memory: boolean): string {
  return memory
    ? "the workspace, the session scratchpad and the agent's memory and shared_env directories"
    : "the workspace and the session scratchpad";
}

class LinkLoop extends Error {}

function isMissing(err: unknown): boolean {
  return err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory;
}

/**
 * The real path of `path`, which need not exist: resolved by the OS when it
 * does; otherwise the real path of its parent plus the last segment, with a
 * dangling symlink followed to its (missing) target.
 */
export async function realPathOf(path: string, hops = 0): Promise<string> {
  if (hops > MAX_LINK_HOPS) throw new LinkLoop(`too many levels of symbolic links at "${path}"`);
  try {
    return await Deno.realPath(path);
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
  const parent = dirname(path);
  if (parent === path) return path; // the filesystem root always resolves; defensive
  const realParent = await realPathOf(parent, hops);
  let info: Deno.FileInfo | undefined;
  try {
    info = await Deno.lstat(path);
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
  if (info?.isSymlink) {
    const target = await Deno.readLink(path);
    return realPathOf(resolve(realParent, target), hops + 1);
  }
  return join(realParent, basename(path));
}

/** True when `path` is `root` or lies under it (the sandbox's own containment test). */
export { isInside };

function secretHit(...paths: string[]): string | undefined {
  for (const p of paths) {
    const name = basename(p).toLowerCase();
    if (SECRET_BASENAMES.includes(name)) return name;
  }
  return undefined;
}

/** The refusal of a path that resolves to `where`, outside the roots. */
function outsideRefusal(
  input: string,
  where: string,
  wsReal: string,
  memoryDirs: readonly string[],
): PathResolution {
  return {
    ok: false,
    message:
      `Path "${input}" resolves to "${where}", outside the workspace "${wsReal}"; file tools can only reach ${
        reach(memoryDirs.length > 0)
      }.`,
  };
}

/** The real paths of a path and of the roots it is checked against. */
interface RealPaths {
  real: string;
  wsReal: string;
  spReal: string | undefined;
  readOnly: string[];
  memReal: string[];
  viaSymlink: boolean;
}

/** Resolve the real paths of `path` and its roots; a refusal when they cannot be resolved. */
async function realPathsOf(
  input: string,
  path: string,
  roots: PathRoots,
  memoryDirs: readonly string[],
): Promise<RealPaths | PathResolution> {
  let real: string;
  let wsReal: string;
  let spReal: string | undefined;
  const readOnly: string[] = [];
  const memReal: string[] = [];
  let viaSymlink = false;
  try {
    wsReal = await realPathOf(roots.workspace);
    spReal = roots.scratchpad === undefined ? undefined : await realPathOf(roots.scratchpad);
    for (const dir of memoryDirs) {
      memReal.push(await realPathOf(dir));
    }
    real = await realPathOf(path);
    viaSymlink = (await Deno.lstat(path).catch(() => undefined))?.isSymlink === true;
    for (const dir of roots.readOnlyRoots ?? []) {
      // Only existing roots count (a missing skills directory is no root at all).
      const r = await Deno.realPath(dir).catch(() => undefined);
      if (r !== undefined) readOnly.push(r);
    }
  } catch (err) {
    // In the confined tool worker (lib/tools/worker) a path outside the roots
    // cannot even be resolved: it is outside, reported by its lexical form.
    if (!(err instanceof Deno.errors.NotCapable)) {
      return { ok: false, message: `Cannot resolve "${input}": ${errorMessage(err)}.` };
    }
    const ws = await realPathOf(roots.workspace).catch(() => roots.workspace);
    if (!isInside(path, ws)) return outsideRefusal(input, path, ws, memoryDirs);
    return {
      ok: false,
      message:
        `Path "${input}" leads outside the workspace "${ws}" through a symbolic link; file tools can only reach ${
          reach(memoryDirs.length > 0)
        }.`,
    };
  }
  return { real, wsReal, spReal, readOnly, memReal, viaSymlink };
}

/** Why a change to `real` in the workspace is refused (protected paths, git, nested repos), if it is. */
async function workspaceWriteRefusal(
  input: string,
  path: string,
  real: string,
  wsReal: string,
  roots: PathRoots,
  verb: "read" | "write" | "edit",
): Promise<PathResolution | undefined> {
  const hit = PROTECTED_WRITE_PATHS.find((rel) =>
    isInside(real.toLowerCase(), join(wsReal, rel).toLowerCase())
  );
  if (hit) {
    return {
      ok: false,
      message: `Refusing to ${verb} "${input}": ${hit} is protected (${
        PROTECTED_WHY[hit]
      }); commands cannot change it either.`,
    };
  }
  const access = roots.sandbox?.git ?? roots.git ?? "read-only";
  const layout = await findGitLayout(wsReal).catch(() => undefined);
  let why = layout
    ? gitWriteRefusal(real, layout, access)
    : `the workspace's git layout cannot be read`;
  if (!why && layout) {
    // What git's configuration runs or loads (hooks directories, included files, programs).
    const own = await gitConfigTargets(wsReal, layout, access).catch(() => undefined);
    why = own
      ? gitConfigRefusal(path, real, wsReal, [...(roots.gitTargets ?? []), ...own])
      : `the workspace's git configuration cannot be read`;
  }
  why ??= await nestedRepoRefusal(real, wsReal);
  if (why) return { ok: false, message: `Refusing to ${verb} "${input}": ${why}.` };
  return undefined;
}

/**
 * Resolve a model-given path for a file tool. `verb` words the refusals
 * (`Refusing to read "<p>"`). Relative paths resolve against the workspace;
 * absolute paths are allowed when they really land inside the workspace or
 * the session scratchpad. Secret basenames are refused everywhere.
 */
export async function resolveWorkspacePath(
  input: string,
  roots: PathRoots,
  verb: "read" | "write" | "edit" = "read",
): Promise<PathResolution> {
  // Long because: one path check in its order (NUL, lexical resolution, real paths of the path and
  // its roots, then the scratchpad, secret and git rules); the refusals share the resolved paths.
  if (input.includes("\0")) {
    return { ok: false, message: `Path "${input}" contains a NUL character.` };
  }
  const path = resolve(roots.workspace, input);
  const refuseSecret = (name: string): PathResolution => ({
    ok: false,
    message:
      `Refusing to ${verb} "${input}": ${name} holds the user's secrets and must never enter the conversation.`,
  });
  const memoryDirs = roots.sandbox?.revealWritable ?? roots.revealWritable ?? [];
  const lexicalSecret = secretHit(path);
  if (lexicalSecret) return refuseSecret(lexicalSecret);

  const paths = await realPathsOf(input, path, roots, memoryDirs);
  if ("ok" in paths) return paths;
  const { real, wsReal, spReal, readOnly, memReal, viaSymlink } = paths;
  const realSecret = secretHit(real);
  if (realSecret) return refuseSecret(realSecret);
  if (isPenguinRunState(real, roots.runDirs ?? await otherRunDirs())) {
    return {
      ok: false,
      message:
        `Refusing to ${verb} "${input}": it holds penguin's records of the sandbox's stand-ins, ` +
        `which decide what penguin removes from the workspace; no tool or command may reach them.`,
    };
  }

  const other = await otherNameRefusal(
    real,
    [wsReal, ...spReal ? [spReal] : [], ...memReal],
    roots,
    verb,
  );
  if (other) return { ok: false, message: `Refusing to ${verb} "${input}": ${other}.` };

  const memRoot = memReal.find((dir) => isInside(real, dir));
  const root = isInside(real, wsReal)
    ? "workspace"
    : spReal && isInside(real, spReal)
    ? "scratchpad"
    : memRoot !== undefined
    ? "shared"
    : undefined;
  const readOnlyRoot = root ? undefined : readOnly.find((r) => isInside(real, r));
  if (readOnlyRoot !== undefined) {
    if (verb !== "read") {
      return {
        ok: false,
        message:
          `Refusing to ${verb} "${input}": it lies in "${readOnlyRoot}", which the file tools can read ` +
          `but never change; copy what you need into the workspace and change it there.`,
      };
    }
    return {
      ok: true,
      input,
      path,
      real,
      root: "read-only",
      rootReal: readOnlyRoot,
      viaSymlink,
    };
  }
  if (!root) return outsideRefusal(input, real, wsReal, memoryDirs);
  if (root === "workspace") {
    const why = await homeRefusal(real, wsReal, roots, verb);
    if (why) return { ok: false, message: `Refusing to ${verb} "${input}": ${why}.` };
  }
  if (verb !== "read" && root === "workspace") {
    const refused = await workspaceWriteRefusal(input, path, real, wsReal, roots, verb);
    if (refused) return refused;
  }
  return {
    ok: true,
    input,
    path,
    real,
    root,
    rootReal: root === "workspace" ? wsReal : root === "scratchpad" ? spReal! : memRoot!,
    viaSymlink,
  };
}

/**
 * Why `real` is refused as another name (a hard link) of a file penguin
 * protects outside the roots (`lib/sandbox/protected_ids.ts`), or undefined:
 * a secret's is never read nor written, a kept file's (a startup file, git
 * configuration, a hook, a program) never written. Only a file with more
 * than one name is looked at; `lstat` of the real path, so the identity is
 * the file's own.
 */
async function otherNameRefusal(
  real: string,
  rootsReal: readonly string[],
  roots: PathRoots,
  verb: "read" | "write" | "edit",
): Promise<string | undefined> {
  const info = await Deno.lstat(real).catch(() => undefined);
  if (!info?.isFile || (info.nlink ?? 1) < 2) return undefined;
  const known = roots.protectedFiles ?? await protectedFileIds({
    roots: rootsReal,
    home: roots.home ?? envHome(),
    pathDirs: (envVar("PATH") ?? "").split(":").filter((d) => d.startsWith("/")),
  });
  const hit = known.find((f) => f.dev === info.dev && f.ino === info.ino);
  if (hit === undefined || (hit.kind === "kept" && verb === "read")) return undefined;
  const name = `it is another name (a hard link) of "${hit.path}"`;
  return hit.kind === "secret"
    ? `${name}, which holds the user's secrets and must never enter the conversation`
    : `${name}, which penguin keeps read-only to the model (programs on this machine run or ` +
      `load it); a write here would change or unlink the user's file`;
}

/** A variable of the environment, or undefined where it cannot be read (a confined worker). */
function envVar(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/** `$HOME`, or undefined where the environment cannot be read (a confined worker). */
function envHome(): string | undefined {
  try {
    return Deno.env.get("HOME");
  } catch {
    return undefined;
  }
}

/** True when `rel` (a home-relative pattern, a last `*` matching any rest) covers `path` in `dir`. */
function covers(path: string, dir: string, rel: string): boolean {
  if (!rel.endsWith("*")) return isInside(path, join(dir, rel));
  const prefix = join(dir, rel.slice(0, -1));
  return path.startsWith(prefix) && !path.slice(prefix.length).includes("/..");
}

/**
 * Why the file tools refuse `real` under the home rule of the command
 * sandbox (`lib/sandbox/home.ts`), or undefined: in a home directory the
 * workspace is or holds, credentials are never read or written, and the top
 * level (startup files) and the directories programs load are not written.
 */
async function homeRefusal(
  real: string,
  wsReal: string,
  roots: PathRoots,
  verb: "read" | "write" | "edit",
): Promise<string | undefined> {
  const home = roots.home ?? envHome();
  const homes = (await sealedHomes([wsReal], wsReal, home).catch(() => [])).map((h) => h.dir);
  for (const dir of homes) {
    const secret = HOME_SECRETS.find((rel) => isInside(real, join(dir, rel))) ??
      HOME_SECRET_PATTERNS.find((pattern) => secretPatternCovers(real, dir, pattern));
    if (secret !== undefined) {
      return `${
        join(dir, secret)
      } holds the user's credentials and must never enter the conversation`;
    }
  }
  const shown = [...HOME_READABLE_DEFAULTS, ...SEALED_SHOWN];
  for (const dir of homes) {
    if (!isInside(real, dir) || real === dir) continue;
    const parts = real.slice(dir.length + (dir.endsWith("/") ? 0 : 1)).split("/");
    // A credential file by name in a shown toolchain (`~/.cache/pip/a/b/.netrc`), at any depth,
    // or in a directory so named in its top levels, as the command sandbox hides them.
    const toolchain = shown.find((rel) => covers(real, dir, rel));
    const top = toolchain === undefined ? 0 : toolchain.split("/").length;
    const credential = toolchain === undefined
      ? undefined
      : parts.find((part, i) =>
        i === parts.length - 1
          ? isCredentialFileName(part)
          : i >= top && i - top <= MAX_DIR_DEPTH && isCredentialFileName(part, true)
      );
    if (credential !== undefined) {
      return `${credential} in the home directory's toolchains holds the user's credentials and ` +
        `must never enter the conversation`;
    }
    const first = parts[0]!;
    if (!first.startsWith(".") || first === ".git") continue;
    if (!shown.some((rel) => covers(real, dir, rel))) {
      return `${join(dir, first)} in the home directory is the user's configuration, hidden ` +
        `from the model`;
    }
  }
  if (verb === "read") return undefined;
  // What the startup files source (`. ~/dotfiles/aliases.sh`) or name (`. <(cat ~/f)`) runs in
  // the user's next shell.
  const facts = roots.startupFacts ??
    await startupFacts(
      wsReal,
      [...new Set([...homes, ...(home ? [home] : [])])],
      homes,
      xdgConfigHomes(undefined, home),
    );
  const startup = startupRefusal(real, facts);
  if (startup !== undefined) return startup;
  for (const dir of homes) {
    if (
      dirname(real) === dir && (await Deno.lstat(real).catch(() => undefined))?.isDirectory !== true
    ) {
      return `it lies at the top of the home directory "${dir}", whose files (shell and git ` +
        `startup files, tool settings) are read-only to the model`;
    }
    const first = isInside(real, dir) && real !== dir
      ? real.slice(dir.length + 1).split("/")[0]!
      : "";
    // Every dot-entry of a sealed home is the user's configuration: shown read-only at most.
    const dotEntry = first.startsWith(".") && first !== ".git" ? first : undefined;
    const loaded = [...SEALED_DIRS, ...TOOLCHAIN_PATHS].find((rel) => covers(real, dir, rel)) ??
      dotEntry;
    if (loaded !== undefined) {
      return `${join(dir, loaded)} in the home directory is read-only to the model: programs on ` +
        `this machine run or load what it holds`;
    }
  }
  return undefined;
}
