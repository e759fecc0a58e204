/**
 * Renaming an entry of the workspace aside (a disarmed `.git`, a link a
 * command made in `.git`) without following a link a command swapped in
 * on the way: a rename by absolute path resolves every directory above the
 * entry again, so a command running beside penguin that replaced `sub` by a
 * link to the user's other repository had penguin rename that repository's
 * `.git`, and one that replaced `.git/logs` by a link to `~/.ssh` had it
 * rename `authorized_keys` (attack round 19 concgit R4, R7).
 *
 * A bash started in the directory (`cd -P`, then the kernel's path of the
 * directory it entered, through a descriptor of it, checked against the one
 * penguin looked at: bash's own `$PWD` and `pwd -P` come from its look at
 * the name before its `chdir`, attack round 23 concgit) renames the entry
 * by its name alone:
 * the shell's working directory is the directory penguin checked, whatever
 * its path leads to afterwards.
 *
 * @module
 */
import { basename, dirname } from "node:path";
import { findBash } from "./_executables.ts";

const RENAME_IN_DIR = `cd -P -- "$1" 2>/dev/null || exit 3
exec 8<. || exit 3
cd -P /proc/self/fd/8 2>/dev/null && [ "$PWD" = "$1" ] || exit 4
exec 8<&-
{ [ -e "$2" ] || [ -L "$2" ]; } || exit 5
if [ "$4" = replace ]; then
  [ -d "$3" ] && [ ! -L "$3" ] && exit 6
  mv -f -T -- "$2" "$3" 2>/dev/null || exit 7
else
  { [ -e "$3" ] || [ -L "$3" ]; } && exit 6
  mv -n -T -- "$2" "$3" 2>/dev/null || exit 7
fi
{ [ -e "$2" ] || [ -L "$2" ]; } && exit 7
exit 0`;

const WHY: Record<number, string> = {
  3: "its directory is gone",
  4: "a link now lies on the way to its directory",
  5: "it is gone",
  6: "the new name is taken",
  7: "the rename failed",
};

/**
 * Rename `from` to `to`, both in one directory, by name within that
 * directory as it is now; rejects (saying why) when the directory's path no
 * longer leads to it, or the rename did not happen. `replace`: an existing
 * `to` (a file, or a link, which is replaced, not followed) gives way; a
 * directory never does.
 */
export async function renameInDir(
  from: string,
  to: string,
  opts: { replace?: boolean } = {},
): Promise<void> {
  const dir = dirname(from);
  if (dirname(to) !== dir) throw new Error(`"${from}" and "${to}" are not in one directory`);
  const bash = await findBash();
  if (bash === undefined) throw new Error(`cannot rename "${from}": no bash to do it safely`);
  const out = await new Deno.Command(bash, {
    args: [
      "--noprofile",
      "--norc",
      "-c",
      RENAME_IN_DIR,
      "bash",
      dir,
      basename(from),
      basename(to),
      opts.replace ? "replace" : "keep",
    ],
    clearEnv: true,
    env: { LC_ALL: "C", PATH: "/usr/bin:/bin" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
  if (out.code !== 0) {
    throw new Error(
      `cannot rename "${from}" to "${to}": ${WHY[out.code] ?? `bash exited ${out.code}`}`,
    );
  }
}
