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
import type { CompleteMessage } from "../protocol/types.ts";
import { createTranscript } from "./_transcript.ts";
import { type ForeignSession, splitJsonLines } from "./foreign_session.ts";
import { createLossBook } from "./import_report.ts";

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

function issue(err: z.ZodError): string {
  const i = err.issues[0];
  return i ? `${i.path.join(".") || "record"}: ${i.message}` : "unexpected shape";
}

function texts(parts: ReadonlyArray<{ type: string; text?: string | undefined }>): string {
  return parts.flatMap((p) => (p.text !== undefined ? [p.text] : [])).join("");
}

/** Convert the text of a Codex rollout file (see the module doc). */
export function parseCodex(text: string, file: string): ForeignSession {
  // Long because: one pass over the rollout's lines; the item handlers below share the transcript,
  // call map and loss book.
  const { lines, problems } = splitJsonLines(text, file);
  const loss = createLossBook();
  const t = createTranscript(file, loss);
  const bad = (line: number, reason: string) => problems.push({ file, line, reason });
  const s: ForeignSession = {
    harness: "codex",
    file,
    id: "",
    version: null,
    cwd: "",
    provider: "unknown",
    modelId: "unknown",
    systemPrompt: "",
    startedAt: "",
    records: [],
    children: [],
    loss: [],
    problems,
  };
  const hasUsageRecords = lines.some((l) =>
    (l.value as { type?: unknown } | null)?.type === "token_usage_record"
  );
  for (const { line, value } of lines) {
    const rec = lineSchema.safeParse(value);
    if (!rec.success) {
      bad(line, `not a Codex rollout record: ${issue(rec.error)}`);
      continue;
    }
    const { timestamp: ts, type, payload: p } = rec.data;
    const at = { ts, line };
    if (s.startedAt === "") s.startedAt = ts;
    const lost = (kind: string, reason: string) => loss.note(kind, file, line, reason);
    switch (type) {
      case "session_meta": {
        const m = metaSchema.safeParse(p);
        if (!m.success) {
          bad(line, `session_meta: ${issue(m.error)}`);
          break;
        }
        if (s.id !== "") {
          lost("second session_meta", "the first one identifies the session");
          break;
        }
        s.id = m.data.id;
        s.cwd = m.data.cwd;
        s.version = m.data.cli_version ?? null;
        if (m.data.model_provider) s.provider = m.data.model_provider;
        if (m.data.base_instructions) {
          lost(
            "session_meta base_instructions",
            "Codex's system prompt describes Codex's tools; the session continues with penguin's",
          );
        }
        break;
      }
      case "turn_context":
        if (typeof p.model === "string" && s.modelId === "unknown") s.modelId = p.model;
        lost(
          "turn_context",
          "per-turn settings (cwd, approval and sandbox policy, model); the model is kept in session_meta",
        );
        break;
      case "response_item":
        responseItem(p, at, lost, bad);
        break;
      case "token_usage_record": {
        const u = usageSchema.safeParse(p.usage);
        if (!u.success) {
          bad(line, `token_usage_record.usage: ${issue(u.error)}`);
          break;
        }
        const cached = u.data.cached_input_tokens ?? 0;
        t.usage({
          input: Math.max(0, u.data.input_tokens - cached),
          cached,
          output: u.data.output_tokens,
        }, at);
        break;
      }
      case "event_msg": {
        const kind = String(p.type ?? "?");
        if (kind === "token_count" && !hasUsageRecords) {
          const info = p.info as { last_token_usage?: unknown } | null | undefined;
          const u = usageSchema.safeParse(info?.last_token_usage);
          if (u.success) {
            const cached = u.data.cached_input_tokens ?? 0;
            t.usage({
              input: Math.max(0, u.data.input_tokens - cached),
              cached,
              output: u.data.output_tokens,
            }, at);
            break;
          }
        }
        const item = kind === "item_completed"
          ? ` ${String((p.item as { type?: unknown } | undefined)?.type ?? "?")}`
          : "";
        lost(
          `event_msg ${kind}${item}`,
          EVENT_REASONS[`${kind}${item}`] ?? EVENT_REASONS[kind] ?? UI_EVENT,
        );
        break;
      }
      default:
        lost(type, "Codex bookkeeping with no counterpart in a penguin trace");
    }
  }

  function responseItem(
    p: Record<string, unknown>,
    at: { ts: string; line: number },
    lost: (kind: string, reason: string) => void,
    bad: (line: number, reason: string) => void,
  ): void {
    // Long because: one switch over Codex's response item types, each mapped in a few lines.
    const kind = String(p.type ?? "?");
    const assistant = (msg: CompleteMessage) => t.assistant(msg, at);
    switch (kind) {
      case "message": {
        const m = messageSchema.safeParse(p);
        if (!m.success) return bad(at.line, `response_item message: ${issue(m.error)}`);
        const other = m.data.content.filter((c) => c.text === undefined);
        if (other.length > 0) {
          lost(`message part ${other[0]!.type}`, "only text parts are imported");
        }
        const text = texts(m.data.content);
        if (m.data.role === "developer" || m.data.role === "system") {
          return lost(
            `response_item message role ${m.data.role}`,
            "Codex's own instructions for its tools; penguin gives the model its own",
          );
        }
        if (m.data.role === "user") {
          return t.user(text, at, HARNESS_TAGS.test(text.trimStart()) ? "harness" : undefined);
        }
        return assistant({ type: "text", role: "assistant", text, stop_reason: "completed" });
      }
      case "reasoning": {
        const r = reasoningSchema.safeParse(p);
        if (!r.success) return bad(at.line, `response_item reasoning: ${issue(r.error)}`);
        if (r.data.encrypted_content) {
          lost(
            "reasoning encrypted_content",
            "opaque to every provider but the one that wrote it; the summary text is kept",
          );
        }
        const thinking = [texts(r.data.summary ?? []), texts(r.data.content ?? [])]
          .filter((x) => x !== "").join("\n\n");
        if (thinking !== "") {
          assistant({ type: "thinking", role: "assistant", thinking, stop_reason: "completed" });
        }
        return;
      }
      case "function_call": {
        const c = callSchema.safeParse(p);
        if (!c.success) return bad(at.line, `response_item function_call: ${issue(c.error)}`);
        return assistant({
          type: "tool_call",
          role: "assistant",
          name: c.data.name,
          arguments: c.data.arguments,
          tool_call_id: c.data.call_id,
          stop_reason: "completed",
        });
      }
      case "custom_tool_call": {
        const c = customCallSchema.safeParse(p);
        if (!c.success) return bad(at.line, `response_item custom_tool_call: ${issue(c.error)}`);
        // A free-form tool's input is raw text; penguin's arguments are a JSON object.
        return assistant({
          type: "tool_call",
          role: "assistant",
          name: c.data.name,
          arguments: JSON.stringify({ input: c.data.input }),
          tool_call_id: c.data.call_id,
          stop_reason: "completed",
        });
      }
      case "function_call_output":
      case "custom_tool_call_output": {
        const o = outputSchema.safeParse(p);
        if (!o.success) return bad(at.line, `response_item ${kind}: ${issue(o.error)}`);
        const out = o.data.output;
        let text: string;
        if (typeof out === "string") text = out;
        else if (Array.isArray(out)) {
          if (out.some((c) => c.text === undefined)) {
            lost(`${kind} non-text part`, "only text parts are imported");
          }
          text = texts(out);
        } else text = out.content;
        return t.output(o.data.call_id, text, false, at);
      }
      default:
        lost(`response_item ${kind}`, "no penguin counterpart for this context item");
    }
  }

  s.records = t.finish();
  s.loss = loss.entries();
  return s;
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
