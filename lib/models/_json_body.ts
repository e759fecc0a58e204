// JSON request bodies serialized only when needed: as one string (`body`,
// what ordinary requests send and tests read) or as a byte stream built
// member by member and array element by element (`jsonBodyStream`), which
// the driver uses for very large histories (a resumed session with a huge
// context): the whole body then never exists as one string, which V8 would
// make two bytes per character as soon as any character is not ASCII, plus
// its UTF-8 copy.
//
// A wire module that keeps the JSON text of the history it converted before
// passes it on (`KnownPrefix`): a long session's body then costs its new
// messages plus one copy, not a serialization of the whole history per turn.
import type { CompleteMessage } from "../protocol/types.ts";
import type { HttpRequest } from "./wire.ts";

/** Bytes per chunk of a streamed body (about). */
const CHUNK_CHARS = 64 * 1024;

/**
 * The JSON text of the first `count` elements of the array at top-level
 * member `key` of a body: their `JSON.stringify` texts joined with ",".
 */
export interface KnownPrefix {
  /** The top-level member holding the array. */
  key: string;
  /** How many leading elements `text` covers. */
  count: number;
  /** Their JSON texts, joined with ",". */
  text: string;
}

/**
 * An HTTP request whose `body` is `JSON.stringify(json)`, computed on first
 * read; the elements `known` covers are taken from its text, not serialized again.
 */
export function jsonRequest(
  url: string,
  headers: Record<string, string>,
  json: Record<string, unknown>,
  known?: KnownPrefix,
): HttpRequest {
  let text: string | undefined;
  return {
    url,
    headers,
    json,
    get body() {
      return (text ??= known === undefined
        ? JSON.stringify(json)
        : Array.from(pieces(json, known)).join(""));
    },
  };
}

function* pieces(value: Record<string, unknown>, known?: KnownPrefix): Generator<string> {
  yield "{";
  let first = true;
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
    yield `${first ? "" : ","}${JSON.stringify(key)}:`;
    first = false;
    if (!Array.isArray(v)) {
      yield JSON.stringify(v);
      continue;
    }
    const skip = known?.key === key && known.count <= v.length ? known.count : 0;
    yield skip > 0 ? `[${known!.text}` : "[";
    for (let i = skip; i < v.length; i++) {
      yield (i > 0 ? "," : "") + (JSON.stringify(v[i]) ?? "null");
    }
    yield "]";
  }
  yield "}";
}

/** The UTF-8 bytes of `JSON.stringify(value)` (plain JSON data), as a stream of ~64 KiB chunks. */
export function jsonBodyStream(value: Record<string, unknown>): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  const it = pieces(value);
  return new ReadableStream<Uint8Array>({
    pull(c) {
      let buf = "";
      for (;;) {
        const n = it.next();
        if (n.done) {
          if (buf !== "") c.enqueue(enc.encode(buf));
          c.close();
          return;
        }
        buf += n.value;
        if (buf.length >= CHUNK_CHARS) {
          c.enqueue(enc.encode(buf));
          return;
        }
      }
    },
  }, { highWaterMark: 0 });
}

/** Characters of content in a history (texts, arguments, outputs, inline data): a cheap size bound. */
export function historyChars(history: readonly CompleteMessage[]): number {
  let n = 0;
  for (const m of history) {
    switch (m.type) {
      case "text":
        n += m.text.length;
        break;
      case "thinking":
        n += m.thinking.length;
        break;
      case "tool_call":
        n += m.arguments.length;
        break;
      case "tool_call_output":
        n += m.output.length;
        for (const url of m.images ?? []) n += url.length;
        break;
      case "image_url":
        n += m.image_url.length;
        break;
      case "inline_data":
      case "inline_thinking":
        n += m.data.length;
        break;
    }
  }
  return n;
}
