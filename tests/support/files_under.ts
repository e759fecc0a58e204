/**
 * Every file under a directory, for tests that check what a command left on
 * disk (none when the directory does not exist).
 *
 * @module
 */
import { join } from "node:path";

/** Every file under `dir` at any depth, sorted; none when `dir` does not exist. */
export async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      const p = join(dir, e.name);
      if (e.isDirectory) out.push(...await filesUnder(p));
      else out.push(p);
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return out.sort();
}
