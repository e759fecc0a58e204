/**
 * Helpers shared by the model-layer tests: collect a model stream, pick its
 * complete messages, and check the partial-message discipline.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { CompleteMessage, ModelPayload, TokenCounts } from "../../lib/protocol/types.ts";
import type { ModelOutcome, ModelStreamItem } from "../../lib/models/outcome.ts";
import { streamModel, type StreamModelOptions } from "../../lib/models/stream.ts";
import type {
  ModelEndpoint,
  WireDelta,
  WireModule,
  WireProtocol,
  WireRequest,
} from "../../lib/models/wire.ts";
import type { ModelServer } from "../support/model_server.ts";
import { createParser } from "eventsource-parser";
import { isComplete } from "../../lib/protocol/guards.ts";
import { createTranslator, type TranslatorState } from "../../lib/models/translate.ts";

/** Everything one model request yielded. */
export interface Collected {
  /** All items in order. */
  items: ModelStreamItem[];
  /** Message payloads in order (partials and completes). */
  messages: ModelPayload[];
  /** Complete messages only. */
  completes: CompleteMessage[];
  /** The usage item, if any. */
  usage?: TokenCounts | undefined;
  /** The final outcome. */
  outcome: ModelOutcome;
}

/** A request to `server` in `protocol`: one user message, one `write_file` tool, no system prompt. */
export function writeFileRequest(server: ModelServer, protocol: WireProtocol): WireRequest {
  return {
    endpoint: server.endpoint(protocol),
    system_prompt: "",
    tools: [{ name: "write_file", description: "Write", parameters: { type: "object" } }],
    history: [{ type: "text", role: "user", text: "hi", stop_reason: "completed" }],
  };
}

/** A request to the canned server at `base` as `endpoint`, with `history` and no tools. */
export function cannedRequest(
  base: string,
  endpoint: Omit<ModelEndpoint, "base_url">,
  history: CompleteMessage[],
  system_prompt = "",
): WireRequest {
  return { endpoint: { ...endpoint, base_url: base }, system_prompt, tools: [], history };
}

/** {@linkcode collect} `req` `times` times in turn (one canned reply each). */
export async function collectEach(
  req: WireRequest,
  times: number,
  opts: StreamModelOptions = {},
): Promise<Collected[]> {
  const runs: Collected[] = [];
  for (let i = 0; i < times; i++) runs.push(await collect(req, opts));
  return runs;
}

/** Run `streamModel` to its end. */
export async function collect(req: WireRequest, opts: StreamModelOptions = {}): Promise<Collected> {
  const items: ModelStreamItem[] = [];
  for await (const it of streamModel(req, opts)) items.push(it);
  const last = items.at(-1);
  assert.equal(last?.kind, "end", "the stream ends with an end item");
  assert.equal(items.filter((i) => i.kind === "end").length, 1, "exactly one end item");
  const messages = items.flatMap((i) => (i.kind === "message" ? [i.message] : []));
  const completes = messages.filter((m) => !m.type.startsWith("partial_")) as CompleteMessage[];
  const usage = items.find((i) => i.kind === "usage");
  return {
    items,
    messages,
    completes,
    usage: usage?.kind === "usage" ? usage.usage : undefined,
    outcome: (last as { kind: "end"; outcome: ModelOutcome }).outcome,
  };
}

const CONTENT: Record<string, string> = {
  partial_text: "text",
  partial_thinking: "thinking",
  partial_tool_call: "arguments",
};

/**
 * Assert the partial discipline of a stream: start → delta* → stop, the complete
 * message right after its stop, concatenated deltas equal to its content.
 */
export function assertPartialDiscipline(messages: ModelPayload[]): void {
  const open = new Map<string, string>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const field = CONTENT[m.type];
    if (field === undefined) continue;
    const key = `${m.type}::${(m as { tool_call_id?: string }).tool_call_id ?? ""}`;
    const value = (m as Record<string, unknown>)[field] as string;
    if (m.event_type === "start") {
      assert.ok(!open.has(key), `no second start for ${key} while open`);
      assert.equal(value, "", "start carries empty content");
      open.set(key, "");
    } else if (m.event_type === "delta") {
      assert.ok(open.has(key), `delta after start for ${key}`);
      open.set(key, open.get(key)! + value);
    } else {
      assert.ok(open.has(key), `stop after start for ${key}`);
      const next = messages[i + 1] as Record<string, unknown> | undefined;
      const completeType = m.type.replace("partial_", "");
      assert.equal(next?.type, completeType, `the complete ${completeType} follows its stop`);
      assert.equal(next?.stop_reason, m.stop_reason, "complete carries the stop's stop_reason");
      const content = next?.[field] as string;
      const streamed = open.get(key)!;
      if (completeType === "tool_call" && streamed.trim() === "") assert.equal(content, "{}");
      else assert.equal(content, streamed, "concatenated deltas equal the complete content");
      open.delete(key);
    }
  }
  assert.equal(open.size, 0, "every partial is stopped");
}

/** Frame `text` with eventsource-parser (fed in `piece`-sized chunks) and run `m`'s wire parser. */
export function parseSse(m: WireModule, text: string, piece = text.length): WireDelta[] {
  const parser = m.createParser();
  const out: WireDelta[] = [];
  const sse = createParser({
    onEvent: (e) => out.push(...parser.push({ event: e.event, data: e.data })),
  });
  for (let i = 0; i < text.length; i += piece) sse.feed(text.slice(i, i + piece));
  sse.reset({ consume: true });
  out.push(...parser.end());
  return out;
}

/** Deltas → complete messages, via the shared translator. */
export function translateDeltas(
  deltas: WireDelta[],
): { messages: CompleteMessage[]; state: TranslatorState } {
  const tr = createTranslator();
  const payloads = deltas.flatMap((d) => tr.push(d));
  payloads.push(...tr.close(tr.state.error ? "failed" : "completed"));
  return { messages: payloads.filter(isComplete), state: tr.state };
}

/** A canned HTTP reply. */
export interface CannedReply {
  /** Status code. */
  status: number;
  /** Content type. */
  type: string;
  /** Body bytes as text. */
  body: string;
}

/**
 * Serve `replies` in order on 127.0.0.1 (one per request), recording each
 * request; `fn` gets the base URL (`http://127.0.0.1:<port><basePath>`).
 */
export async function withReplies(
  replies: CannedReply[],
  fn: (base: string, seen: Request[]) => Promise<void>,
  basePath = "",
): Promise<void> {
  const seen: Request[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    seen.push(req.clone());
    const r = replies[seen.length - 1] ??
      { status: 500, type: "text/plain", body: "no more replies" };
    return new Response(r.body, { status: r.status, headers: { "content-type": r.type } });
  });
  try {
    await fn(`http://127.0.0.1:${server.addr.port}${basePath}`, seen);
  } finally {
    await server.shutdown();
  }
}
