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
 * @module
 */
import { z } from "zod";
import type { Fidelity } from "../../protocol/types.ts";
import type { FinishReason, SseEvent, WireDelta, WireParser } from "../wire.ts";
import { parseChunk, pickCode, usageDelta, validateChunk } from "./_openai_common.ts";

const nstr = z.string().nullish();
const nnum = z.number().nullish();

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

/** Merge streamed `reasoning_details` fragments into `into` (by index + type). */
export function mergeDetails(into: Detail[], incoming: Detail[]): void {
  for (const d of incoming) {
    const found = into.find((e) => e.index === d.index && e.type === d.type);
    if (!found) {
      into.push({ ...d });
      continue;
    }
    for (const [k, v] of Object.entries(d)) {
      if (v === undefined) continue;
      if ((k === "text" || k === "summary") && typeof v === "string") {
        found[k] = typeof found[k] === "string" ? (found[k] as string) + v : v;
      } else if (!(k in found) || found[k] === null) found[k] = v;
    }
  }
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
  pending: string;
  args: string;
}

function parses(s: string): boolean {
  if (s.trim() === "") return false;
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

/** A streaming parser for one Chat Completions response. */
export function createChatParser(): WireParser {
  // Long because: one closure-based streaming parser whose functions share the open thinking, the
  // fields, details and calls; each function is short.
  let thinkingOpen = false;
  const fields = new Set<string>();
  let details: Detail[] = [];
  const calls: Call[] = [];
  let seq = 0;

  function flushThinking(out: WireDelta[]): void {
    if (!thinkingOpen) return;
    thinkingOpen = false;
    const fidelity: Fidelity = {};
    if (fields.size === 1) fidelity.reasoning_field = [...fields][0];
    if (details.length > 0) fidelity.reasoning_details = details;
    if (Object.keys(fidelity).length > 0) out.push({ type: "thinking", thinking: "", fidelity });
    out.push({ type: "segment_end" });
    fields.clear();
    details = [];
  }

  function endCall(c: Call, out: WireDelta[]): void {
    calls.splice(calls.indexOf(c), 1);
    if (!c.started) {
      out.push({ type: "tool_call_start", key: c.key, id: c.id || c.name, name: c.name });
      if (c.pending !== "") out.push({ type: "tool_call_args", key: c.key, args: c.pending });
    }
    out.push({ type: "tool_call_end", key: c.key });
  }

  function endCalls(out: WireDelta[], onlyComplete = false, except?: Call): void {
    for (const c of [...calls]) {
      if (c === except) continue;
      if (!onlyComplete || (c.started && parses(c.args))) endCall(c, out);
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
      c = { key: `${index}:${seq++}`, index, id, name: "", started: false, pending: "", args: "" };
      calls.push(c);
    }
    if (id !== "" && c.id === "") c.id = id;
    const name = t.function?.name;
    if (name) c.name = c.started ? c.name : c.name + name;
    const args = t.function?.arguments ?? "";
    if (!c.started && c.name !== "") {
      endCalls(out, true, c);
      c.started = true;
      out.push({ type: "tool_call_start", key: c.key, id: c.id || c.name, name: c.name });
      if (c.pending !== "") {
        c.args += c.pending;
        out.push({ type: "tool_call_args", key: c.key, args: c.pending });
        c.pending = "";
      }
    }
    if (args !== "") {
      if (c.started) {
        c.args += args;
        out.push({ type: "tool_call_args", key: c.key, args });
      } else c.pending += args;
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
      if (det.length > 0) mergeDetails(details, det as Detail[]);
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
