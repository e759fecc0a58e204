/**
 * The JSON bytes of a request body's message array, each element serialized
 * once per conversation: a long session sends its whole history every turn,
 * and serializing it afresh each time makes a string the size of the history
 * (and its UTF-8 copy) per turn, garbage that old space collects rarely.
 *
 * Elements are remembered by their position, per conversation (its first
 * history message, held weakly: a compaction that starts a new history lets
 * the old one go) and per array (`slot`). An element's bytes are reused only
 * when the element is, value for value, what was serialized before: its
 * keys in order and every primitive the same (strings compare by identity
 * first, so a history's own strings cost nothing). An element whose JSON
 * depends on its position (a prompt-cache marker on the last messages) thus
 * differs from what was remembered and is serialized again. What is
 * remembered is a flat list of those keys and values, not the element
 * itself, so a later change to an element object cannot leave stale bytes.
 *
 * @module
 */
import type { KnownPrefix } from "./_json_body.ts";
import { createHolderLedger } from "../protocol/holder_ledger.ts";

/** Most bytes remembered for one array; elements past them are serialized each time. */
const KEPT_BYTES = 8 * 1024 * 1024;

/**
 * Most bytes remembered over every conversation of the process (16 MiB): a
 * session's subagents are conversations too, and eight of them each keeping
 * 8 MiB held 64 MiB beside their histories (attack round 25).
 */
export const PROCESS_KEPT_BYTES = 16 * 1024 * 1024;

/** What each conversation remembers, in bytes. */
const keptLedger = createHolderLedger();

/** Bytes the conversations of the process remember now (tests). */
export function rememberedBytes(): number {
  return keptLedger.heldBesides(undefined);
}

/** The tokens of an element's value: structure markers, keys and primitives, in JSON order. */
type Tokens = readonly unknown[];

/** One remembered element. */
interface Kept {
  tokens: Tokens;
  bytes: Uint8Array;
}

const OPEN_OBJECT = Symbol("{");
const OPEN_ARRAY = Symbol("[");
const CLOSE = Symbol("}");
const COMMA = new Uint8Array([0x2c]);
const encoder = new TextEncoder();

/** The elements remembered for a conversation, and the array they are of. */
const remembered = new WeakMap<
  object,
  { slot: string; elements: readonly (Kept | undefined)[] }
>();

/**
 * Whether JSON.stringify writes `v` from its enumerable own keys alone (a
 * plain object or array without `toJSON`).
 */
function plain(v: object): boolean {
  if (Array.isArray(v)) return true;
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && !("toJSON" in v);
}

/** The tokens of `value`, or undefined when it holds what they cannot describe. */
function tokensOf(value: unknown): Tokens | undefined {
  const out: unknown[] = [];
  const walk = (v: unknown): boolean => {
    if (v === null || typeof v !== "object") {
      out.push(v);
      return true;
    }
    if (!plain(v)) return false;
    if (Array.isArray(v)) {
      out.push(OPEN_ARRAY);
      for (let i = 0; i < v.length; i++) if (!walk(v[i])) return false;
    } else {
      out.push(OPEN_OBJECT);
      for (const key of Object.keys(v)) {
        out.push(key);
        if (!walk((v as Record<string, unknown>)[key])) return false;
      }
    }
    out.push(CLOSE);
    return true;
  };
  return walk(value) ? out : undefined;
}

/** Whether `value`'s tokens are exactly `tokens` (without building them). */
function sameTokens(value: unknown, tokens: Tokens): boolean {
  let at = 0;
  const walk = (v: unknown): boolean => {
    if (v === null || typeof v !== "object") return tokens[at++] === v;
    if (!plain(v)) return false;
    if (Array.isArray(v)) {
      if (tokens[at++] !== OPEN_ARRAY) return false;
      for (let i = 0; i < v.length; i++) if (!walk(v[i])) return false;
    } else {
      if (tokens[at++] !== OPEN_OBJECT) return false;
      for (const key of Object.keys(v)) {
        if (tokens[at++] !== key) return false;
        if (!walk((v as Record<string, unknown>)[key])) return false;
      }
    }
    return tokens[at++] === CLOSE;
  };
  return walk(value) && at === tokens.length;
}

/**
 * The JSON of `elements` (the whole array at body member `key`) as a
 * {@linkcode KnownPrefix}: each element's bytes, remembered under
 * `conversation` and `slot` from the request before when the element is the
 * same, serialized now otherwise. A conversation remembers one slot (the
 * array of the protocol it last used). Undefined for an empty array.
 */
export function elementBytes(
  conversation: object,
  slot: string,
  key: string,
  elements: readonly unknown[],
): KnownPrefix | undefined {
  if (elements.length === 0) return undefined;
  const last = remembered.get(conversation);
  const before = last?.slot === slot ? last.elements : [];
  const now: (Kept | undefined)[] = [];
  const chunks: Uint8Array[] = [];
  const room = Math.min(KEPT_BYTES, PROCESS_KEPT_BYTES - keptLedger.heldBesides(conversation));
  let keptBytes = 0;
  let rememberedNow = 0;
  for (let i = 0; i < elements.length; i++) {
    const v = elements[i];
    const old = before[i];
    let kept: Kept | undefined;
    let bytes: Uint8Array;
    if (old !== undefined && sameTokens(v, old.tokens)) {
      kept = old;
      bytes = old.bytes;
    } else {
      bytes = encoder.encode(JSON.stringify(v) ?? "null");
      const tokens = tokensOf(v);
      kept = tokens === undefined ? undefined : { tokens, bytes };
    }
    if (i > 0) chunks.push(COMMA);
    chunks.push(bytes);
    if (kept !== undefined) keptBytes += bytes.length;
    const keep = kept !== undefined && keptBytes <= room;
    if (keep) rememberedNow += bytes.length;
    now.push(keep ? kept : undefined);
  }
  remembered.set(conversation, { slot, elements: now });
  keptLedger.hold(conversation, rememberedNow);
  return { key, count: elements.length, chunks };
}
