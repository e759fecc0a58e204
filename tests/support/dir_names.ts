/**
 * Listing a directory for an assertion: the names in it, sorted, so a test compares them as a
 * list.
 *
 * @module
 */

/** The names in `dir` (not recursive), sorted. */
export async function dirNames(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  return names.sort();
}
