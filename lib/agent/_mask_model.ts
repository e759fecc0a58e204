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
 *   (keys too), so a secret holding `"` or `\` is found as the tool gets it,
 *   and each number whose decimal text holds a secret replaced by the marker
 *   string;
 *   arguments that are not JSON are masked as text. The real arguments are
 *   kept aside by call id for the tool ({@linkcode ModelMasking.realCall}):
 *   the trace, the display and the history hold the masked ones;
 * - streamed argument fragments also on their decoded JSON strings
 *   (./_mask_json_stream.ts), so a secret spelled with `\uXXXX` escapes is
 *   masked before the live display decodes it;
 * - a tool call's name and id, partial and complete: the name as text (a
 *   masked name is an unknown tool), the id mapped once per call to a masked
 *   id kept unique in the session ({@linkcode ToolCallIds}), so the call, its
 *   partials, its output and the history still pair;
 * - the error message of a failed request (a provider may echo the model's
 *   output in a stream error or an HTTP error body);
 * - the opaque `fidelity` payload: when masking changed the message, or a
 *   string inside the payload holds a secret, the payload is dropped (a
 *   signature over the original text would not verify, and a copy of the
 *   original would keep the secret on disk). The replay then lacks it.
 *
 * @module
 */
import type { CompleteMessage, ModelPayload, ToolCallMessage } from "../protocol/types.ts";
import type { ModelStreamItem } from "../models/outcome.ts";
import type { ToolCallIds } from "../models/tool_call_ids.ts";
import { createSecretMasker, maskSecrets, type Secret } from "../tools/secret_mask.ts";
import { createJsonStringMasker } from "./_mask_json_stream.ts";
import { holdsSecretNumber, maskArguments, maskJson } from "./_mask_json.ts";

/** The masking of one session's model streams. */
export interface ModelMasking {
  /** `stream` with every message masked. */
  mask(stream: AsyncIterable<ModelStreamItem>): AsyncIterable<ModelStreamItem>;
  /** The call as the model made it (real arguments), once; the call itself when not masked. */
  realCall(call: ToolCallMessage): ToolCallMessage;
}

/** A complete message masked, and its fidelity dropped when it changed or held a secret. */
function maskComplete(
  msg: CompleteMessage,
  mask: (s: string) => string,
  maskId: (id: string) => string,
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
    const name = mask(msg.name);
    const id = maskId(msg.tool_call_id);
    if (args !== msg.arguments || name !== msg.name || id !== msg.tool_call_id) {
      out = { ...msg, name, arguments: args, tool_call_id: id };
    }
  }
  const fidelity = (msg as { fidelity?: unknown }).fidelity;
  if (fidelity === undefined) return out;
  if (out !== msg || maskJson(fidelity, mask).changed || holdsSecretNumber(fidelity, mask)) {
    const { fidelity: _dropped, ...rest } = out as CompleteMessage & { fidelity?: unknown };
    return rest as CompleteMessage;
  }
  return out;
}

/** The streaming masker of one segment. */
interface SegmentMasker {
  push(text: string): string;
  flush(): string;
}

/** Argument fragments masked on their decoded JSON strings, then as text. */
function argumentsMasker(secrets: readonly Secret[]): SegmentMasker {
  const json = createJsonStringMasker(secrets);
  const raw = createSecretMasker(secrets);
  return {
    push: (text) => raw.push(json.push(text)),
    flush: () => raw.push(json.flush()) + raw.flush(),
  };
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

/** An outcome whose error message is masked (the same one when nothing was). */
function maskOutcome(item: ModelStreamItem, mask: (s: string) => string): ModelStreamItem {
  if (item.kind !== "end" || item.outcome.error_message === undefined) return item;
  const error_message = mask(item.outcome.error_message);
  if (error_message === item.outcome.error_message) return item;
  return { kind: "end", outcome: { ...item.outcome, error_message } };
}

/** The masked ids of a session's calls. */
interface IdMasking {
  /** The masked id of a call id (the same one for its partials and its complete call). */
  maskId(id: string): string;
  /** The call is complete: its id is no longer needed. */
  done(id: string): void;
}

/** Call ids masked as text, each changed one once, kept unique through `toolCallIds`. */
function createIdMasking(mask: (s: string) => string, toolCallIds?: ToolCallIds): IdMasking {
  /** The masked id of each call id (itself when it holds no secret), until its complete call. */
  const maskedIds = new Map<string, string>();
  return {
    maskId(id) {
      let out = maskedIds.get(id);
      if (out !== undefined) return out;
      out = mask(id);
      // Kept unchanged too: a call streams one partial per delta, and masking is not free.
      if (out !== id) out = toolCallIds ? toolCallIds.allocate(out) : out;
      maskedIds.set(id, out);
      return out;
    },
    done: (id) => void maskedIds.delete(id),
  };
}

/** A partial (name and id already masked) with its streamed field masked by its segment. */
function* maskPartial(
  p: ModelPayload & Record<string, unknown>,
  { field, key }: { field: string; key: string },
  segments: Map<string, SegmentMasker>,
  secrets: readonly Secret[],
): Generator<ModelStreamItem> {
  const fresh = () =>
    field === "arguments" ? argumentsMasker(secrets) : createSecretMasker(secrets);
  if (p.event_type === "start") segments.set(key, fresh());
  let masker = segments.get(key);
  if (masker === undefined) {
    masker = fresh();
    segments.set(key, masker);
  }
  const value = typeof p[field] === "string" ? p[field] as string : "";
  if (p.event_type !== "stop") {
    yield { kind: "message", message: { ...p, [field]: masker.push(value) } };
    return;
  }
  segments.delete(key);
  const rest = masker.push(value) + masker.flush();
  if (rest !== "" && value === "") {
    yield { kind: "message", message: { ...p, event_type: "delta", [field]: rest } };
    yield { kind: "message", message: { ...p, [field]: "" } };
  } else yield { kind: "message", message: { ...p, [field]: rest } };
}

/**
 * Start the masking of a session's model output over `secrets`. Masked call
 * ids are made unique through `toolCallIds` (the session's id set).
 */
export function createModelMasking(
  secrets: readonly Secret[],
  toolCallIds?: ToolCallIds,
): ModelMasking {
  // An empty string holds no secret (a partial's delta carries an empty name): no masker is made.
  const mask = (s: string) => s === "" ? s : maskSecrets(s, secrets);
  const active = createSecretMasker(secrets).active;
  /** Real arguments of masked calls, by (masked) call id, until the tool takes them. */
  const real = new Map<string, string>();
  const ids = createIdMasking(mask, toolCallIds);

  async function* masked(
    stream: AsyncIterable<ModelStreamItem>,
  ): AsyncGenerator<ModelStreamItem> {
    const segments = new Map<string, SegmentMasker>();
    try {
      for await (const item of stream) {
        if (item.kind !== "message") {
          yield maskOutcome(item, mask);
          continue;
        }
        const msg = item.message;
        const partial = partialField(msg);
        if (partial) {
          const head = msg.type === "partial_tool_call"
            ? { ...msg, name: mask(msg.name), tool_call_id: ids.maskId(msg.tool_call_id) }
            : msg;
          yield* maskPartial(
            head as ModelPayload & Record<string, unknown>,
            partial,
            segments,
            secrets,
          );
          continue;
        }
        const complete = maskComplete(msg as CompleteMessage, mask, ids.maskId);
        if (complete.type === "tool_call") {
          ids.done((msg as ToolCallMessage).tool_call_id);
          if (complete !== msg) real.set(complete.tool_call_id, (msg as ToolCallMessage).arguments);
        }
        yield complete === msg ? item : { kind: "message", message: complete };
      }
    } catch (err) {
      // The model layer never throws; should it, its message is masked like an outcome's.
      const message = err instanceof Error ? err.message : String(err);
      const masked = mask(message);
      throw masked === message ? err : new Error(masked);
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
