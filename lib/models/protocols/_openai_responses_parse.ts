/**
 * Responses API parsing: streamed `response.*` events and non-streamed
 * `response` bodies → neutral deltas.
 *
 * Each reasoning item becomes one thinking block: summary or reasoning-text
 * deltas are its text (summary parts joined by a blank line), and at
 * `output_item.done` its fidelity is attached — the item's `id` and
 * `encrypted_content` (and `format` / `signature` when a server sends them),
 * verbatim, plus `channel: "summary"` when the text came from summary parts.
 * Message items with a `phase` open a text segment carrying `fidelity.phase`.
 * Segments close when the next output item starts, so a final `incomplete`
 * status can still mark the last one.
 *
 * @module
 */
import { z } from "zod";
import type { Fidelity } from "../../protocol/types.ts";
import type { FinishReason, SseEvent, WireDelta, WireParser } from "../wire.ts";
import { parseChunk, pickCode, usageDelta, validateChunk } from "./_openai_common.ts";
import { nnum, nstr } from "./_parse_common.ts";

const Part = z.looseObject({ type: nstr, text: nstr });

const Item = z.looseObject({
  type: z.string(),
  id: nstr,
  phase: nstr,
  call_id: nstr,
  name: nstr,
  arguments: nstr,
  encrypted_content: nstr,
  summary: z.array(Part).nullish(),
  content: z.array(Part).nullish(),
});

const Usage = z.object({
  input_tokens: nnum,
  output_tokens: nnum,
  input_tokens_details: z.object({ cached_tokens: nnum }).nullish(),
});

const ErrorObj = z.looseObject({
  message: nstr,
  code: z.union([z.string(), z.number()]).nullish(),
  type: nstr,
});

const Response = z.object({
  status: nstr,
  usage: Usage.nullish(),
  error: ErrorObj.nullish(),
  incomplete_details: z.looseObject({ reason: nstr }).nullish(),
  output: z.array(Item).nullish(),
});

/** One streamed event (unknown types and fields tolerated). */
export const ResponsesEvent = z.looseObject({
  type: z.string(),
  item: Item.nullish(),
  item_id: nstr,
  delta: nstr,
  arguments: nstr,
  summary_index: nnum,
  response: Response.nullish(),
  error: ErrorObj.nullish(),
  message: nstr,
  code: z.union([z.string(), z.number()]).nullish(),
});

type ItemT = z.infer<typeof Item>;
type ResponseT = z.infer<typeof Response>;

const FIDELITY_KEYS = ["id", "encrypted_content", "format", "signature"] as const;

function reasoningFidelity(item: ItemT, summary: boolean): Fidelity {
  const f: Fidelity = {};
  for (const k of FIDELITY_KEYS) {
    const v = (item as Record<string, unknown>)[k];
    if (v !== undefined && v !== null) f[k] = v;
  }
  if (summary) f.channel = "summary";
  return f;
}

function partsText(parts: z.infer<typeof Part>[] | null | undefined, sep: string): string {
  return (parts ?? []).map((p) => p.text ?? "").filter((t) => t !== "").join(sep);
}

function responseUsage(u: z.infer<typeof Usage>): WireDelta {
  return usageDelta(
    u.input_tokens ?? 0,
    u.input_tokens_details?.cached_tokens ?? 0,
    u.output_tokens ?? 0,
  );
}

function errorDelta(e: z.infer<typeof ErrorObj> | undefined, fallback?: string): WireDelta {
  const d: WireDelta = {
    type: "error",
    message: e?.message ?? fallback ?? "provider reported an error",
  };
  const code = pickCode(e?.code, e?.type);
  if (code !== undefined) d.code = code;
  if (typeof e?.code === "number") d.status = e.code;
  return d;
}

function incompleteReason(r: ResponseT): FinishReason {
  return r.incomplete_details?.reason === "content_filter" ? "content_filter" : "length";
}

function finishOf(r: ResponseT, sawCall: boolean, out: WireDelta[]): void {
  if (r.usage) out.push(responseUsage(r.usage));
  const status = r.status ?? "completed";
  if (status === "completed") {
    out.push({ type: "finish", reason: sawCall ? "tool_call" : "stop", raw: status });
  } else if (status === "incomplete") {
    out.push({ type: "finish", reason: incompleteReason(r), raw: status });
  } else if (status === "failed" || status === "cancelled") {
    out.push(errorDelta(r.error ?? undefined, `response ${status}`));
  }
}

/** A streaming parser for one Responses API stream. */
export function createResponsesParser(): WireParser {
  // Long because: one closure-based streaming parser whose functions share the open item and the
  // arguments; each is short apart from push, which says why.
  let sawCall = false;
  let item:
    | { type: string; id: string; text: boolean; summary: boolean; lastPart: number }
    | undefined;
  const args = new Map<string, boolean>();

  return {
    push(ev: SseEvent): WireDelta[] {
      // Long because: one switch over the Responses event types, a few lines each; the cases share
      // the open item.
      const data = ev.data.trim();
      if (data === "" || data === "[DONE]") return [];
      const r = parseChunk(data, ResponsesEvent, "a Responses event");
      if (!r.ok) return [r.delta];
      const e = r.value;
      const out: WireDelta[] = [];
      switch (e.type) {
        case "response.output_item.added": {
          out.push({ type: "segment_end" });
          const it = e.item;
          if (!it) break;
          item = { type: it.type, id: it.id ?? "", text: false, summary: false, lastPart: 0 };
          if (it.type === "message" && it.phase) {
            out.push({ type: "text", text: "", fidelity: { phase: it.phase } });
          } else if (it.type === "function_call") {
            sawCall = true;
            const key = it.id || it.call_id || it.name || "";
            args.set(key, false);
            out.push({
              type: "tool_call_start",
              key,
              id: it.call_id || it.name || key,
              name: it.name ?? "",
            });
          }
          break;
        }
        case "response.output_text.delta":
        case "response.refusal.delta":
          if (item) item.text = true;
          if (e.delta) out.push({ type: "text", text: e.delta });
          break;
        case "response.reasoning_summary_text.delta":
        case "response.reasoning_text.delta": {
          if (!e.delta) break;
          const summary = e.type === "response.reasoning_summary_text.delta";
          let text = e.delta;
          if (item) {
            const part = e.summary_index ?? 0;
            if (item.text && part !== item.lastPart) text = `\n\n${text}`;
            item.lastPart = part;
            item.text = true;
            item.summary ||= summary;
          }
          out.push({ type: "thinking", thinking: text });
          break;
        }
        case "response.function_call_arguments.delta": {
          const key = e.item_id ?? "";
          if (e.delta) {
            args.set(key, true);
            out.push({ type: "tool_call_args", key, args: e.delta });
          }
          break;
        }
        case "response.function_call_arguments.done": {
          const key = e.item_id ?? "";
          if (args.get(key) === false && e.arguments) {
            args.set(key, true);
            out.push({ type: "tool_call_args", key, args: e.arguments });
          }
          break;
        }
        case "response.output_item.done": {
          const it = e.item;
          if (!it) break;
          if (it.type === "reasoning") {
            const streamed = item?.type === "reasoning" && item.text;
            const summary = streamed ? item!.summary : partsText(it.summary, "") !== "";
            const text = streamed
              ? ""
              : partsText(it.summary, "\n\n") || partsText(it.content, "\n\n");
            out.push({
              type: "thinking",
              thinking: text,
              fidelity: reasoningFidelity(it, summary),
            });
          } else if (it.type === "message") {
            if (!(item?.type === "message" && item.text)) {
              const text = partsText(it.content, "");
              const fidelity = it.phase ? { phase: it.phase } : undefined;
              if (text !== "" || fidelity) out.push({ type: "text", text, fidelity });
            }
          } else if (it.type === "function_call") {
            const key = it.id || it.call_id || it.name || "";
            if (args.get(key) === false && it.arguments) {
              out.push({ type: "tool_call_args", key, args: it.arguments });
            }
            args.delete(key);
            out.push({ type: "tool_call_end", key });
          }
          break;
        }
        case "response.completed":
        case "response.incomplete":
        case "response.failed":
        case "response.cancelled":
          if (e.response) finishOf(e.response, sawCall, out);
          else {out.push({
              type: "finish",
              reason: e.type === "response.completed" ? "stop" : "other",
            });}
          break;
        case "error":
          out.push(
            e.error
              ? errorDelta(e.error)
              : errorDelta({ message: e.message, code: e.code }, "stream error"),
          );
          break;
      }
      return out;
    },
    end(): WireDelta[] {
      return [];
    },
  };
}

/** Deltas of a non-streamed `response` body. */
export function parseResponsesBody(body: unknown): WireDelta[] {
  const r = validateChunk(body, Response, "a Responses body");
  if (!r.ok) return [r.delta];
  const out: WireDelta[] = [];
  let sawCall = false;
  for (const it of r.value.output ?? []) {
    if (it.type === "reasoning") {
      const summary = partsText(it.summary, "\n\n");
      const text = summary || partsText(it.content, "\n\n");
      out.push({
        type: "thinking",
        thinking: text,
        fidelity: reasoningFidelity(it, summary !== ""),
      });
      out.push({ type: "segment_end" });
    } else if (it.type === "message") {
      const text = partsText(it.content, "");
      out.push({ type: "text", text, fidelity: it.phase ? { phase: it.phase } : undefined });
      out.push({ type: "segment_end" });
    } else if (it.type === "function_call") {
      sawCall = true;
      const key = it.id || it.call_id || it.name || "";
      out.push({
        type: "tool_call_start",
        key,
        id: it.call_id || it.name || key,
        name: it.name ?? "",
      });
      if (it.arguments) out.push({ type: "tool_call_args", key, args: it.arguments });
      out.push({ type: "tool_call_end", key });
    }
  }
  finishOf(r.value, sawCall, out);
  return out;
}
