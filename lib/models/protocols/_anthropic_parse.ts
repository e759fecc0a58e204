/**
 * Anthropic Messages response parsing: SSE events, non-streamed bodies and
 * HTTP error bodies → neutral {@linkcode WireDelta}s.
 *
 * Fidelity keys: `signature` on thinking blocks (from `signature_delta` or the
 * block's own `signature`), `redacted` (the opaque `data`) on the empty
 * thinking message a `redacted_thinking` block becomes.
 *
 * @module
 */
import { MALFORMED_CODE } from "../classify.ts";
import {
  MAX_RESPONSE_MESSAGES,
  MAX_RESPONSE_TOOL_ARGUMENTS,
  MAX_TOOL_ARGUMENTS,
  TOO_LARGE_CODE,
} from "../limits.ts";
import type { FinishReason, SseEvent, WireDelta, WireError, WireParser } from "../wire.ts";

import { isRecord, type Json, parseErrorBody, parseEventJson, str } from "./_parse_common.ts";

function count(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined;
}

/** HTTP status Anthropic documents for each error type (used for in-stream errors). */
const ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** Map an Anthropic `stop_reason` onto a neutral finish reason. */
export function anthropicFinish(raw: string): FinishReason {
  switch (raw) {
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_call";
    case "refusal":
      return "refusal";
    default:
      return "other";
  }
}

/** The `error` delta of an Anthropic `{type:"error", error:{type, message}}` object. */
function errorDelta(obj: Json): WireDelta {
  const err = isRecord(obj.error) ? obj.error : {};
  const code = str(err.type);
  const message = str(err.message) ?? (code ? `Anthropic reported ${code}` : "Anthropic error");
  const delta: WireDelta = { type: "error", message };
  if (code !== undefined) {
    delta.code = code;
    const status = ERROR_STATUS[code];
    if (status !== undefined) delta.status = status;
  }
  return delta;
}

/** Running token counts of one response, in Anthropic's own terms. */
interface UsageState {
  input: number;
  cacheCreate: number;
  cacheRead: number;
  output: number;
}

/**
 * Fold an Anthropic `usage` object into the running state: fields present
 * replace earlier ones (message_delta carries cumulative totals). When the
 * response ran several iterations (server-side compaction), the top-level
 * fields cover only the last one, so the state becomes the sum over
 * `usage.iterations` instead.
 */
function foldUsage(state: UsageState, usage: Json): void {
  const iterations = Array.isArray(usage.iterations) ? usage.iterations.filter(isRecord) : [];
  if (iterations.length > 0) {
    const sum = (field: string) => iterations.reduce((n, it) => n + (count(it[field]) ?? 0), 0);
    state.input = sum("input_tokens");
    state.cacheCreate = sum("cache_creation_input_tokens");
    state.cacheRead = sum("cache_read_input_tokens");
    state.output = sum("output_tokens");
    return;
  }
  state.input = count(usage.input_tokens) ?? state.input;
  state.cacheCreate = count(usage.cache_creation_input_tokens) ?? state.cacheCreate;
  state.cacheRead = count(usage.cache_read_input_tokens) ?? state.cacheRead;
  state.output = count(usage.output_tokens) ?? state.output;
}

function usageDelta(s: UsageState): WireDelta {
  return {
    type: "usage",
    cache_read: s.cacheRead,
    cache_write: s.input + s.cacheCreate,
    output: s.output,
  };
}

/** What an open content block is, by index. */
interface OpenBlock {
  kind: "text" | "thinking" | "tool" | "skip";
  /** Tool calls: whether any non-empty `input_json_delta` arrived. */
  hasArgs: boolean;
  /** Tool calls: a non-empty `input` given on `content_block_start`. */
  startInput?: string;
}

/** Deltas that open a content block (`content_block_start` or a whole body block). */
function startBlock(block: Json, key: string): { open: OpenBlock; deltas: WireDelta[] } {
  const deltas: WireDelta[] = [];
  switch (block.type) {
    case "text": {
      const text = str(block.text) ?? "";
      if (text !== "") deltas.push({ type: "text", text });
      return { open: { kind: "text", hasArgs: false }, deltas };
    }
    case "thinking": {
      const thinking = str(block.thinking) ?? "";
      const signature = str(block.signature) ?? "";
      if (thinking !== "") deltas.push({ type: "thinking", thinking });
      if (signature !== "") {
        deltas.push({ type: "thinking", thinking: "", fidelity: { signature } });
      }
      return { open: { kind: "thinking", hasArgs: false }, deltas };
    }
    case "redacted_thinking": {
      deltas.push({
        type: "thinking",
        thinking: "",
        fidelity: { redacted: str(block.data) ?? "" },
      });
      return { open: { kind: "thinking", hasArgs: false }, deltas };
    }
    case "tool_use": {
      const id = str(block.id) ?? `toolu_${key}`;
      const name = str(block.name) ?? "";
      deltas.push({ type: "tool_call_start", key, id, name });
      const open: OpenBlock = { kind: "tool", hasArgs: false };
      if (isRecord(block.input) && Object.keys(block.input).length > 0) {
        open.startInput = JSON.stringify(block.input);
      }
      return { open, deltas };
    }
    default:
      // server_tool_use, web results, compaction and future block types: not ours to surface.
      return { open: { kind: "skip", hasArgs: false }, deltas };
  }
}

/** Deltas that close a content block. */
function stopBlock(open: OpenBlock, key: string): WireDelta[] {
  switch (open.kind) {
    case "text":
    case "thinking":
      return [{ type: "segment_end" }];
    case "tool": {
      const out: WireDelta[] = [];
      if (!open.hasArgs) out.push({ type: "tool_call_args", key, args: open.startInput ?? "{}" });
      out.push({ type: "tool_call_end", key });
      return out;
    }
    default:
      return [];
  }
}

function blockDelta(open: OpenBlock | undefined, key: string, delta: Json): WireDelta[] {
  switch (delta.type) {
    case "text_delta": {
      const text = str(delta.text) ?? "";
      return text === "" ? [] : [{ type: "text", text }];
    }
    case "thinking_delta": {
      const thinking = str(delta.thinking) ?? "";
      return thinking === "" ? [] : [{ type: "thinking", thinking }];
    }
    case "signature_delta": {
      const signature = str(delta.signature) ?? "";
      return signature === "" ? [] : [{ type: "thinking", thinking: "", fidelity: { signature } }];
    }
    case "input_json_delta": {
      if (open?.kind !== "tool") return [];
      const args = str(delta.partial_json) ?? "";
      if (args === "") return [];
      open.hasArgs = true;
      return [{ type: "tool_call_args", key, args }];
    }
    default:
      // citations_delta, compaction_delta and unknown delta types are skipped.
      return [];
  }
}

function tooManyBlocks(): WireDelta {
  return {
    type: "error",
    code: TOO_LARGE_CODE,
    message: `The model's response has more than ${MAX_RESPONSE_MESSAGES} open content blocks; ` +
      "penguin stopped reading it (a limit on what one response may hold)",
  };
}

/** A parser for one Anthropic Messages SSE stream. */
export function createAnthropicParser(): WireParser {
  // Long because: one closure-based streaming parser whose functions share the open blocks, the
  // usage counters and the count of held input; each function is short.
  const blocks = new Map<string, OpenBlock>();
  const usage: UsageState = { input: 0, cacheCreate: 0, cacheRead: 0, output: 0 };
  /** Characters of `startInput` the open blocks hold. */
  let held = 0;

  function forget(key: string): OpenBlock | undefined {
    const open = blocks.get(key);
    if (open === undefined) return undefined;
    blocks.delete(key);
    held -= open.startInput?.length ?? 0;
    return open;
  }

  /** Keep a block's `input` only within the limits of ../limits.ts, else mark the call oversize. */
  function bound(open: OpenBlock, deltas: WireDelta[]): void {
    const n = open.startInput?.length ?? 0;
    if (n <= MAX_TOOL_ARGUMENTS && held + n <= MAX_RESPONSE_TOOL_ARGUMENTS) {
      held += n;
      return;
    }
    delete open.startInput;
    open.hasArgs = true; // nothing more to send: the call fails
    for (const d of deltas) if (d.type === "tool_call_start") d.oversize = true;
  }

  function handle(obj: Json, eventName: string | undefined): WireDelta[] {
    const type = str(obj.type) ?? eventName;
    switch (type) {
      case "message_start": {
        const msg = isRecord(obj.message) ? obj.message : {};
        if (!isRecord(msg.usage)) return [];
        foldUsage(usage, msg.usage);
        return [usageDelta(usage)];
      }
      case "content_block_start": {
        const key = String(obj.index ?? blocks.size);
        const block = isRecord(obj.content_block) ? obj.content_block : {};
        const { open, deltas } = startBlock(block, key);
        forget(key);
        if (blocks.size >= MAX_RESPONSE_MESSAGES) return [tooManyBlocks()];
        bound(open, deltas);
        blocks.set(key, open);
        return deltas;
      }
      case "content_block_delta": {
        const key = String(obj.index ?? 0);
        return isRecord(obj.delta) ? blockDelta(blocks.get(key), key, obj.delta) : [];
      }
      case "content_block_stop": {
        const key = String(obj.index ?? 0);
        const open = forget(key);
        if (open === undefined) return [];
        return stopBlock(open, key);
      }
      case "message_delta": {
        const out: WireDelta[] = [];
        if (isRecord(obj.usage)) {
          foldUsage(usage, obj.usage);
          out.push(usageDelta(usage));
        }
        const raw = isRecord(obj.delta) ? str(obj.delta.stop_reason) : undefined;
        if (raw !== undefined) out.push({ type: "finish", reason: anthropicFinish(raw), raw });
        return out;
      }
      case "error":
        return [errorDelta(obj)];
      default:
        // ping, message_stop and unknown events carry nothing for us.
        return [];
    }
  }

  return {
    push(event: SseEvent): WireDelta[] {
      const obj = parseEventJson(
        event.data,
        `Anthropic stream event ${event.event ?? "(unnamed)"}`,
      );
      if (!obj.ok) return [obj.delta];
      return isRecord(obj.value) ? handle(obj.value, event.event) : [];
    },
    end(): WireDelta[] {
      return [];
    },
  };
}

/** Deltas of a complete non-streamed Anthropic Message (or an error object). */
export function parseAnthropicBody(body: unknown): WireDelta[] {
  if (!isRecord(body)) {
    return [{
      type: "error",
      code: MALFORMED_CODE,
      message: "Anthropic response body is not a JSON object",
    }];
  }
  if (body.type === "error") return [errorDelta(body)];
  const out: WireDelta[] = [];
  const content = Array.isArray(body.content) ? body.content : [];
  content.forEach((block, index) => {
    if (!isRecord(block)) return;
    const key = String(index);
    const { open, deltas } = startBlock(block, key);
    out.push(...deltas, ...stopBlock(open, key));
  });
  if (isRecord(body.usage)) {
    const usage: UsageState = { input: 0, cacheCreate: 0, cacheRead: 0, output: 0 };
    foldUsage(usage, body.usage);
    out.push(usageDelta(usage));
  }
  const raw = str(body.stop_reason);
  if (raw !== undefined) out.push({ type: "finish", reason: anthropicFinish(raw), raw });
  return out;
}

/** The provider message and error type of an Anthropic HTTP error body. */
export function parseAnthropicError(status: number, bodyText: string): WireError {
  return parseErrorBody(status, bodyText, (obj) => {
    if (!isRecord(obj) || !isRecord(obj.error)) return undefined;
    const code = str(obj.error.type);
    const message = str(obj.error.message) ?? `HTTP ${status}`;
    return code === undefined ? { message } : { message, code };
  });
}
