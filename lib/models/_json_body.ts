// JSON request bodies serialized only when needed: as one string (`body`,
// what ordinary requests send and tests read) or as a byte stream built
// member by member and array element by element (`jsonBodyStream`), which
// the driver uses for very large histories (a resumed session with a huge
// context): the whole body then never exists as one string, which V8 would
// make two bytes per character as soon as any character is not ASCII, plus
// its UTF-8 copy.
//
// A wire module that keeps the JSON of the history it converted before passes
// its UTF-8 bytes on (`KnownPrefix`): a long session's body then costs its new
// messages plus one copy of bytes, not a serialization (and an encoding) of
// the whole history every turn.
import { concatBytes, encodeJoined } from "../protocol/bytes.ts";
import type { CompleteMessage } from "../protocol/types.ts";
import type { HttpRequest } from "./wire.ts";
import { jsonLength } from "../protocol/json_length.ts";
import { pairSafeSlices } from "../protocol/pair_safe_slices.ts";

/** Bytes per chunk of a streamed body (about). */
const CHUNK_CHARS = 64 * 1024;

/**
 * The JSON of the first `count` elements of the array at top-level member
 * `key` of a body: the UTF-8 bytes of their `JSON.stringify` texts joined
 * with ",", in pieces.
 */
export interface KnownPrefix {
  /** The top-level member holding the array. */
  key: string;
  /** How many leading elements `chunks` covers (at least one). */
  count: number;
  /** The bytes, in order. */
  chunks: Uint8Array[];
}

/** Where the known elements go among the pieces of a body. */
const KNOWN = Symbol("known");

/**
 * An HTTP request whose `body` is `JSON.stringify(json)`, computed on first
 * read. With `known`, so are its UTF-8 `bytes`, the elements `known` covers
 * taken as they are, not serialized again (its chunks must stay as they are).
 * A function `known` is called when the bytes are first read (a streamed
 * body never reads them).
 */
export function jsonRequest(
  url: string,
  headers: Record<string, string>,
  json: Record<string, unknown>,
  known?: KnownPrefix | (() => KnownPrefix | undefined),
): HttpRequest {
  if (known === undefined) {
    let text: string | undefined;
    return {
      url,
      headers,
      json,
      get body() {
        return (text ??= JSON.stringify(json));
      },
    };
  }
  let bytes: Uint8Array<ArrayBuffer> | undefined;
  let text: string | undefined;
  return {
    url,
    headers,
    json,
    get bytes() {
      if (bytes !== undefined) return bytes;
      const k = typeof known === "function" ? known() : known;
      return (bytes = k === undefined
        ? new TextEncoder().encode(JSON.stringify(json))
        : knownBytes(json, k));
    },
    get body() {
      return (text ??= new TextDecoder().decode(this.bytes));
    },
  };
}

/** The UTF-8 bytes of `JSON.stringify(json)`, with `known`'s elements as they are. */
function knownBytes(json: Record<string, unknown>, known: KnownPrefix): Uint8Array<ArrayBuffer> {
  const before: string[] = [], after: string[] = [];
  let into = before;
  for (const p of pieces(json, known)) {
    if (p === KNOWN) into = after;
    else into.push(p);
  }
  // Each side encoded from its pieces: joined first, a message holding an image would be copied
  // once more as one flat string.
  if (into === before) return encodeJoined(before);
  return concatBytes([encodeJoined(before), ...known.chunks, encodeJoined(after)]);
}

/**
 * The members of `value` that JSON.stringify writes, each with its head: the
 * comma before all but the first, the quoted key and the colon.
 */
function* members(value: object): Generator<[head: string, key: string, v: unknown]> {
  let first = true;
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
    yield [`${first ? "" : ","}${JSON.stringify(key)}:`, key, v];
    first = false;
  }
}

function* pieces(
  value: Record<string, unknown>,
  known?: KnownPrefix,
): Generator<string | typeof KNOWN> {
  yield "{";
  for (const [head, key, v] of members(value)) {
    yield head;
    if (!Array.isArray(v)) {
      yield JSON.stringify(v);
      continue;
    }
    const skip = known?.key === key && known.count > 0 && known.count <= v.length ? known.count : 0;
    yield "[";
    if (skip > 0) yield KNOWN;
    for (let i = skip; i < v.length; i++) {
      if (i > 0) yield ",";
      yield JSON.stringify(v[i]) ?? "null";
    }
    yield "]";
  }
  yield "}";
}

/** Strings recorded as joined from parts, by the object and the member holding them. */
const JOINED = new WeakMap<object, Map<string, readonly string[]>>();

/**
 * Record that `holder[key]` is (and stays) the concatenation of `parts`: a
 * streamed body writes the parts one after the other instead of that string,
 * which V8 then never flattens into a copy of them all (a run of many long
 * texts joined into one message).
 */
export function joinedFrom(holder: object, key: string, parts: readonly string[]): void {
  let keys = JOINED.get(holder);
  if (keys === undefined) JOINED.set(holder, keys = new Map());
  keys.set(key, parts);
}

/**
 * The JSON text of `value` (plain JSON data) in pieces of about 64 Ki
 * characters at most, however long one of its strings: to write a large
 * message without building its whole text.
 */
export function jsonPieces(value: unknown): Generator<string> {
  return valuePieces(value);
}

/**
 * The JSON text of `value` (plain JSON data) in pieces: arrays and objects
 * element by element and member by member, strings longer than a chunk in
 * slices, so no piece is much longer than a chunk however large one message is.
 */
function* valuePieces(value: unknown): Generator<string> {
  if (typeof value === "string") {
    if (value.length <= CHUNK_CHARS) yield JSON.stringify(value);
    else yield* stringPieces(value);
    return;
  }
  if (value === null || typeof value !== "object" || "toJSON" in value) {
    yield JSON.stringify(value) ?? "null";
    return;
  }
  if (Array.isArray(value)) {
    yield "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) yield ",";
      const v = value[i];
      if (v === undefined || typeof v === "function" || typeof v === "symbol") yield "null";
      else yield* valuePieces(v);
    }
    yield "]";
    return;
  }
  const joined = JOINED.get(value);
  yield "{";
  for (const [head, key, v] of members(value)) {
    yield head;
    const parts = typeof v === "string" ? joined?.get(key) : undefined;
    if (parts !== undefined) yield* stringPieces(parts);
    else yield* valuePieces(v);
  }
  yield "}";
}

/**
 * The JSON text of the concatenation of `parts` (or of one long string) in
 * slices of about a chunk. A slice never ends inside a surrogate pair of its
 * part; a pair split between two parts is written as two escapes, which JSON
 * decodes to the same pair.
 */
function* stringPieces(parts: string | readonly string[]): Generator<string> {
  yield '"';
  for (const text of typeof parts === "string" ? [parts] : parts) {
    for (const slice of pairSafeSlices(text, CHUNK_CHARS)) {
      yield JSON.stringify(slice).slice(1, -1);
    }
  }
  yield '"';
}

/** The UTF-8 bytes of `JSON.stringify(value)` (plain JSON data), as a stream of ~64 KiB chunks. */
export function jsonBodyStream(value: Record<string, unknown>): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  const it = valuePieces(value);
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

/**
 * Characters of content in a history (texts, arguments, outputs, inline
 * data, opaque payloads as JSON): a cheap size bound.
 */
export function historyChars(history: readonly CompleteMessage[]): number {
  let n = 0;
  for (const m of history) {
    if ("fidelity" in m && m.fidelity !== undefined) n += jsonLength(m.fidelity);
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
