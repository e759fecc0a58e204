/**
 * File helpers shared by the file tools: line counting, pluralising, and
 * the not-found test (atomic writes are `state/_fs.ts`'s `writeFileAtomic`).
 *
 * @module
 */

/** Lines as `cat -n` numbers them: a trailing newline ends the last line, it does not add one. */
export function contentLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** `1 line`, `2 lines`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** True for errors meaning "no such file" (including a file used as a directory). */
export function isNotFound(err: unknown): boolean {
  return err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory;
}
