/**
 * The index of the workspace's own repository when commands may write it
 * (`--git-writable`): after each command, and once more when the session
 * ends, it is read (`git_index.ts`), and one holding a path git's
 * `verify_path` refuses (`.git/hooks/pre-commit`, `sub/.git/config`), which
 * the user's next `git checkout -- .` or `git restore .` would write into
 * the git directory, is renamed to `index-disarmed-by-penguin` (attack round
 * 19 concgit, R2). git then finds no index: the user's next `git status`
 * shows every file as staged for removal and untracked, until they look at it and
 * run `git reset` (or rename it back). Each rename is told when the session
 * ends; one that fails refuses every later command of the process until the
 * index is fixed, and makes the session's exit status 1.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { existsNow } from "./_look.ts";
import { indexProblem } from "./git_index.ts";
import { renameAside } from "./git_nested.ts";
import { noteSessionEnd } from "./session_end_report.ts";

/** The git directories whose index commands of this process could write. */
const watched = new Set<string>();

/** Indexes found refused that penguin could not rename, with why and the error. */
const stuck = new Map<string, { why: string; error: string }>();

/** Watch the indexes of `gitDirs` (writable to commands) until the session ends. */
export function watchOwnIndexes(gitDirs: readonly string[]): void {
  for (const dir of gitDirs) watched.add(dir);
}

/**
 * Rename the index of `gitDir` aside when it holds a path git refuses; tell
 * it at the session's end. Never rejects: a failed rename is kept for
 * {@linkcode undisarmedIndex}.
 */
async function disarmIndex(gitDir: string): Promise<void> {
  const why = indexProblem(gitDir);
  const index = join(gitDir, "index");
  if (why === undefined) {
    stuck.delete(index);
    return;
  }
  try {
    const to = await renameAside(index);
    stuck.delete(index);
    noteSessionEnd(
      `[penguin] renamed "${index}" to "${to}": ${why}, and the host's git checkout or restore ` +
        `would write it into the git directory (a hook it would run). Look at it before you ` +
        `rename it back; "git reset" makes a new index from HEAD`,
      false,
    );
  } catch (err) {
    if (!existsNow(index)) {
      stuck.delete(index);
      return;
    }
    stuck.set(index, { why, error: err instanceof Error ? err.message : String(err) });
  }
}

/**
 * After a command: disarm the index of each of `gitDirs` (the workspace's
 * own git directories, when commands may write them) that holds a path git
 * refuses.
 */
export async function disarmOwnIndexes(gitDirs: readonly string[]): Promise<void> {
  watchOwnIndexes(gitDirs);
  for (const dir of gitDirs) await disarmIndex(dir);
}

/**
 * Why no command may start: an index a command made that penguin could not
 * rename aside and that still holds a refused path (tried again now), or
 * undefined.
 */
export async function undisarmedIndex(): Promise<string | undefined> {
  for (const index of [...stuck.keys()]) await disarmIndex(dirname(index));
  for (const [index, s] of stuck) {
    return `the index "${index}" that a command wrote would make the host's git checkout write ` +
      `into the git directory (${s.why}), and penguin could not rename it aside (${s.error}). ` +
      `No command runs until it is fixed: remove or rename "${index}", or fix the ` +
      `permissions of its directory so penguin can rename it`;
  }
  return undefined;
}

/**
 * At the end of a session: check every watched index once more (a file tool
 * or a background command may have written it since), and tell what could
 * not be renamed.
 */
export async function endOwnIndexWatch(): Promise<void> {
  for (const dir of watched) await disarmIndex(dir);
  for (const [index, s] of stuck) {
    noteSessionEnd(
      `[penguin] "${index}" holds a path the host's git checkout would write into the git ` +
        `directory (${s.why}), and penguin could not rename it aside (${s.error}): remove or ` +
        `rename it before you run git there`,
      true,
    );
  }
}
