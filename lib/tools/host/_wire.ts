/**
 * The framing between penguin and its tool host: one message per line,
 * each line of the host's output starting with {@linkcode HOST_LINE_PREFIX}.
 * Anything else the host process prints (a runtime warning, a crash trace)
 * is not protocol and is kept only for error messages. The messages
 * themselves are the worker protocol's (`../worker/_protocol.ts`).
 *
 * @module
 */
import { jsonPieces } from "../../models/_json_body.ts";
import type { HostMessage, WorkerMessage } from "../worker/_protocol.ts";

/** Marks a protocol line on the host's output (record separator + tag). */
export const HOST_LINE_PREFIX = "\u001epenguin-tool-host:";

/**
 * Encode a host → penguin message as one line, in pieces of about 64 Ki
 * characters to write one after the other: a line holding an image (7 M
 * characters) is never built whole, nor its bytes.
 */
export function* encodeReply(m: WorkerMessage): Generator<string> {
  yield HOST_LINE_PREFIX;
  yield* jsonPieces(m);
  yield "\n";
}

/** Encode a penguin → host message as one line. */
export function encodeRequest(m: HostMessage): string {
  return `${JSON.stringify(m)}\n`;
}

/**
 * Splits a text stream into lines; `push` returns the complete lines seen so
 * far. A line arriving in many chunks is kept as its chunks and joined once
 * it ends: appending each chunk to the rest and splitting that again would
 * copy the whole line so far at every chunk (a 7 MB image line in 64 KiB
 * chunks made some 400 MB of garbage strings).
 */
export function lineSplitter(): { push(text: string): string[]; end(): string[] } {
  let parts: string[] = [];
  return {
    push(text) {
      const lines: string[] = [];
      let from = 0;
      for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", from)) {
        parts.push(text.slice(from, nl));
        lines.push(parts.length === 1 ? parts[0]! : parts.join(""));
        parts = [];
        from = nl + 1;
      }
      if (from < text.length) parts.push(from === 0 ? text : text.slice(from));
      return lines;
    },
    end() {
      const last = parts.join("");
      parts = [];
      return last === "" ? [] : [last];
    },
  };
}

/** A protocol reply from a host output line, or undefined for any other line. */
export function decodeReply(line: string): WorkerMessage | undefined {
  if (!line.startsWith(HOST_LINE_PREFIX)) return undefined;
  try {
    const m = JSON.parse(line.slice(HOST_LINE_PREFIX.length));
    return m && typeof m === "object" && typeof m.type === "string"
      ? m as WorkerMessage
      : undefined;
  } catch {
    return undefined;
  }
}

/** A request from an input line, or undefined when the line is not one. */
export function decodeRequest(line: string): HostMessage | undefined {
  try {
    const m = JSON.parse(line);
    if (!m || typeof m !== "object" || typeof m.id !== "number") return undefined;
    if (m.type === "run" && typeof m.tool === "string" && m.ctx && typeof m.args === "object") {
      return m as HostMessage;
    }
    if (m.type === "abort") return m as HostMessage;
    if (m.type === "claimed" && typeof m.ok === "boolean") return m as HostMessage;
    return undefined;
  } catch {
    return undefined;
  }
}
