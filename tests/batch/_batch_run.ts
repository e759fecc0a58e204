/**
 * `penguin batch run` of one task file in a temp dir, its peak memory measured: the run of the
 * tests of what a hostile task file costs.
 *
 * @module
 */
import { join } from "node:path";
import { runCliPeak } from "../support/peak_memory.ts";

/** What one {@linkcode batchRunPeak} gave. */
export interface BatchPeak {
  code: number;
  stderr: string;
  /** Peak memory of penguin, bytes. */
  peak: number;
}

/**
 * Write `text` as `name` in a temp dir named `prefix…` and run `penguin batch run` on it (data
 * root in the dir), SIGKILLing penguin after `killAfter` seconds; the dir is removed afterwards.
 */
export async function batchRunPeak(
  prefix: string,
  killAfter: number,
  name: string,
  text: string,
): Promise<BatchPeak> {
  const dir = await Deno.makeTempDir({ prefix });
  try {
    const file = join(dir, name);
    await Deno.writeTextFile(file, text);
    const r = await runCliPeak(["--root", join(dir, "root"), "batch", "run", file], dir, killAfter);
    return { code: r.code, stderr: r.stderr, peak: r.peakBytes };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
