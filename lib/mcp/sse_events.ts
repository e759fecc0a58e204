/**
 * Splitting a server-sent-events stream into events, with a bound on an
 * event's size that holds before the event is whole: an event past the
 * bound is never assembled. Lines end at `\r\n`, `\n` or a lone `\r`, as
 * the SSE format says, so an event seen here is the event a standard
 * parser would see when it is given {@linkcode SseEvent.lines} joined by
 * `\n`; comment lines (`:…`) are left out.
 *
 * @module
 */

/** One event: its field lines as they came, and the data they carry. */
export interface SseEvent {
  /** The event's lines (fields such as `data: …`, `id: …`), without comments or ends of line. */
  lines: string[];
  /** Its `data` fields' values joined by `\n` (empty when it has none). */
  data: string;
}

/** What {@linkcode boundedSseEvents} calls. */
export interface SseEventHandlers {
  /** A whole event (ended by an empty line). */
  onEvent(event: SseEvent): void;
  /** The event under way grew past the bound; nothing more is read after this. */
  onTooLong(): void;
}

/** The value of a `data` line (`data: x`, `data:x`, `data`), or undefined for any other line. */
function dataValue(line: string): string | undefined {
  if (line === "data") return "";
  if (!line.startsWith("data:")) return undefined;
  return line.startsWith("data: ") ? line.slice(6) : line.slice(5);
}

/**
 * A receiver of decoded text chunks that calls `onEvent` for each whole
 * event and, once an event's lines (with their ends of line) exceed
 * `maxChars` characters, `onTooLong` (once), then ignores the rest.
 * An event the stream ends in the middle of is dropped, as the format says.
 */
export function boundedSseEvents(
  maxChars: number,
  handlers: SseEventHandlers,
): (chunk: string) => void {
  let partial: string[] = [];
  let partialChars = 0;
  let lines: string[] = [];
  let eventChars = 0;
  let afterCr = false;
  let stopped = false;
  const ends = /[\r\n]/g;

  function line(text: string): void {
    if (text === "") {
      if (lines.length === 0) return;
      const data = lines.map(dataValue).filter((v) => v !== undefined).join("\n");
      const event = { lines, data };
      lines = [];
      eventChars = 0;
      handlers.onEvent(event);
    } else if (!text.startsWith(":")) {
      lines.push(text);
      eventChars += text.length + 1;
    }
  }

  return (chunk: string) => {
    if (chunk === "") return;
    let from = afterCr && chunk.startsWith("\n") ? 1 : 0;
    afterCr = false;
    while (!stopped) {
      ends.lastIndex = from;
      const end = ends.exec(chunk)?.index ?? -1;
      const piece = end < 0 ? chunk.slice(from) : chunk.slice(from, end);
      if (eventChars + partialChars + piece.length > maxChars) {
        stopped = true;
        partial = [];
        lines = [];
        handlers.onTooLong();
        return;
      }
      if (end < 0) {
        if (piece !== "") partial.push(piece);
        partialChars += piece.length;
        return;
      }
      partial.push(piece);
      const text = partial.join("");
      partial = [];
      partialChars = 0;
      from = end + 1;
      if (chunk[end] === "\r") {
        if (from === chunk.length) afterCr = true;
        else if (chunk[from] === "\n") from++;
      }
      line(text);
    }
  };
}
