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
 * - What one response may hold is bounded (./limits.ts): arguments past
 *   the per-call or the per-response limit, text, reasoning, opaque
 *   fidelity, tool calls or messages past theirs stop the request with a
 *   {@linkcode TOO_LARGE_CODE} error naming the limit and how much came; a
 *   call cut off there ends `failed` without its arguments (no tool runs it).
 *   So does a call whose arguments hold too many values, objects and
 *   arrays, or nest them too deep, or whose values with those of the calls
 *   before it pass the response's bound, judged when it completes.
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
import { formatSize } from "../protocol/format_size.ts";
import { createToolCallIds, type ToolCallIds } from "./tool_call_ids.ts";
import type { FinishReason, WireDelta } from "./wire.ts";
import { TextBuffer } from "./_text_buffer.ts";
import { jsonShape } from "../protocol/json_shape.ts";
import { createHolderLedger } from "../protocol/holder_ledger.ts";
import { jsonLength } from "../protocol/json_length.ts";
import {
  jsonProblemError,
  MAX_PROCESS_RESPONSES,
  MAX_RESPONSE_FIDELITY,
  MAX_RESPONSE_MESSAGES,
  MAX_RESPONSE_TEXT,
  MAX_RESPONSE_THINKING,
  MAX_RESPONSE_TOOL_ARGUMENT_VALUES,
  MAX_RESPONSE_TOOL_ARGUMENTS,
  MAX_RESPONSE_TOOL_CALLS,
  MAX_TOOL_ARGUMENTS,
  MAX_TOOL_CALL_NAME,
  mib,
  TOO_LARGE_CODE,
} from "./limits.ts";

export { MAX_TOOL_ARGUMENTS };

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
  | { kind: "text"; text: TextBuffer; fidelity: Fidelity }
  | { kind: "thinking"; thinking: TextBuffer; fidelity: Fidelity };

interface OpenCall {
  key: string;
  id: string;
  name: string;
  args: TextBuffer;
  fidelity: Fidelity;
  /**
   * The arguments grew past {@linkcode MAX_TOOL_ARGUMENTS} (or the response's
   * {@linkcode MAX_RESPONSE_TOOL_ARGUMENTS}): they are dropped, the call fails.
   */
  oversize?: boolean;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

function conflicts(open: Fidelity, incoming: Fidelity): boolean {
  return Object.keys(incoming).some((k) => k in open && !same(open[k], incoming[k]));
}

function withFidelity<T extends { fidelity?: Fidelity }>(msg: T, f: Fidelity): T {
  return Object.keys(f).length > 0 ? { ...msg, fidelity: f } : msg;
}

/** Characters kept so far in one response: text, reasoning, arguments, fidelity JSON, and counts. */
interface Kept {
  text: number;
  thinking: number;
  args: number;
  fidelity: number;
  messages: number;
  calls: number;
  /** JSON values in the arguments of the calls completed (./json_shape.ts). */
  values: number;
}

/** What the translator's steps share: the request state, the open segment and the open calls. */
interface Run {
  state: TranslatorState;
  ids: ToolCallIds;
  seg: Segment | undefined;
  calls: OpenCall[];
  kept: Kept;
}

/** What the responses this process reads keep now, each its text, reasoning and arguments. */
const running = createHolderLedger();

/**
 * Count what `r` keeps in {@linkcode running}; false (the request stopped, as past a limit of
 * one response) once the responses read at once keep more than {@linkcode MAX_PROCESS_RESPONSES}.
 */
function withinProcess(r: Run): boolean {
  const mine = r.kept.text + r.kept.thinking + r.kept.args + r.kept.fidelity;
  running.hold(r, mine);
  const all = running.heldBesides(r) + mine;
  if (all <= MAX_PROCESS_RESPONSES) return true;
  r.state.error ??= {
    message:
      `The model responses this penguin is reading hold more than ${
        mib(MAX_PROCESS_RESPONSES)
      } of text, reasoning, arguments and opaque payloads together (a session and its subagents); ` +
      `penguin stopped ` +
      `reading this one at ${formatSize(all)} (a limit on what they may hold at once)`,
    code: TOO_LARGE_CODE,
  };
  return false;
}

/**
 * Stop the request: the first limit passed is the error. `seen` is how
 * many characters of `what` came (at least `limit`, when known).
 */
function tooLarge(r: Run, what: string, limit: number, seen?: number, hint = ""): void {
  const at = seen === undefined ? "" : ` at ${formatSize(seen)}`;
  r.state.error ??= {
    message: `The model's response has more than ${mib(limit)} of ${what}; ` +
      `penguin stopped reading it${at} (a limit on what one response may hold${hint})`,
    code: TOO_LARGE_CODE,
  };
}

/**
 * Arguments of `call` passed a limit (`adding` more were about to be kept):
 * they are dropped, the call will end `failed`, and the request stops.
 */
function oversizeCall(r: Run, call: OpenCall, adding = 0): void {
  const own = call.args.length + adding;
  const name = call.name === "" ? "a tool call" : `a tool call (${call.name})`;
  const hint = "; ask the model to write large content in smaller parts";
  if (own > MAX_TOOL_ARGUMENTS || adding === 0) {
    tooLarge(r, `arguments in ${name}`, MAX_TOOL_ARGUMENTS, adding === 0 ? undefined : own, hint);
  } else {
    const all = r.kept.args + adding;
    tooLarge(r, "tool-call arguments over its calls", MAX_RESPONSE_TOOL_ARGUMENTS, all, hint);
  }
  call.oversize = true;
  r.kept.args -= call.args.length;
  call.args.clear();
}

/**
 * Arguments of `call` that would parse into too many values, objects and
 * arrays, or nest too deep — alone, or with the calls before it in the
 * response (./limits.ts): dropped like oversize ones, and the request
 * stops, so no tool parses or runs them.
 */
function costlyCall(r: Run, call: OpenCall): void {
  const name = call.name === "" ? "a tool call" : `a tool call (${call.name})`;
  const shape = jsonShape(call.args.text());
  r.kept.values += shape.values;
  const costly = jsonProblemError(shape.problem, `arguments in ${name}`) ??
    (r.kept.values > MAX_RESPONSE_TOOL_ARGUMENT_VALUES ? manyValues() : undefined);
  if (!costly) return;
  r.state.error ??= costly;
  call.oversize = true;
}

/** The error of a response whose calls' arguments hold more than {@linkcode MAX_RESPONSE_TOOL_ARGUMENT_VALUES} values. */
function manyValues(): { message: string; code: string } {
  return {
    message:
      `The model's response has more than ${MAX_RESPONSE_TOOL_ARGUMENT_VALUES} JSON values ` +
      "in tool-call arguments over its calls; penguin stopped reading it (a limit on what one " +
      "response may hold; ask the model to make fewer calls at once)",
    code: TOO_LARGE_CODE,
  };
}

/** Count `f` against the fidelity limit; false when it is passed. */
function countFidelity(r: Run, f: Fidelity): boolean {
  if (Object.keys(f).length === 0) return true;
  r.kept.fidelity += jsonLength(f); // not stringified: a signature may be megabytes
  if (r.kept.fidelity <= MAX_RESPONSE_FIDELITY) return withinProcess(r);
  tooLarge(r, "signatures and other opaque payloads", MAX_RESPONSE_FIDELITY);
  return false;
}

/**
 * Whether a call's name, id and wire key are within {@linkcode MAX_TOOL_CALL_NAME}; else the
 * request stops. No response bound counted them: a hundred calls named with a megabyte each took
 * penguin to 394 MB, megabyte ids to 4.3 GB (attack round 25 bounded C18).
 */
function shortNames(r: Run, key: string, id: string, name: string): boolean {
  const longest = Math.max(key.length, id.length, name.length);
  if (longest <= MAX_TOOL_CALL_NAME) return true;
  r.state.error ??= {
    message: `The model's response has a tool call whose name or id is longer than ` +
      `${MAX_TOOL_CALL_NAME} characters (${longest}); penguin stopped reading it (a limit on ` +
      "what one response may hold)",
    code: TOO_LARGE_CODE,
  };
  return false;
}

/** Count one more message; false when the limit is passed. */
function countMessage(r: Run): boolean {
  if (++r.kept.messages <= MAX_RESPONSE_MESSAGES) return true;
  r.state.error ??= {
    message: `The model's response has more than ${MAX_RESPONSE_MESSAGES} messages; ` +
      "penguin stopped reading it (a limit on what one response may hold)",
    code: TOO_LARGE_CODE,
  };
  return false;
}

/** Count one more tool call (and message); false when a limit is passed. */
function countCall(r: Run): boolean {
  if (++r.kept.calls <= MAX_RESPONSE_TOOL_CALLS) return countMessage(r);
  r.state.error ??= {
    message: `The model's response has more than ${MAX_RESPONSE_TOOL_CALLS} tool calls; ` +
      "penguin stopped reading it (a limit on what one response may hold; " +
      "ask the model to make fewer calls at once)",
    code: TOO_LARGE_CODE,
  };
  return false;
}

/** Close the open text or thinking segment, if any: its partial `stop`, then its message. */
function closeSegment(r: Run, status: StopReason, out: ModelPayload[]): void {
  if (!r.seg) return;
  const s = r.seg;
  r.seg = undefined;
  if (s.kind === "text") {
    out.push(partialText("stop", "", status));
    out.push(
      withFidelity<TextMessage>(
        { type: "text", role: "assistant", text: s.text.text(), stop_reason: status },
        s.fidelity,
      ),
    );
  } else {
    out.push(partialThinking("stop", "", status));
    out.push(
      withFidelity<ThinkingMessage>({
        type: "thinking",
        role: "assistant",
        thinking: s.thinking.text(),
        stop_reason: status,
      }, s.fidelity),
    );
  }
}

/** Complete `call` with `status` (`failed` when its arguments were dropped). */
function endCall(r: Run, call: OpenCall, status: StopReason, out: ModelPayload[]): void {
  const i = r.calls.indexOf(call);
  if (i >= 0) r.calls.splice(i, 1);
  if (!call.oversize && status === "completed") costlyCall(r, call);
  if (call.oversize) {
    status = "failed";
    r.kept.args -= call.args.length;
    call.args.clear();
  }
  const text = call.args.text();
  const args = call.oversize ? "" : status === "completed" && text.trim() === "" ? "{}" : text;
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

function endAllCalls(r: Run, status: StopReason, out: ModelPayload[]): void {
  while (r.calls.length > 0) endCall(r, r.calls[0]!, status, out);
}

function openCall(
  r: Run,
  key: string,
  id: string,
  name: string,
  fidelity: Fidelity,
  out: ModelPayload[],
): OpenCall {
  const call: OpenCall = {
    key,
    id: r.ids.allocate(id),
    name,
    args: new TextBuffer(),
    fidelity: { ...fidelity },
  };
  r.calls.push(call);
  out.push(partialToolCall("start", call.id, name));
  return call;
}

function text(
  r: Run,
  d: { text: string; fidelity?: Fidelity | undefined },
  out: ModelPayload[],
): void {
  const f = d.fidelity ?? {};
  const hasF = Object.keys(f).length > 0;
  if (d.text === "" && !hasF) return;
  r.state.content = true;
  if (!countFidelity(r, f)) return;
  r.kept.text += d.text.length;
  if (r.kept.text > MAX_RESPONSE_TEXT) return tooLarge(r, "text", MAX_RESPONSE_TEXT, r.kept.text);
  if (!withinProcess(r)) return;
  endAllCalls(r, "completed", out);
  if (r.seg?.kind === "thinking") closeSegment(r, "completed", out);
  if (
    r.seg?.kind === "text" &&
    (r.seg.fidelity.signature !== undefined ||
      ("phase" in f && !same(r.seg.fidelity.phase, f.phase)))
  ) closeSegment(r, "completed", out);
  if (!r.seg) {
    if (!countMessage(r)) return;
    r.seg = { kind: "text", text: new TextBuffer(), fidelity: {} };
    out.push(partialText("start"));
  }
  const s = r.seg as Extract<Segment, { kind: "text" }>;
  Object.assign(s.fidelity, f);
  if (d.text !== "") {
    s.text.append(d.text);
    out.push(partialText("delta", d.text));
  }
}

function thinking(
  r: Run,
  d: { thinking: string; fidelity?: Fidelity },
  out: ModelPayload[],
): void {
  const f = d.fidelity ?? {};
  const hasF = Object.keys(f).length > 0;
  if (d.thinking === "" && !hasF) return;
  r.state.content = true;
  if (!countFidelity(r, f)) return;
  r.kept.thinking += d.thinking.length;
  if (r.kept.thinking > MAX_RESPONSE_THINKING) {
    return tooLarge(r, "reasoning", MAX_RESPONSE_THINKING, r.kept.thinking);
  }
  if (!withinProcess(r)) return;
  endAllCalls(r, "completed", out);
  if (r.seg?.kind === "text") closeSegment(r, "completed", out);
  if (r.seg?.kind === "thinking" && hasF && conflicts(r.seg.fidelity, f)) {
    closeSegment(r, "completed", out);
  }
  if (!r.seg) {
    if (!countMessage(r)) return;
    r.seg = { kind: "thinking", thinking: new TextBuffer(), fidelity: {} };
    out.push(partialThinking("start"));
  }
  const s = r.seg as Extract<Segment, { kind: "thinking" }>;
  Object.assign(s.fidelity, f);
  if (d.thinking !== "") {
    s.thinking.append(d.thinking);
    out.push(partialThinking("delta", d.thinking));
  }
}

function toolCallStart(
  r: Run,
  d: Extract<WireDelta, { type: "tool_call_start" }>,
  out: ModelPayload[],
): void {
  r.state.content = true;
  closeSegment(r, "completed", out);
  const dup = r.calls.find((c) => c.key === d.key);
  if (dup) endCall(r, dup, "completed", out);
  if (!shortNames(r, d.key, d.id, d.name)) return;
  if (!countFidelity(r, d.fidelity ?? {}) || !countCall(r)) return;
  const call = openCall(r, d.key, d.id, d.name, d.fidelity ?? {}, out);
  if (d.oversize) oversizeCall(r, call);
}

function toolCallArgs(
  r: Run,
  d: Extract<WireDelta, { type: "tool_call_args" }>,
  out: ModelPayload[],
): void {
  if (d.args === "") return;
  let call = r.calls.find((c) => c.key === d.key);
  if (!call) {
    if (!shortNames(r, d.key, d.key, "") || !countCall(r)) return;
    call = openCall(r, d.key, d.key, "", {}, out);
  }
  if (call.oversize) return;
  if (
    call.args.length + d.args.length > MAX_TOOL_ARGUMENTS ||
    r.kept.args + d.args.length > MAX_RESPONSE_TOOL_ARGUMENTS
  ) {
    oversizeCall(r, call, d.args.length);
    return;
  }
  r.kept.args += d.args.length;
  if (!withinProcess(r)) return;
  call.args.append(d.args);
  out.push(partialToolCall("delta", call.id, "", d.args));
}

function toolCallEnd(
  r: Run,
  d: Extract<WireDelta, { type: "tool_call_end" }>,
  out: ModelPayload[],
): void {
  const call = r.calls.find((c) => c.key === d.key);
  if (call) {
    if (d.fidelity) {
      if (!countFidelity(r, d.fidelity)) return;
      Object.assign(call.fidelity, d.fidelity);
    }
    if (d.oversize) {
      oversizeCall(r, call);
      return;
    }
    endCall(r, call, "completed", out);
  }
}

/** Translate one delta into zero or more payloads. */
function push(r: Run, d: WireDelta): ModelPayload[] {
  const out: ModelPayload[] = [];
  switch (d.type) {
    case "text":
      text(r, d, out);
      break;
    case "thinking":
      thinking(r, d, out);
      break;
    case "segment_end":
      closeSegment(r, "completed", out);
      break;
    case "tool_call_start":
      toolCallStart(r, d, out);
      break;
    case "tool_call_args":
      toolCallArgs(r, d, out);
      break;
    case "tool_call_end":
      toolCallEnd(r, d, out);
      break;
    case "usage":
      r.state.usage = {
        cache_read: d.cache_read,
        cache_write: d.cache_write,
        output: d.output,
        total: d.cache_read + d.cache_write + d.output,
      };
      break;
    case "finish":
      r.state.finish = d.reason;
      break;
    case "error":
      r.state.error ??= { message: d.message, code: d.code, status: d.status };
      break;
  }
  return out;
}

/**
 * Close every open segment with `status` (on `completed`, a final segment
 * gets `failed` when the finish reason was `length` or unknown).
 */
function close(r: Run, status: StopReason): ModelPayload[] {
  // The response is read: what it keeps goes to the conversation, out of the process's count.
  running.hold(r, 0);
  const out: ModelPayload[] = [];
  const truncated = status === "completed" &&
    (r.state.finish === "length" || r.state.finish === "other");
  const lastIsSeg = r.seg !== undefined && r.calls.length === 0;
  if (r.seg) closeSegment(r, truncated && lastIsSeg ? "failed" : status, out);
  while (r.calls.length > 0) {
    const call = r.calls[0]!;
    endCall(r, call, truncated && r.calls.length === 1 ? "failed" : status, out);
  }
  return out;
}

/** A translator; `ids` allocates session-unique tool-call ids (a fresh set when omitted). */
export function createTranslator(ids: ToolCallIds = createToolCallIds()): Translator {
  const r: Run = {
    state: { content: false },
    ids,
    seg: undefined,
    calls: [],
    kept: { text: 0, thinking: 0, args: 0, fidelity: 0, messages: 0, calls: 0, values: 0 },
  };
  return {
    state: r.state,
    push: (d) => push(r, d),
    close: (status) => close(r, status),
  };
}
