/**
 * The framing between penguin and its tool host: one message per line,
 * each line of the host's output starting with {@linkcode HOST_LINE_PREFIX}.
 * Anything else the host process prints (a runtime warning, a crash trace)
 * is not protocol and is kept only for error messages. The messages
 * themselves are the worker protocol's (`../worker/_protocol.ts`).
 *
 * @module
 */
import type { HostMessage, WorkerMessage } from "../worker/_protocol.ts";

/** Marks a protocol line on the host's output (record separator + tag). */
export const HOST_LINE_PREFIX = "\u001epenguin-tool-host:";

/** Encode a host → penguin message as one line. */
export function encodeReply(m: WorkerMessage): string {
  return `${HOST_LINE_PREFIX}${JSON.stringify(m)}\n`;
}

/** Encode a penguin → host message as one line. */
export function encodeRequest(m: HostMessage): string {
  return `${JSON.stringify(m)}\n`;
}

/** Splits a text stream into lines; `push` returns the complete lines seen so far. */
export function lineSplitter(): { push(text: string): string[]; end(): string[] } {
  let rest = "";
  return {
    push(text) {
      rest += text;
      const parts = rest.split("\n");
      rest = parts.pop()!;
      return parts;
    },
    end() {
      const last = rest;
      rest = "";
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
    return undefined;
  } catch {
    return undefined;
  }
}
