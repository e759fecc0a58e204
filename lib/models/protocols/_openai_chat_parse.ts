/**
 * Chat Completions response parsing: streamed `chat.completion.chunk`s and
 * non-streamed `chat.completion` bodies → neutral deltas.
 *
 * Reasoning arrives in `reasoning_content` (DeepSeek, llama.cpp, vLLM) or
 * `reasoning` (OpenRouter, Ollama), optionally with OpenRouter's
 * `reasoning_details[]`. The thinking block's fidelity is emitted once, when
 * the block ends: `reasoning_field` (only when exactly one field was used) and
 * `reasoning_details` (entries merged by `index` + `type`: `text`/`summary`
 * concatenated, other keys — `signature`, `data`, `id`, `format` — kept as
 * sent), which is the form OpenRouter expects back on the assistant message.
 *
 * A call's arguments are kept here (to tell whether they are complete JSON
 * when another call starts: each character is scanned once as it comes, and
 * the arguments are parsed once, when their object closes — never again per
 * new call) only up to the limits of ../limits.ts; past
 * them the call ends at once, marked `oversize`, its arguments are dropped
 * (the delta that passed the limit is still handed on, for the translator
 * to say how much came) and the rest of its deltas are skipped; the
 * translator then stops the response. Reasoning details past the fidelity
 * limit stop the response with a {@linkcode TOO_LARGE_CODE} error. Calls
 * past {@linkcode MAX_RESPONSE_TOOL_CALLS} are not passed on (the translator
 * stops the response at the first of them), so one event listing thousands
 * of calls costs no more.
 *
 * @module
 */
import { z } from "zod";
import type { Fidelity } from "../../protocol/types.ts";
import type { FinishReason, SseEvent, WireDelta, WireParser } from "../wire.ts";
import { jsonShapeProblem } from "../../protocol/json_shape.ts";
import { parseChunk, pickCode, usageDelta, validateChunk } from "./_openai_common.ts";
import { nnum, nstr } from "./_parse_common.ts";
import { TextBuffer } from "../_text_buffer.ts";
import { createJsonCloseScanner, type JsonCloseScanner } from "./_json_close.ts";
import {
  MAX_RESPONSE_FIDELITY,
  MAX_RESPONSE_TOOL_ARGUMENTS,
  MAX_RESPONSE_TOOL_CALLS,
  MAX_TOOL_ARGUMENTS,
  mib,
  TOO_LARGE_CODE,
} from "../limits.ts";

const ToolCallDelta = z.object({
  index: nnum,
  id: nstr,
  function: z.object({ name: nstr, arguments: nstr }).nullish(),
});

const Detail = z.looseObject({ type: z.string().nullish(), index: nnum });

const Delta = z.object({
  content: nstr,
  refusal: nstr,
  reasoning_content: nstr,
  reasoning: nstr,
  reasoning_details: z.array(Detail).nullish(),
  tool_calls: z.array(ToolCallDelta).nullish(),
});

const Usage = z.object({
  prompt_tokens: nnum,
  completion_tokens: nnum,
  prompt_tokens_details: z.object({ cached_tokens: nnum }).nullish(),
  prompt_cache_hit_tokens: nnum,
});

const ErrorObj = z.looseObject({
  message: nstr,
  code: z.union([z.string(), z.number()]).nullish(),
  type: nstr,
});

/** One streamed chunk (unknown fields tolerated). */
export const ChatChunk = z.object({
  choices: z.array(z.object({ delta: Delta.nullish(), finish_reason: nstr })).nullish(),
  usage: Usage.nullish(),
  error: ErrorObj.nullish(),
});

/** A non-streamed completion body. */
export const ChatBody = z.object({
  choices: z.array(z.object({ message: Delta.nullish(), finish_reason: nstr })).nullish(),
  usage: Usage.nullish(),
  error: ErrorObj.nullish(),
});

/** Neutral finish reason of a Chat Completions `finish_reason`. */
export function chatFinish(raw: string): FinishReason {
  switch (raw) {
    case "stop":
    case "eos":
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "length":
    case "max_tokens":
      return "length";
    case "tool_calls":
    case "function_call":
    case "tool_use":
      return "tool_call";
    case "content_filter":
      return "content_filter";
    case "refusal":
      return "refusal";
    default:
      return "other";
  }
}

type Detail = Record<string, unknown>;

/**
 * Streamed `reasoning_details` fragments merged by index + type: `text` and
 * `summary` concatenated (in flat blocks, not a rope of fragments), other
 * keys kept as first sent.
 */
class DetailMerger {
  readonly entries: Detail[] = [];
  #byKey = new Map<string, Detail>();
  #texts = new Map<Detail, Map<string, TextBuffer>>();

  merge(incoming: Detail[]): void {
    for (const d of incoming) {
      const key = detailKey(d);
      const found = this.#byKey.get(key);
      if (!found) {
        const entry = { ...d };
        this.entries.push(entry);
        this.#byKey.set(key, entry);
        continue;
      }
      for (const [k, v] of Object.entries(d)) {
        if (v === undefined) continue;
        if ((k === "text" || k === "summary") && typeof v === "string") {
          if (typeof found[k] !== "string") {
            found[k] = v;
            continue;
          }
          let texts = this.#texts.get(found);
          if (!texts) this.#texts.set(found, texts = new Map());
          let buf = texts.get(k);
          if (!buf) {
            texts.set(k, buf = new TextBuffer());
            buf.append(found[k] as string);
          }
          buf.append(v);
        } else if (!(k in found) || found[k] === null) found[k] = v;
      }
    }
  }

  /** The merged entries, texts joined. */
  result(): Detail[] {
    for (const [entry, texts] of this.#texts) {
      for (const [k, buf] of texts) entry[k] = buf.text();
    }
    this.#texts.clear();
    return this.entries;
  }
}

function detailKey(d: Detail): string {
  return JSON.stringify([d.index ?? null, d.type ?? null]);
}

function detailText(details: Detail[]): string {
  let s = "";
  for (const d of details) {
    if (typeof d.text === "string") s += d.text;
    else if (typeof d.summary === "string") s += d.summary;
  }
  return s;
}

function errorDelta(e: z.infer<typeof ErrorObj>): WireDelta {
  const d: WireDelta = { type: "error", message: e.message ?? "provider reported an error" };
  const code = pickCode(e.code, e.type);
  if (code !== undefined) d.code = code;
  if (typeof e.code === "number") d.status = e.code;
  return d;
}

interface Call {
  key: string;
  index: number;
  id: string;
  name: string;
  started: boolean;
  /** Arguments that came before the name. */
  pending: TextBuffer;
  args: TextBuffer;
  /** Arguments passed a limit: dropped, and no more are passed on. */
  oversize: boolean;
  /** Its end was already passed on (an oversize call); later deltas of it are skipped. */
  closed: boolean;
  /** Where its arguments (pending ones first) stand as JSON, scanned as they come. */
  shape: JsonCloseScanner;
  /** Whether its closed arguments parse: found once, when they close. */
  valid?: boolean;
}

/** Whether the arguments of `c` are one whole JSON object or array (parsed at most once). */
function parses(c: Call): boolean {
  if (c.oversize || c.shape.state !== "closed") return false;
  if (c.valid === undefined) {
    const text = c.args.text();
    // Too costly to parse: not "whole" here; the translator stops the response at its end.
    if (jsonShapeProblem(text) !== undefined) return (c.valid = false);
    try {
      JSON.parse(text);
      c.valid = true;
    } catch {
      c.valid = false;
    }
  }
  return c.valid;
}

/** A streaming parser for one Chat Completions response. */
export function createChatParser(): WireParser {
  // Long because: one closure-based streaming parser whose functions share the open thinking, the
  // fields, details and calls; each function is short.
  let thinkingOpen = false;
  const fields = new Set<string>();
  let details = new DetailMerger();
  /** Characters of `reasoning_details` received in this response (as JSON). */
  let detailChars = 0;
  const calls: Call[] = [];
  /** Characters of arguments the open calls hold. */
  let held = 0;
  let seq = 0;

  function flushThinking(out: WireDelta[]): void {
    if (!thinkingOpen) return;
    thinkingOpen = false;
    const fidelity: Fidelity = {};
    if (fields.size === 1) fidelity.reasoning_field = [...fields][0];
    if (details.entries.length > 0) fidelity.reasoning_details = details.result();
    if (Object.keys(fidelity).length > 0) out.push({ type: "thinking", thinking: "", fidelity });
    out.push({ type: "segment_end" });
    fields.clear();
    details = new DetailMerger();
  }

  function start(c: Call, out: WireDelta[]): void {
    c.started = true;
    out.push({
      type: "tool_call_start",
      key: c.key,
      id: c.id || c.name,
      name: c.name,
      ...(c.oversize ? { oversize: true } : {}),
    });
    if (c.oversize) {
      close(c, out);
      return;
    }
    if (c.pending.length > 0) {
      const pending = c.pending.text();
      c.pending.clear();
      c.args.append(pending);
      out.push({ type: "tool_call_args", key: c.key, args: pending });
    }
  }

  /** Pass on the end of `c` now (it stays listed, so its later deltas are skipped). */
  function close(c: Call, out: WireDelta[]): void {
    c.closed = true;
    out.push({ type: "tool_call_end", key: c.key, ...(c.oversize ? { oversize: true } : {}) });
  }

  function endCall(c: Call, out: WireDelta[]): void {
    calls.splice(calls.indexOf(c), 1);
    held -= c.args.length + c.pending.length;
    if (!c.started) start(c, out);
    if (!c.closed) close(c, out);
  }

  /** Keep `args` of `c` unless a limit is passed (then `c` ends, oversize); whether to pass them on. */
  function keep(c: Call, args: string, out: WireDelta[]): boolean {
    if (c.oversize) return false;
    const mine = c.args.length + c.pending.length;
    if (
      mine + args.length <= MAX_TOOL_ARGUMENTS && held + args.length <= MAX_RESPONSE_TOOL_ARGUMENTS
    ) {
      held += args.length;
      (c.started ? c.args : c.pending).append(args);
      c.shape.push(args);
      return true;
    }
    c.oversize = true;
    held -= mine;
    c.args.clear();
    c.pending.clear();
    if (c.started) {
      // Passed on unkept: the translator counts it, and stops the response at its limit.
      out.push({ type: "tool_call_args", key: c.key, args });
      close(c, out);
    }
    return false;
  }

  function endCalls(out: WireDelta[], onlyComplete = false, except?: Call): void {
    for (const c of [...calls]) {
      if (c === except) continue;
      if (!onlyComplete || (c.started && parses(c))) endCall(c, out);
    }
  }

  function toolDelta(t: z.infer<typeof ToolCallDelta>, pos: number, out: WireDelta[]): void {
    const index = t.index ?? pos;
    const id = t.id ?? "";
    let c = calls.find((x) => x.index === index);
    if (c && id !== "" && c.id !== "" && id !== c.id) {
      endCall(c, out);
      c = undefined;
    }
    if (!c) {
      // Past the limit the translator has stopped the response: no more calls are made.
      if (seq > MAX_RESPONSE_TOOL_CALLS) return;
      c = {
        key: `${index}:${seq++}`,
        index,
        id,
        name: "",
        started: false,
        pending: new TextBuffer(),
        args: new TextBuffer(),
        oversize: false,
        closed: false,
        shape: createJsonCloseScanner(),
      };
      calls.push(c);
    }
    if (id !== "" && c.id === "") c.id = id;
    const name = t.function?.name;
    if (name) c.name = c.started ? c.name : c.name + name;
    const args = t.function?.arguments ?? "";
    if (!c.started && c.name !== "") {
      endCalls(out, true, c);
      start(c, out);
    }
    if (args !== "" && keep(c, args, out) && c.started) {
      out.push({ type: "tool_call_args", key: c.key, args });
    }
  }

  function delta(d: z.infer<typeof Delta>, out: WireDelta[]): void {
    const rc = d.reasoning_content ?? undefined;
    const r = d.reasoning ?? undefined;
    const det = d.reasoning_details ?? [];
    if ((rc !== undefined && rc !== "") || (r !== undefined && r !== "") || det.length > 0) {
      if (!thinkingOpen) {
        endCalls(out);
        thinkingOpen = true;
      }
      if (rc) fields.add("reasoning_content");
      if (r) fields.add("reasoning");
      if (det.length > 0) {
        detailChars += JSON.stringify(det).length;
        if (detailChars > MAX_RESPONSE_FIDELITY) {
          out.push({
            type: "error",
            message: `The model's response has more than ${mib(MAX_RESPONSE_FIDELITY)} of ` +
              "reasoning details; penguin stopped reading it (a limit on what one response may hold)",
            code: TOO_LARGE_CODE,
          });
          return;
        }
        details.merge(det as Detail[]);
      }
      const text = rc || r || detailText(det as Detail[]);
      if (text !== "") out.push({ type: "thinking", thinking: text });
    }
    const content = (d.content ?? "") + (d.refusal ?? "");
    if (content !== "") {
      flushThinking(out);
      endCalls(out);
      out.push({ type: "text", text: content });
    }
    const tcs = d.tool_calls ?? [];
    if (tcs.length > 0) {
      flushThinking(out);
      tcs.forEach((t, i) => toolDelta(t, i, out));
    }
  }

  return {
    push(ev: SseEvent): WireDelta[] {
      const data = ev.data.trim();
      if (data === "" || data === "[DONE]") return [];
      const r = parseChunk(data, ChatChunk, "a chat.completion.chunk");
      if (!r.ok) return [r.delta];
      const chunk = r.value;
      const out: WireDelta[] = [];
      for (const choice of chunk.choices ?? []) {
        if (choice.delta) delta(choice.delta, out);
        if (choice.finish_reason) {
          flushThinking(out);
          endCalls(out);
          out.push({
            type: "finish",
            reason: chatFinish(choice.finish_reason),
            raw: choice.finish_reason,
          });
        }
      }
      if (chunk.usage) out.push(chatUsage(chunk.usage));
      if (chunk.error) out.push(errorDelta(chunk.error));
      return out;
    },
    end(): WireDelta[] {
      const out: WireDelta[] = [];
      flushThinking(out);
      endCalls(out);
      return out;
    },
  };
}

function chatUsage(u: z.infer<typeof Usage>): WireDelta {
  const cached = u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens ?? 0;
  return usageDelta(u.prompt_tokens ?? 0, cached, u.completion_tokens ?? 0);
}

/** Deltas of a non-streamed `chat.completion` body. */
export function parseChatBody(body: unknown): WireDelta[] {
  const r = validateChunk(body, ChatBody, "a chat.completion body");
  if (!r.ok) return [r.delta];
  const out: WireDelta[] = [];
  const choice = r.value.choices?.[0];
  const m = choice?.message;
  if (m) {
    const rc = m.reasoning_content ?? undefined;
    const rr = m.reasoning ?? undefined;
    const det = (m.reasoning_details ?? []) as Detail[];
    if (rc || rr || det.length > 0) {
      const fidelity: Fidelity = {};
      if (rc && !rr) fidelity.reasoning_field = "reasoning_content";
      if (rr && !rc) fidelity.reasoning_field = "reasoning";
      if (det.length > 0) fidelity.reasoning_details = det;
      out.push({ type: "thinking", thinking: rc || rr || detailText(det), fidelity });
      out.push({ type: "segment_end" });
    }
    const text = (m.content ?? "") + (m.refusal ?? "");
    if (text !== "") out.push({ type: "text", text }, { type: "segment_end" });
    (m.tool_calls ?? []).forEach((t, i) => {
      const key = `${t.index ?? i}:${i}`;
      const name = t.function?.name ?? "";
      out.push({ type: "tool_call_start", key, id: t.id || name, name });
      const args = t.function?.arguments ?? "";
      if (args !== "") out.push({ type: "tool_call_args", key, args });
      out.push({ type: "tool_call_end", key });
    });
  }
  if (choice?.finish_reason) {
    out.push({
      type: "finish",
      reason: chatFinish(choice.finish_reason),
      raw: choice.finish_reason,
    });
  }
  if (r.value.usage) out.push(chatUsage(r.value.usage));
  if (r.value.error) out.push(errorDelta(r.value.error));
  return out;
}
