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

/** The text a message of a joinable kind holds, and its field. */
function joinable(m: CompleteMessage): "text" | "thinking" | undefined {
  if (m.type === "text") return "text";
  if (m.type === "thinking") return "thinking";
  return undefined;
}

/**
 * `messages` (each masked already) where a protocol that joins the texts of one side's run into
 * one string (OpenAI's chat completions: every text of an assistant turn, every reasoning text)
 * would join a secret whole from pieces each too short to mask: an imported Claude Code message
 * split a 14-character vault value 7|7 over two text blocks, and the resumed request held it
 * (attack round 31 s03). Such a run's texts become one message, masked as joined, at the first
 * one's place (its `fidelity` dropped); the same array when no join changes.
 */
function maskJoinedRuns(
  messages: CompleteMessage[],
  mask: (s: string) => string,
): CompleteMessage[] {
  let out = messages;
  let start = 0;
  for (let i = 1; i <= out.length; i++) {
    if (i < out.length && out[i]!.role === out[start]!.role) continue;
    for (const kind of ["text", "thinking"] as const) {
      const at: number[] = [];
      for (let k = start; k < i; k++) if (joinable(out[k]!) === kind) at.push(k);
      if (at.length < 2) continue;
      const field = kind === "text" ? "text" : "thinking";
      const joined = at.map((k) => (out[k] as unknown as Record<string, string>)[field]).join("");
      const masked = mask(joined);
      if (masked === joined) continue;
      const { fidelity: _dropped, ...first } = out[at[0]!] as CompleteMessage & {
        fidelity?: unknown;
      };
      const merged = { ...first, [field]: masked } as CompleteMessage;
      const drop = new Set(at.slice(1));
      out = out.map((m, k) => (k === at[0] ? merged : m)).filter((_, k) => !drop.has(k));
      i -= drop.size;
    }
    start = i;
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
    history: maskJoinedRuns(state.history.map((m) => maskMessage(m, mask)), mask),
    carryOver: maskJoinedRuns(state.carryOver.map((m) => maskMessage(m, mask)), mask),
  };
  if (state.pendingSummary) {
    masked.pendingSummary = maskDeep(state.pendingSummary, mask) as typeof state.pendingSummary;
  }
  return masked;
}
