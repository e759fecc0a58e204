/**
 * With `--git-writable` the workspace's own git directory is the commands'
 * to write, but for the entries that configure git (`git_guard.ts`): a
 * command could make `COMMIT_EDITMSG`, `FETCH_HEAD` or a reflog a link to a
 * file outside the workspace, which the user's next `git commit`, `git
 * fetch` or `git stash` writes through (`logs/refs/stash` → `~/.bashrc`:
 * the stash subject the model chose ran in the user's next shell, attack
 * round 19 concgit R4). So the links in it are taken before each command
 * (`plan.ts`), and every link found after it that was not there before is
 * renamed aside (`<name>-disarmed-by-penguin`) and said at the session end.
 * The user's own links stay.
 *
 * @module
 */
import { gitDirLinks } from "./_git_dir_traps.ts";
import { DISARMED_SUFFIX } from "./git_nested.ts";
import { existsNow } from "./_look.ts";
import { renameInDir } from "./pinned_rename.ts";
import { noteSessionEnd } from "./session_end_report.ts";

/** The workspace's own writable git directories and the links they held before a command. */
export interface OwnGitLinks {
  gitDirs: readonly string[];
  before: readonly string[];
}

/** The links of `gitDirs` now, to compare after a command. */
export function ownGitLinks(gitDirs: readonly string[]): OwnGitLinks {
  return { gitDirs: [...gitDirs], before: gitDirs.flatMap((d) => gitDirLinks(d).links) };
}

/**
 * After a command: rename aside every link of `own`'s git directories that
 * was not there before it; the renamed ones (`to` empty when neither renaming
 * nor removing it worked, said as a failure at the session end).
 */
export async function disarmOwnGitLinks(
  own: OwnGitLinks,
): Promise<{ from: string; to: string }[]> {
  const out: { from: string; to: string }[] = [];
  for (const dir of own.gitDirs) {
    const { links, over } = gitDirLinks(dir);
    if (over) {
      noteSessionEnd(
        `[penguin] could not look through "${dir}" for links a command made (too many entries); ` +
          `look for symbolic links in it before you run git there`,
        true,
      );
    }
    for (const from of links) {
      if (own.before.includes(from)) continue;
      const to = await renameAside(from);
      out.push({ from, to });
      noteSessionEnd(
        to === ""
          ? `[penguin] could not rename "${from}", a link a command made in your git directory, ` +
            `which your git would write through: remove it before you run git there`
          : `[penguin] renamed "${from}" to "${to}": a command made it a link in your git ` +
            `directory, which your git would write through to the file it leads to`,
        to === "",
      );
    }
  }
  return out;
}

/** Rename `path` to a free `<path>-disarmed-by-penguin[-n]` (never removed); its new name, "" when that failed. */
async function renameAside(path: string): Promise<string> {
  for (let n = 0; n < 100; n++) {
    const to = `${path}${DISARMED_SUFFIX}${n === 0 ? "" : `-${n}`}`;
    if (existsNow(to)) continue;
    try {
      // By name in its directory as it is now: a link swapped in above it is not followed
      // (removing or renaming by path once took the user's ~/.ssh/authorized_keys, round 20 R4).
      await renameInDir(path, to);
      return to;
    } catch {
      return "";
    }
  }
  return "";
}
