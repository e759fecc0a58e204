/**
 * OpenAI Codex CLI rollout files (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…jsonl`)
 * to penguin records. Each line is `{timestamp, type, payload}`; the model
 * context is the `response_item` lines (messages, function calls and their
 * outputs, reasoning), the usage is `token_usage_record` (else the
 * `token_count` events). Everything else (turn contexts, world state, the
 * UI events that duplicate the response items) goes to the loss report.
 *
 * @module
 */
import { z } from "zod";
import {
  finishForeignParse,
  type ForeignParse,
  issue,
  startForeignParse,
} from "./_foreign_parse.ts";
import { type At, cachedPartUsage, type Usage } from "./_transcript.ts";
import type { ForeignSession, ForeignText, RecordSink } from "./foreign_session.ts";

const lineSchema = z.object({
  timestamp: z.string(),
  type: z.string(),
  payload: z.record(z.string(), z.unknown()),
});

const metaSchema = z.object({
  id: z.string(),
  cwd: z.string(),
  cli_version: z.string().optional(),
  model_provider: z.string().optional(),
  base_instructions: z.object({ text: z.string() }).optional(),
});

const partSchema = z.object({ type: z.string(), text: z.string().optional() });
const messageSchema = z.object({
  role: z.string(),
  content: z.array(partSchema),
});
const callSchema = z.object({ name: z.string(), arguments: z.string(), call_id: z.string() });
const customCallSchema = z.object({ name: z.string(), input: z.string(), call_id: z.string() });
const outputSchema = z.object({
  call_id: z.string(),
  output: z.union([z.string(), z.array(partSchema), z.object({ content: z.string() })]),
});
const reasoningSchema = z.object({
  summary: z.array(partSchema).optional(),
  content: z.array(partSchema).nullish(),
  encrypted_content: z.string().nullish(),
});
const usageSchema = z.object({
  input_tokens: z.number(),
  cached_input_tokens: z.number().optional(),
  output_tokens: z.number(),
});

/** True when the first records look like a Codex rollout. */
export function looksLikeCodex(first: unknown): boolean {
  const r = lineSchema.safeParse(first);
  return r.success && r.data.type === "session_meta" &&
    typeof r.data.payload.cli_version === "string";
}

/** User texts Codex writes itself (environment, instructions): marked as harness texts. */
const HARNESS_TAGS = /^<(environment_context|user_instructions|INSTRUCTIONS)>/;

function texts(parts: ReadonlyArray<{ type: string; text?: string | undefined }>): string {
  return parts.flatMap((p) => (p.text !== undefined ? [p.text] : [])).join("");
}

/** Convert the text of a Codex rollout file (see the module doc); with `sink`, its records go there. */
export function parseCodex(text: ForeignText, file: string, sink?: RecordSink): ForeignSession {
  const p = startForeignParse(text, file, "codex", "unknown", sink);
  let hasUsageRecords = false;
  for (const l of p.lines) {
    if ((l.value as { type?: unknown } | null)?.type !== "token_usage_record") continue;
    hasUsageRecords = true;
    break;
  }
  for (const { line, value } of p.lines) {
    const rec = lineSchema.safeParse(value);
    if (!rec.success) {
      p.bad(line, `not a Codex rollout record: ${issue(rec.error)}`);
      continue;
    }
    const { timestamp: ts, type, payload } = rec.data;
    if (p.s.startedAt === "") p.s.startedAt = ts;
    codexLine(p, type, payload, { ts, line }, hasUsageRecords);
  }
  return finishForeignParse(p);
}

type Payload = Record<string, unknown>;

/** One rollout record, its envelope valid. */
function codexLine(
  p: ForeignParse,
  type: string,
  pl: Payload,
  at: At,
  hasUsageRecords: boolean,
): void {
  switch (type) {
    case "session_meta":
      return sessionMeta(p, pl, at);
    case "turn_context":
      if (typeof pl.model === "string" && p.s.modelId === "unknown") p.s.modelId = pl.model;
      return p.lost(
        at.line,
        "turn_context",
        "per-turn settings (cwd, approval and sandbox policy, model); the model is kept in session_meta",
      );
    case "response_item":
      return responseItem(p, pl, at);
    case "token_usage_record": {
      const u = usageSchema.safeParse(pl.usage);
      if (!u.success) return p.bad(at.line, `token_usage_record.usage: ${issue(u.error)}`);
      return p.t.usage(codexUsage(u.data), at);
    }
    case "event_msg":
      return eventMsg(p, pl, at, hasUsageRecords);
    default:
      p.lost(at.line, type, "Codex bookkeeping with no counterpart in a penguin trace");
  }
}

function codexUsage(u: z.infer<typeof usageSchema>): Usage {
  return cachedPartUsage(u.input_tokens, u.cached_input_tokens ?? 0, u.output_tokens);
}

function sessionMeta(p: ForeignParse, pl: Payload, at: At): void {
  const m = metaSchema.safeParse(pl);
  if (!m.success) return p.bad(at.line, `session_meta: ${issue(m.error)}`);
  if (p.s.id !== "") {
    return p.lost(at.line, "second session_meta", "the first one identifies the session");
  }
  p.s.id = m.data.id;
  p.s.cwd = m.data.cwd;
  p.s.version = m.data.cli_version ?? null;
  if (m.data.model_provider) p.s.provider = m.data.model_provider;
  if (m.data.base_instructions) {
    p.lost(
      at.line,
      "session_meta base_instructions",
      "Codex's system prompt describes Codex's tools; the session continues with penguin's",
    );
  }
}

/** An event: its usage when there are no usage records, else a UI event for the loss report. */
function eventMsg(p: ForeignParse, pl: Payload, at: At, hasUsageRecords: boolean): void {
  const kind = String(pl.type ?? "?");
  if (kind === "token_count" && !hasUsageRecords) {
    const info = pl.info as { last_token_usage?: unknown } | null | undefined;
    const u = usageSchema.safeParse(info?.last_token_usage);
    if (u.success) return p.t.usage(codexUsage(u.data), at);
  }
  const item = kind === "item_completed"
    ? ` ${String((pl.item as { type?: unknown } | undefined)?.type ?? "?")}`
    : "";
  p.lost(
    at.line,
    `event_msg ${kind}${item}`,
    EVENT_REASONS[`${kind}${item}`] ?? EVENT_REASONS[kind] ?? UI_EVENT,
  );
}

/** One item of the model context. */
function responseItem(p: ForeignParse, pl: Payload, at: At): void {
  const kind = String(pl.type ?? "?");
  switch (kind) {
    case "message":
      return message(p, pl, at);
    case "reasoning":
      return reasoning(p, pl, at);
    case "function_call": {
      const c = callSchema.safeParse(pl);
      if (!c.success) return p.bad(at.line, `response_item function_call: ${issue(c.error)}`);
      return toolCall(p, c.data.name, c.data.arguments, c.data.call_id, at);
    }
    case "custom_tool_call": {
      const c = customCallSchema.safeParse(pl);
      if (!c.success) return p.bad(at.line, `response_item custom_tool_call: ${issue(c.error)}`);
      // A free-form tool's input is raw text; penguin's arguments are a JSON object.
      return toolCall(p, c.data.name, JSON.stringify({ input: c.data.input }), c.data.call_id, at);
    }
    case "function_call_output":
    case "custom_tool_call_output":
      return toolOutput(p, kind, pl, at);
    default:
      p.lost(at.line, `response_item ${kind}`, "no penguin counterpart for this context item");
  }
}

function message(p: ForeignParse, pl: Payload, at: At): void {
  const m = messageSchema.safeParse(pl);
  if (!m.success) return p.bad(at.line, `response_item message: ${issue(m.error)}`);
  const other = m.data.content.filter((c) => c.text === undefined);
  if (other.length > 0) {
    p.lost(at.line, `message part ${other[0]!.type}`, "only text parts are imported");
  }
  const text = texts(m.data.content);
  if (m.data.role === "developer" || m.data.role === "system") {
    return p.lost(
      at.line,
      `response_item message role ${m.data.role}`,
      "Codex's own instructions for its tools; penguin gives the model its own",
    );
  }
  if (m.data.role === "user") {
    return p.t.user(text, at, HARNESS_TAGS.test(text.trimStart()) ? "harness" : undefined);
  }
  p.t.assistant({ type: "text", role: "assistant", text, stop_reason: "completed" }, at);
}

function reasoning(p: ForeignParse, pl: Payload, at: At): void {
  const r = reasoningSchema.safeParse(pl);
  if (!r.success) return p.bad(at.line, `response_item reasoning: ${issue(r.error)}`);
  if (r.data.encrypted_content) {
    p.lost(
      at.line,
      "reasoning encrypted_content",
      "opaque to every provider but the one that wrote it; the summary text is kept",
    );
  }
  const thinking = [texts(r.data.summary ?? []), texts(r.data.content ?? [])]
    .filter((x) => x !== "").join("\n\n");
  if (thinking !== "") {
    p.t.assistant({ type: "thinking", role: "assistant", thinking, stop_reason: "completed" }, at);
  }
}

function toolCall(p: ForeignParse, name: string, args: string, id: string, at: At): void {
  p.t.assistant({
    type: "tool_call",
    role: "assistant",
    name,
    arguments: args,
    tool_call_id: id,
    stop_reason: "completed",
  }, at);
}

function toolOutput(p: ForeignParse, kind: string, pl: Payload, at: At): void {
  const o = outputSchema.safeParse(pl);
  if (!o.success) return p.bad(at.line, `response_item ${kind}: ${issue(o.error)}`);
  const out = o.data.output;
  let text: string;
  if (typeof out === "string") text = out;
  else if (Array.isArray(out)) {
    if (out.some((c) => c.text === undefined)) {
      p.lost(at.line, `${kind} non-text part`, "only text parts are imported");
    }
    text = texts(out);
  } else text = out.content;
  p.t.output(o.data.call_id, text, false, at);
}

const UI_EVENT = "a UI event; the model context it shows is imported from the response items";

const EVENT_REASONS: Record<string, string> = {
  "item_completed UserMessage": "duplicate of the user response_item message",
  "item_completed AgentMessage": "duplicate of the assistant response_item message",
  "item_completed CommandExecution":
    "command details (argv, exit code, full output up to 64 KiB); the model saw the function_call_output, which is kept",
  "item_completed FileChange":
    "the files a patch changed; the model saw the function_call_output, which is kept",
  token_count: "duplicate of token_usage_record",
};
