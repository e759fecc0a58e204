/**
 * The PenguinHarness sample traces (shared/fixtures/penguin-traces): their
 * directory, whether this checkout has it, and its trace files.
 *
 * @module
 */
import { join } from "node:path";

/** The directory of the PenguinHarness sample traces. */
export const PENGUIN_TRACES: string =
  new URL("../../../shared/fixtures/penguin-traces/", import.meta.url).pathname;

/** Whether the sample traces are present (tests over them are ignored otherwise). */
export const penguinTracesPresent: boolean = (() => {
  try {
    return Deno.statSync(PENGUIN_TRACES).isDirectory;
  } catch {
    return false;
  }
})();

/** Every sample trace file (`.jsonl`), sorted; none when absent. */
export function penguinTraceFiles(): string[] {
  if (!penguinTracesPresent) return [];
  return [...Deno.readDirSync(PENGUIN_TRACES)].map((e) => e.name).filter((n) =>
    n.endsWith(".jsonl")
  ).sort().map((n) => join(PENGUIN_TRACES, n));
}
