/**
 * Masking of a resumed session's history. A trace written before a secret
 * was in the vault, or before some part of a message was masked (an
 * imported old trace with a tool-call id holding a vault value), would send
 * the secret back to the provider on resume. Every string of every replayed
 * message (history, carry-over, pending summary) is masked with the
 * session's current secrets; a message that changed loses its opaque
 * `fidelity` payload (a signature over the original would not verify).
 * Masking is deterministic, so a call id and its output's id stay paired.
 * A tool call's `arguments` (JSON text) is masked by its decoded strings.
 * `sessions import` masks each imported record the same way ({@linkcode maskRecord}).
 *
 * @module
 */
import type { CompleteMessage, OmniMessage } from "../protocol/types.ts";
import { maskSecrets, type Secret } from "../tools/secret_mask.ts";
import { holdsSecretNumber, maskArguments } from "./_mask_json.ts";
import type { EngineState } from "./engine.ts";

/**
 * The masking of one value of `obj` under `key`: a tool call's `arguments`
 * is JSON text, masked by its decoded strings (a secret holding `"` or `\`
 * reads escaped in the text); anything else by `inner`.
 */
function valueMasker(
  obj: object,
  mask: (s: string) => string,
  inner: (v: unknown) => unknown,
): (v: unknown, key: string) => unknown {
  if ((obj as { type?: unknown }).type !== "tool_call") return inner;
  return (v, key) =>
    key === "arguments" && typeof v === "string" ? maskArguments(v, mask) : inner(v);
}

/** `value` with every string (keys too) masked; the same object when nothing changed. */
function maskDeep(value: unknown, mask: (s: string) => string): unknown {
  if (typeof value === "string") return mask(value);
  if (Array.isArray(value)) {
    const out = value.map((v) => maskDeep(v, mask));
    return out.some((v, i) => v !== value[i]) ? out : value;
  }
  if (value !== null && typeof value === "object") {
    return maskEntries(value, mask, valueMasker(value, mask, (v) => maskDeep(v, mask))) ?? value;
  }
  return value;
}

/**
 * A copy of `obj` with its keys masked and its values mapped by `inner`;
 * undefined when no key or value changed.
 */
function maskEntries(
  obj: object,
  mask: (s: string) => string,
  inner: (v: unknown, key: string) => unknown,
): Record<string, unknown> | undefined {
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    const key = mask(k);
    const m = inner(v, k);
    changed ||= key !== k || m !== v;
    out[key] = m;
  }
  return changed ? out : undefined;
}

/** One message masked, its fidelity dropped when it changed. */
function maskMessage(msg: CompleteMessage, mask: (s: string) => string): CompleteMessage {
  const out = maskDeep(msg, mask) as CompleteMessage & { fidelity?: unknown };
  if (out === msg) return msg;
  const { fidelity: _dropped, ...rest } = out;
  return rest as CompleteMessage;
}

/** `value` masked like {@linkcode maskDeep}; every object that changed loses its `fidelity`. */
function maskDropFidelity(value: unknown, mask: (s: string) => string): unknown {
  if (Array.isArray(value)) {
    const out = value.map((v) => maskDropFidelity(v, mask));
    return out.some((v, i) => v !== value[i]) ? out : value;
  }
  if (value === null || typeof value !== "object") return maskDeep(value, mask);
  const out = maskEntries(value, mask, valueMasker(value, mask, (v) => maskDropFidelity(v, mask)));
  const fidelity = (value as { fidelity?: unknown }).fidelity;
  if (out === undefined) {
    if (fidelity === undefined || !holdsSecretNumber(fidelity, mask)) return value;
    const { fidelity: _dropped, ...rest } = value as Record<string, unknown>;
    return rest;
  }
  delete out.fidelity;
  return out;
}

/**
 * One trace record with every string (keys too) masked over `mask`; an
 * object that changed (a message, a summary's message) loses its opaque
 * `fidelity` payload. The same object when nothing changed (how
 * `sessions import` counts the records it masked).
 */
export function maskRecord(record: OmniMessage, mask: (s: string) => string): OmniMessage {
  return maskDropFidelity(record, mask) as OmniMessage;
}

/** The field of a message whose text an encoder may join with its neighbours' ("text", "thinking"). */
function textField(m: CompleteMessage): "text" | "thinking" | undefined {
  if (m.type === "text") return "text";
  if (m.type === "thinking") return "thinking";
  return undefined;
}

/**
 * `messages` (each masked already) with every secret that two neighbouring texts form together
 * masked in both. An encoder may join texts that are not neighbours in penguin's history: OpenAI's
 * chat completions joins every text of an assistant turn, and the Anthropic and Gemini encoders
 * drop an empty text or a thinking without a signature and merge the turns on either side. An
 * imported message split a 14-character vault value 7|7, each piece too short to mask, and the
 * resumed request held it whole (attack rounds 31 s03, 32 v01, v12). So each text (or thinking)
 * is masked joined with the next one in the history, whatever lies between and whoever wrote
 * them; a secret across the seam is replaced by its marker in both, each message keeping its
 * place and role (its `fidelity` dropped). The same array when nothing changed.
 */
function maskSeams(messages: CompleteMessage[], mask: (s: string) => string): CompleteMessage[] {
  // Empty ones are what encoders drop; a thinking between two texts may be dropped too, so each
  // text meets the next one of any kind and the next text.
  const at: number[] = [];
  for (const [k, m] of messages.entries()) {
    const f = textField(m);
    if (f !== undefined && (m as unknown as Record<string, string>)[f] !== "") at.push(k);
  }
  const pairs: [number, number][] = [];
  for (const [i, a] of at.entries()) {
    const next = at[i + 1];
    if (next !== undefined) pairs.push([a, next]);
    const kind = textField(messages[a]!);
    const same = at.slice(i + 1).find((k) => textField(messages[k]!) === kind);
    if (same !== undefined && same !== next) pairs.push([a, same]);
  }
  let out = messages;
  const textOf = (k: number) =>
    (out[k] as unknown as Record<string, string>)[textField(out[k]!)!] ?? "";
  const withText = (k: number, text: string): CompleteMessage => {
    const { fidelity: _dropped, ...rest } = out[k] as CompleteMessage & { fidelity?: unknown };
    return { ...rest, [textField(out[k]!)!]: text } as CompleteMessage;
  };
  for (const [a, b] of pairs) {
    const left = textOf(a);
    const right = textOf(b);
    const joined = left + right;
    const masked = mask(joined);
    if (masked === joined) continue;
    // The changed span of the joined text; it crosses the seam when the pieces alone were kept.
    let p = 0;
    while (p < joined.length && p < masked.length && joined[p] === masked[p]) p++;
    let q = 0;
    while (
      q < joined.length - p && q < masked.length - p &&
      joined[joined.length - 1 - q] === masked[masked.length - 1 - q]
    ) q++;
    const end = joined.length - q;
    if (p >= left.length || end <= left.length) continue;
    const marker = masked.slice(p, masked.length - q);
    if (out === messages) out = [...messages];
    out[a] = withText(a, left.slice(0, p) + marker);
    out[b] = withText(b, marker + right.slice(end - left.length));
  }
  return out;
}

/** `state` with every replayed message masked over `secrets` (the same state when none changed). */
export function maskEngineState(
  state: EngineState,
  secrets: readonly Secret[],
): EngineState {
  if (secrets.length === 0) return state;
  const mask = (s: string) => maskSecrets(s, secrets);
  const masked: EngineState = {
    ...state,
    history: maskSeams(state.history.map((m) => maskMessage(m, mask)), mask),
    carryOver: maskSeams(state.carryOver.map((m) => maskMessage(m, mask)), mask),
  };
  if (state.pendingSummary) {
    masked.pendingSummary = maskDeep(state.pendingSummary, mask) as typeof state.pendingSummary;
  }
  return masked;
}
