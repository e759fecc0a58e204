/**
 * Masking of the model's own output. A hostile model that learned a secret
 * (an encoded form of it reached it through a command) can write the secret,
 * or a long enough piece of it, in its text, its reasoning or a tool call's
 * arguments. Every message of the model stream is masked here, before the
 * turn records, shows or keeps it, with the masking rule of tool output
 * (lib/tools/secret_mask.ts):
 *
 * - streamed text, reasoning and argument fragments through a streaming
 *   masker per segment (what it holds back comes out before the segment's
 *   `stop`);
 * - a complete text or thinking message whole;
 * - a complete tool call's arguments string by string inside the JSON
 *   (keys too), so a secret holding `"` or `\` is found as the tool gets it;
 *   arguments that are not JSON are masked as text. The real arguments are
 *   kept aside by call id for the tool ({@linkcode ModelMasking.realCall}):
 *   the trace, the display and the history hold the masked ones;
 * - the opaque `fidelity` payload: when masking changed the message, or a
 *   string inside the payload holds a secret, the payload is dropped (a
 *   signature over the original text would not verify, and a copy of the
 *   original would keep the secret on disk). The replay then lacks it.
 *
 * @module
 */
import type { CompleteMessage, ModelPayload, ToolCallMessage } from "../protocol/types.ts";
import type { ModelStreamItem } from "../models/outcome.ts";
import { createSecretMasker, maskSecrets, type Secret, type SecretMasker } from "../tools/mod.ts";

/** The masking of one session's model streams. */
export interface ModelMasking {
  /** `stream` with every message masked. */
  mask(stream: AsyncIterable<ModelStreamItem>): AsyncIterable<ModelStreamItem>;
  /** The call as the model made it (real arguments), once; the call itself when not masked. */
  realCall(call: ToolCallMessage): ToolCallMessage;
}

/** Every string of a JSON value (keys included) masked; `changed` tells whether any was. */
function maskJson(
  value: unknown,
  mask: (s: string) => string,
): { value: unknown; changed: boolean } {
  if (typeof value === "string") {
    const masked = mask(value);
    return { value: masked, changed: masked !== value };
  }
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v) => {
      const r = maskJson(v, mask);
      changed ||= r.changed;
      return r.value;
    });
    return { value: out, changed };
  }
  if (value !== null && typeof value === "object") {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const key = mask(k);
      const r = maskJson(v, mask);
      changed ||= r.changed || key !== k;
      out[key] = r.value;
    }
    return { value: out, changed };
  }
  return { value, changed: false };
}

/** Tool-call arguments with the secrets masked inside their JSON strings (as text when not JSON). */
function maskArguments(args: string, mask: (s: string) => string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return mask(args);
  }
  const r = maskJson(parsed, mask);
  return r.changed ? JSON.stringify(r.value) : args;
}

/** A complete message masked, and its fidelity dropped when it changed or held a secret. */
function maskComplete(
  msg: CompleteMessage,
  mask: (s: string) => string,
): CompleteMessage {
  let out: CompleteMessage = msg;
  if (msg.type === "text") {
    const text = mask(msg.text);
    if (text !== msg.text) out = { ...msg, text };
  } else if (msg.type === "thinking") {
    const thinking = mask(msg.thinking);
    if (thinking !== msg.thinking) out = { ...msg, thinking };
  } else if (msg.type === "tool_call") {
    const args = maskArguments(msg.arguments, mask);
    if (args !== msg.arguments) out = { ...msg, arguments: args };
  }
  const fidelity = (msg as { fidelity?: unknown }).fidelity;
  if (fidelity === undefined) return out;
  if (out !== msg || maskJson(fidelity, mask).changed) {
    const { fidelity: _dropped, ...rest } = out as CompleteMessage & { fidelity?: unknown };
    return rest as CompleteMessage;
  }
  return out;
}

/** The field a partial streams, and the key of its segment. */
function partialField(
  msg: ModelPayload,
): { field: "text" | "thinking" | "arguments"; key: string } | undefined {
  switch (msg.type) {
    case "partial_text":
      return { field: "text", key: "text" };
    case "partial_thinking":
      return { field: "thinking", key: "thinking" };
    case "partial_tool_call":
      return { field: "arguments", key: `call:${msg.tool_call_id}` };
    default:
      return undefined;
  }
}

/** Start the masking of a session's model output over `secrets`. */
export function createModelMasking(secrets: readonly Secret[]): ModelMasking {
  const mask = (s: string) => maskSecrets(s, secrets);
  const active = createSecretMasker(secrets).active;
  /** Real arguments of masked calls, by call id, until the tool takes them. */
  const real = new Map<string, string>();

  async function* masked(
    stream: AsyncIterable<ModelStreamItem>,
  ): AsyncGenerator<ModelStreamItem> {
    const segments = new Map<string, SecretMasker>();
    for await (const item of stream) {
      if (item.kind !== "message") {
        yield item;
        continue;
      }
      const msg = item.message;
      const partial = partialField(msg);
      if (partial) {
        const { field, key } = partial;
        const p = msg as ModelPayload & Record<string, unknown>;
        if (p.event_type === "start") segments.set(key, createSecretMasker(secrets));
        let masker = segments.get(key);
        if (masker === undefined) {
          masker = createSecretMasker(secrets);
          segments.set(key, masker);
        }
        const value = typeof p[field] === "string" ? p[field] as string : "";
        if (p.event_type === "stop") {
          segments.delete(key);
          const rest = masker.push(value) + masker.flush();
          if (rest !== "" && value === "") {
            yield { kind: "message", message: { ...p, event_type: "delta", [field]: rest } };
            yield item;
          } else yield { kind: "message", message: { ...p, [field]: rest } };
          continue;
        }
        yield { kind: "message", message: { ...p, [field]: masker.push(value) } };
        continue;
      }
      const complete = maskComplete(msg as CompleteMessage, mask);
      if (complete.type === "tool_call" && complete !== msg) {
        real.set(complete.tool_call_id, (msg as ToolCallMessage).arguments);
      }
      yield complete === msg ? item : { kind: "message", message: complete };
    }
  }

  return {
    mask: (stream) => (active ? masked(stream) : stream),
    realCall(call) {
      const args = real.get(call.tool_call_id);
      if (args === undefined) return call;
      real.delete(call.tool_call_id);
      return { ...call, arguments: args };
    },
  };
}
