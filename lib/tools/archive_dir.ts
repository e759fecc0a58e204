/**
 * The scratchpad's directory where penguin saves a tool's long output whole
 * (`_archive.ts`), made safe before a session's first command.
 *
 * @module
 */
import { join } from "node:path";
import { TRUNCATED_OUTPUT_DIR } from "../state/paths.ts";

/**
 * Make the scratchpad's archive directory before a session's first command, replacing what a
 * command of an earlier session left at its name (a link, a file). Every sandbox shows it
 * read-only (lib/sandbox/plan.ts), so no command can swap it for a link while penguin creates
 * a file in it (attack round 26 A16: penguin's own process then created files, holding the
 * model's output, wherever the link led, `~/.bashrc.d` included).
 */
export async function prepareArchiveDir(scratchpad: string): Promise<void> {
  const dir = join(scratchpad, TRUNCATED_OUTPUT_DIR);
  const info = await Deno.lstat(dir).catch(() => undefined);
  if (info?.isDirectory) return;
  if (info !== undefined) await Deno.remove(dir); // a link is removed, not followed
  try {
    await Deno.mkdir(dir, { mode: 0o700 });
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
  }
}
