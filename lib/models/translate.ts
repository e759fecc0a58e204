/**
 * The translator: neutral {@linkcode WireDelta}s in, OmniMessage partials and
 * complete messages out, following the segmentation rules below.
 *
 * - A text or thinking segment opens with a partial `start`, grows by
 *   `delta`s, and closes with a partial `stop` followed at once by its
 *   complete message. Type boundaries close the open segment.
 * - Thinking: fidelity keys accumulate onto the open block; a delta whose
 *   non-empty fidelity conflicts with the open block's (a shared key with a
 *   different value) starts a new block.
 * - Text: a differing `fidelity.phase` starts a new segment, and a segment
 *   that has received a `fidelity.signature` is closed before more text.
 * - Empty-content segments carrying fidelity still produce a complete message.
 * - Tool calls are completed eagerly at `tool_call_end` with their argument
 *   text exactly as streamed (empty → `{}`). Arguments that are not a JSON
 *   object do not fail the request: the call completes, and executing it
 *   answers the model with a failed output that says what is wrong.
 *
 * @module
 */
import type {
  Fidelity,
  ModelPayload,
  StopReason,
  TextMessage,
  ThinkingMessage,
  TokenCounts,
  ToolCallMessage,
} from "../protocol/types.ts";
import { partialText, partialThinking, partialToolCall } from "../protocol/builders.ts";
import { createToolCallIds, type ToolCallIds } from "./tool_call_ids.ts";
import type { FinishReason, WireDelta } from "./wire.ts";

/** What the translator has learned about the request so far. */
export interface TranslatorState {
  /** The last finish reason seen. */
  finish?: FinishReason;
  /** The last usage snapshot (later snapshots replace earlier ones). */
  usage?: TokenCounts;
  /** The first error reported by the provider. */
  error?: { message: string; code?: string | undefined; status?: number | undefined };
  /** Whether any content delta (text, thinking or tool call) arrived. */
  content: boolean;
}

/** A stateful translator for one request. */
export interface Translator {
  /** Translate one delta into zero or more payloads. */
  push(delta: WireDelta): ModelPayload[];
  /**
   * Close every open segment with `status` (on `completed`, a final segment
   * gets `failed` when the finish reason was `length` or unknown).
   */
  close(status: StopReason): ModelPayload[];
  /** Accumulated request state. */
  readonly state: TranslatorState;
}

type Segment =
  | { kind: "text"; text: string; fidelity: Fidelity }
  | { kind: "thinking"; thinking: string; fidelity: Fidelity };

interface OpenCall {
  key: string;
  id: string;
  name: string;
  args: string;
  fidelity: Fidelity;
  /** The arguments grew past {@linkcode MAX_TOOL_ARGUMENTS}: the rest is dropped, the call fails. */
  oversize?: boolean;
}

/**
 * The most characters of arguments one tool call may stream (8 Mi). A model
 * that streams more (a 40 MB `write_file` content) would hold penguin's
 * memory at many times that size for as long as it likes: the rest is
 * dropped and the call ends `failed`, so no tool runs it.
 */
export const MAX_TOOL_ARGUMENTS = 8 * 1024 * 1024;

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

function conflicts(open: Fidelity, incoming: Fidelity): boolean {
  return Object.keys(incoming).some((k) => k in open && !same(open[k], incoming[k]));
}

function withFidelity<T extends { fidelity?: Fidelity }>(msg: T, f: Fidelity): T {
  return Object.keys(f).length > 0 ? { ...msg, fidelity: f } : msg;
}

/** A translator; `ids` allocates session-unique tool-call ids (a fresh set when omitted). */
export function createTranslator(ids: ToolCallIds = createToolCallIds()): Translator {
  // Long because: one closure-based translator whose functions share the open segment and the open
  // tool calls; each function is short.
  const state: TranslatorState = { content: false };
  let seg: Segment | undefined;
  const calls: OpenCall[] = [];

  function closeSegment(status: StopReason, out: ModelPayload[]): void {
    if (!seg) return;
    const s = seg;
    seg = undefined;
    if (s.kind === "text") {
      out.push(partialText("stop", "", status));
      out.push(
        withFidelity<TextMessage>(
          { type: "text", role: "assistant", text: s.text, stop_reason: status },
          s.fidelity,
        ),
      );
    } else {
      out.push(partialThinking("stop", "", status));
      out.push(
        withFidelity<ThinkingMessage>({
          type: "thinking",
          role: "assistant",
          thinking: s.thinking,
          stop_reason: status,
        }, s.fidelity),
      );
    }
  }

  function endCall(call: OpenCall, status: StopReason, out: ModelPayload[]): void {
    const i = calls.indexOf(call);
    if (i >= 0) calls.splice(i, 1);
    if (call.oversize) status = "failed";
    const args = call.oversize
      ? ""
      : status === "completed" && call.args.trim() === ""
      ? "{}"
      : call.args;
    out.push(partialToolCall("stop", call.id, "", "", status));
    const msg: ToolCallMessage = {
      type: "tool_call",
      role: "assistant",
      name: call.name,
      arguments: args,
      tool_call_id: call.id,
      stop_reason: status,
    };
    out.push(withFidelity(msg, call.fidelity));
  }

  function endAllCalls(status: StopReason, out: ModelPayload[]): void {
    while (calls.length > 0) endCall(calls[0]!, status, out);
  }

  function openCall(
    key: string,
    id: string,
    name: string,
    fidelity: Fidelity,
    out: ModelPayload[],
  ): OpenCall {
    const call: OpenCall = { key, id: ids.allocate(id), name, args: "", fidelity: { ...fidelity } };
    calls.push(call);
    out.push(partialToolCall("start", call.id, name));
    return call;
  }

  function text(d: { text: string; fidelity?: Fidelity | undefined }, out: ModelPayload[]): void {
    const f = d.fidelity ?? {};
    const hasF = Object.keys(f).length > 0;
    if (d.text === "" && !hasF) return;
    state.content = true;
    endAllCalls("completed", out);
    if (seg?.kind === "thinking") closeSegment("completed", out);
    if (
      seg?.kind === "text" &&
      (seg.fidelity.signature !== undefined || ("phase" in f && !same(seg.fidelity.phase, f.phase)))
    ) closeSegment("completed", out);
    if (!seg) {
      seg = { kind: "text", text: "", fidelity: {} };
      out.push(partialText("start"));
    }
    const s = seg as Extract<Segment, { kind: "text" }>;
    Object.assign(s.fidelity, f);
    if (d.text !== "") {
      s.text += d.text;
      out.push(partialText("delta", d.text));
    }
  }

  function thinking(d: { thinking: string; fidelity?: Fidelity }, out: ModelPayload[]): void {
    const f = d.fidelity ?? {};
    const hasF = Object.keys(f).length > 0;
    if (d.thinking === "" && !hasF) return;
    state.content = true;
    endAllCalls("completed", out);
    if (seg?.kind === "text") closeSegment("completed", out);
    if (seg?.kind === "thinking" && hasF && conflicts(seg.fidelity, f)) {
      closeSegment("completed", out);
    }
    if (!seg) {
      seg = { kind: "thinking", thinking: "", fidelity: {} };
      out.push(partialThinking("start"));
    }
    const s = seg as Extract<Segment, { kind: "thinking" }>;
    Object.assign(s.fidelity, f);
    if (d.thinking !== "") {
      s.thinking += d.thinking;
      out.push(partialThinking("delta", d.thinking));
    }
  }

  return {
    state,
    push(d: WireDelta): ModelPayload[] {
      const out: ModelPayload[] = [];
      switch (d.type) {
        case "text":
          text(d, out);
          break;
        case "thinking":
          thinking(d, out);
          break;
        case "segment_end":
          closeSegment("completed", out);
          break;
        case "tool_call_start": {
          state.content = true;
          closeSegment("completed", out);
          const dup = calls.find((c) => c.key === d.key);
          if (dup) endCall(dup, "completed", out);
          openCall(d.key, d.id, d.name, d.fidelity ?? {}, out);
          break;
        }
        case "tool_call_args": {
          if (d.args === "") break;
          const call = calls.find((c) => c.key === d.key) ?? openCall(d.key, d.key, "", {}, out);
          if (call.oversize) break;
          if (call.args.length + d.args.length > MAX_TOOL_ARGUMENTS) {
            call.oversize = true;
            call.args = "";
            break;
          }
          call.args += d.args;
          out.push(partialToolCall("delta", call.id, "", d.args));
          break;
        }
        case "tool_call_end": {
          const call = calls.find((c) => c.key === d.key);
          if (call) {
            if (d.fidelity) Object.assign(call.fidelity, d.fidelity);
            endCall(call, "completed", out);
          }
          break;
        }
        case "usage":
          state.usage = {
            cache_read: d.cache_read,
            cache_write: d.cache_write,
            output: d.output,
            total: d.cache_read + d.cache_write + d.output,
          };
          break;
        case "finish":
          state.finish = d.reason;
          break;
        case "error":
          state.error ??= { message: d.message, code: d.code, status: d.status };
          break;
      }
      return out;
    },
    close(status: StopReason): ModelPayload[] {
      const out: ModelPayload[] = [];
      const truncated = status === "completed" &&
        (state.finish === "length" || state.finish === "other");
      const lastIsSeg = seg !== undefined && calls.length === 0;
      if (seg) closeSegment(truncated && lastIsSeg ? "failed" : status, out);
      while (calls.length > 0) {
        const call = calls[0]!;
        endCall(call, truncated && calls.length === 1 ? "failed" : status, out);
      }
      return out;
    },
  };
}
