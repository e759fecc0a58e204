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

/** `state` with every replayed message masked over `secrets` (the same state when none changed). */
export function maskEngineState(
  state: EngineState,
  secrets: readonly Secret[],
): EngineState {
  if (secrets.length === 0) return state;
  const mask = (s: string) => maskSecrets(s, secrets);
  const masked: EngineState = {
    ...state,
    history: state.history.map((m) => maskMessage(m, mask)),
    carryOver: state.carryOver.map((m) => maskMessage(m, mask)),
  };
  if (state.pendingSummary) {
    masked.pendingSummary = maskDeep(state.pendingSummary, mask) as typeof state.pendingSummary;
  }
  return masked;
}
