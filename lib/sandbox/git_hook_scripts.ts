/**
 * Hooks the user's git may run from a repository's work tree, and the project
 * files those hooks run: both are targets of the git guard
 * (`git_config_guard.ts`), read-only to the model.
 *
 * - Conventional hook directories ({@linkcode CONVENTIONAL_HOOK_DIRS}) at the
 *   top of a repository, whatever the configuration penguin can see says: the
 *   user's later shell may have a `core.hooksPath` (another `$HOME`, `-c`)
 *   that penguin's environment does not, and these are the names such a
 *   setting uses. A missing one is held by a stand-in like any other missing
 *   target.
 * - The files an existing hook names directly as a path: every word of a
 *   hook's text (comments too) that names an existing regular file, taken
 *   from the top of the work tree, where git runs hooks (`./scripts/lint.sh`,
 *   `sh scripts/check.sh`, `node tools/pre-commit.js`). A path through a
 *   symbolic link, a path built from a variable (`$(dirname "$0")/x`) and the
 *   files those files run in turn are not followed; nor is the project's
 *   tooling that a hook runs indirectly (`npm test`, `make`, `npx
 *   lint-staged`), which is the project's own code.
 * - A hook file that is a symbolic link (`.git/hooks/pre-commit ->
 *   ../../scripts/pre-commit.sh`): git runs the file it leads to, the
 *   link's final target, held like a missing file while it dangles. A second
 *   link on the way, or a link among its directories, inside a writable root
 *   is reported in the target's `links` (the sandbox refuses it).
 * - The modules a hook runs with `python -m <module>` (`python3 -m
 *   tools.lint`, the pre-commit framework's `"$INSTALL_PYTHON" -mpre_commit`):
 *   python imports them from the work tree, the hook's directory, first; their
 *   names there ({@linkcode pythonModuleNames}) are targets like those of a
 *   configured `python -m` command. A word that is a variable counts as an
 *   interpreter here.
 *
 * @module
 */
import { dirname, isAbsolute, join } from "node:path";
import { readUpTo } from "../state/_fs.ts";
import {
  commandWords,
  type ExecTarget,
  pythonModuleNames,
  pythonModules,
} from "./git_exec_keys.ts";
import { physicalPath } from "./git_path.ts";
import { listDirNow, lstatOrNone, statOrNone } from "./_look.ts";

/**
 * Directories at the top of a repository that hold hooks by convention (husky, pre-commit setups).
 * Only hidden names: a missing one is held by a stand-in while a session runs, and an empty visible
 * directory appearing in the user's project would be clutter.
 */
export const CONVENTIONAL_HOOK_DIRS: readonly string[] = [
  ".githooks",
  ".husky",
  ".hooks",
  ".git-hooks",
];

/** The key conventional hook directories are reported under. */
export const CONVENTIONAL_KEY = "core.hooksPath";

/** The most files read in one hooks directory. */
const MAX_HOOK_FILES = 64;
/** A hook file larger than this is not read. */
const MAX_HOOK_BYTES = 256 * 1024;

/** The conventional hook directories at the top of the work tree `top`, as targets. */
export function conventionalHookTargets(top: string): ExecTarget[] {
  return CONVENTIONAL_HOOK_DIRS.map((name) => ({
    path: join(top, name),
    key: CONVENTIONAL_KEY,
    value: name,
    file: join(top, ".git"),
    use: "run",
    missing: "dir",
    why: `a hooks directory by convention: core.hooksPath = ${name} in a configuration ` +
      `penguin cannot see`,
  }));
}

/** The text of the regular file `path` when it is at most {@linkcode MAX_HOOK_BYTES}. */
async function hookText(path: string): Promise<string | undefined> {
  const info = statOrNone(path);
  if (!info?.isFile || info.size > MAX_HOOK_BYTES) return undefined;
  const bytes = await readUpTo(path, MAX_HOOK_BYTES).catch(() => undefined);
  return bytes && new TextDecoder().decode(bytes);
}

/**
 * The hook files of the directory `dir` (not `.sample`), at most `limit`
 * (by name): {@linkcode MAX_HOOK_FILES} for those whose text is read.
 */
function hookFiles(dir: string, limit = MAX_HOOK_FILES): string[] {
  let entries: Deno.DirEntry[];
  try {
    entries = listDirNow(dir);
  } catch {
    return [];
  }
  return entries.filter((e) => !e.name.endsWith(".sample")).map((e) => join(dir, e.name))
    .sort().slice(0, limit);
}

/**
 * The existing regular files that the hooks in `hookDirs` name as a path,
 * resolved from the work tree `top` (absolute paths as they are), without a
 * symbolic link on the way. Only those inside `writable` count.
 */
export async function hookNamedTargets(
  top: string,
  hookDirs: readonly string[],
  writable: (path: string) => boolean,
): Promise<ExecTarget[]> {
  const out: ExecTarget[] = [];
  const seen = new Set<string>();
  for (const dir of new Set(hookDirs)) {
    for (const hook of hookFiles(dir)) {
      const text = await hookText(hook);
      if (text === undefined) continue;
      for (const word of new Set(commandWords(text))) {
        if (word.startsWith("~") || word.includes("\0")) continue;
        const { path, links, via } = physicalPath(top, word);
        if (links.length > 0 || seen.has(path) || !writable(path)) continue;
        if (path === top || !isAbsolute(path) || statOrNone(path)?.isFile !== true) continue;
        seen.add(path);
        out.push({
          path,
          key: "hook",
          value: word,
          file: hook,
          use: "run",
          missing: "file",
          ifExists: true,
          ...(via.length ? { via } : {}),
          why: `the hook ${hook} runs ${word}`,
        });
      }
      out.push(...hookModuleTargets(top, hook, text));
    }
  }
  return out;
}

/** The most links followed from a hook file, as Linux's ELOOP limit. */
const MAX_LINKS = 40;

/**
 * The files git runs for the hooks in `hookDirs` that are symbolic links:
 * each one's final target, resolved link by link as the kernel does. A
 * dangling one is a missing file. The hook's own link lies in its hooks
 * directory, read-only on its own; the links after it are in `links`.
 * Every hook counts, however many the directory holds: git runs these
 * files itself (only reading hooks' text stops at {@linkcode MAX_HOOK_FILES}).
 */
export function hookLinkTargets(hookDirs: readonly string[]): ExecTarget[] {
  const out: ExecTarget[] = [];
  for (const dir of new Set(hookDirs)) {
    for (const hook of hookFiles(dir, Infinity)) {
      if (lstatOrNone(hook)?.isSymlink !== true) continue;
      const links: string[] = [];
      const via: string[] = [];
      let cur = hook;
      for (let i = 0; i < MAX_LINKS && lstatOrNone(cur)?.isSymlink; i++) {
        if (cur !== hook) links.push(cur);
        let text: string;
        try {
          text = Deno.readLinkSync(cur);
        } catch {
          break;
        }
        const next = physicalPath(dirname(cur), text);
        links.push(...next.links.filter((l) => l !== next.path));
        via.push(...next.via);
        cur = next.path;
      }
      out.push({
        path: cur,
        key: "hook",
        value: hook,
        file: hook,
        use: "run",
        missing: "file",
        ...(links.length ? { links } : {}),
        ...(via.length ? { via } : {}),
        why: `the hook ${hook} is a symbolic link to it`,
      });
    }
  }
  return out;
}

/** A shell variable word (`$PY`, `${PY}`), taken for an interpreter's name. */
const VARIABLE_WORD = /(^|[\s;|&()<>`'"!])\$\{?[A-Za-z_]\w*\}?(?=[\s;|&()<>`'"!]|$)/gm;

/**
 * The work-tree names of the modules the hook `hook` (text `text`) runs
 * with `python -m <module>`, from the work tree `top`, where git runs hooks.
 */
function hookModuleTargets(top: string, hook: string, text: string): ExecTarget[] {
  const out: ExecTarget[] = [];
  for (const mod of new Set(pythonModules(text.replace(VARIABLE_WORD, "$1python")))) {
    for (const name of pythonModuleNames(mod)) {
      const { path, links, via } = physicalPath(top, name);
      out.push({
        path,
        key: "hook",
        value: `python -m ${mod}`,
        file: hook,
        use: "run",
        missing: "dir",
        ...(links.length ? { links } : {}),
        ...(via.length ? { via } : {}),
        why: `the hook ${hook} runs python -m ${mod}, which imports ${name} from the work tree`,
      });
    }
  }
  return out;
}
