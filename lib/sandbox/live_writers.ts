/**
 * A refusal for host-side work that reads a tree file by file (`skills install` of a directory,
 * `agent snapshot`) while a running penguin's commands may write that tree: a command swapping a
 * file or directory for a link to a secret between penguin's look and its read had the secret
 * copied where the model reads it (attack round 28 g12: `skills install`, the user's SSH key in
 * the skill; g13: `agent snapshot` of a memory directory, the key in the archive).
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";
import { liveWritersOf } from "./_live_roots.ts";

/**
 * Throw a runtime PenguinError `<what>: ...` naming the running penguin processes whose commands
 * may write `path` or anything in it; return when there is none.
 */
export async function refuseWhereCommandsWrite(path: string, what: string): Promise<void> {
  const writers = await liveWritersOf(path);
  if (writers.length === 0) return;
  const pids = [...new Set(writers.map((w) => w.pid))].join(", ");
  throw new PenguinError(
    "runtime",
    `${what}: a running penguin (pid ${pids}) lets its commands write "${path}" or what it ` +
      "holds, and a command could swap a file for a link to one of your secrets while penguin " +
      "reads it; end that session (or wait for it to end) and try again",
  );
}
