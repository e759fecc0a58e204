/**
 * Splitting a server's output into lines, with a bound on a line's length
 * that holds before the line is whole: a line past the bound is never
 * assembled, so a server cannot make penguin hold (and then parse) an
 * answer of any size. Only the new chunk is searched for the end of line,
 * so a long line costs one pass over its characters, not one per chunk.
 *
 * @module
 */

/** What {@linkcode boundedLines} calls. */
export interface BoundedLinesHandlers {
  /** A whole line (without its `\n` or `\r\n`). */
  onLine(line: string): void;
  /** The line under way grew past the bound; nothing more is read after this. */
  onTooLong(): void;
}

/**
 * A receiver of output chunks that calls `onLine` for each whole line and,
 * once a line exceeds `maxChars` characters, `onTooLong` (once) and then
 * ignores the rest of the output. Returns the function to feed chunks to;
 * its `pending()` is the length of the line under way.
 */
export function boundedLines(
  maxChars: number,
  handlers: BoundedLinesHandlers,
): ((chunk: string) => void) & { pending(): number } {
  let parts: string[] = [];
  let pending = 0;
  let stopped = false;
  const feed = (chunk: string) => {
    let from = 0;
    while (!stopped) {
      const nl = chunk.indexOf("\n", from);
      const piece = nl < 0 ? chunk.slice(from) : chunk.slice(from, nl);
      if (pending + piece.length > maxChars) {
        stopped = true;
        parts = [];
        handlers.onTooLong();
        return;
      }
      if (nl < 0) {
        if (piece !== "") parts.push(piece);
        pending += piece.length;
        return;
      }
      parts.push(piece);
      const line = parts.join("").replace(/\r$/, "");
      parts = [];
      pending = 0;
      from = nl + 1;
      handlers.onLine(line);
    }
  };
  return Object.assign(feed, { pending: () => pending });
}
