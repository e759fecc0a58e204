/**
 * Claude Code transcripts (`$CLAUDE_CONFIG_DIR/projects/<slug>/<session id>.jsonl`)
 * to penguin records. The conversation is the `user` lines (a prompt, or
 * `tool_result` blocks) and the `assistant` lines (an Anthropic message,
 * one content block per line; lines of one message share `message.id`,
 * which makes them one model request). Subagent transcripts
 * (`<session id>/subagents/agent-<id>.jsonl` with its `.meta.json`) become
 * child sessions when given. Queue operations, attachments, prompts
 * bookkeeping and the structured `toolUseResult` copies go to the loss report.
 *
 * @module
 */
import { z } from "zod";
import { createTranscript } from "./_transcript.ts";
import { type ForeignChild, type ForeignSession, splitJsonLines } from "./foreign_session.ts";
import { createLossBook } from "./import_report.ts";

const blockSchema = z.object({ type: z.string() }).passthrough();
const lineSchema = z.object({
  type: z.string(),
  timestamp: z.string().optional(),
  sessionId: z.string().optional(),
  cwd: z.string().optional(),
  version: z.string().optional(),
  isSidechain: z.boolean().optional(),
  isMeta: z.boolean().optional(),
  agentId: z.string().optional(),
}).passthrough();
const userSchema = z.object({
  message: z.object({ content: z.union([z.string(), z.array(blockSchema)]) }),
});
const assistantSchema = z.object({
  message: z.object({
    id: z.string().optional(),
    model: z.string().optional(),
    content: z.array(blockSchema),
    usage: z.object({
      input_tokens: z.number(),
      cache_creation_input_tokens: z.number().nullish(),
      cache_read_input_tokens: z.number().nullish(),
      output_tokens: z.number(),
    }).optional(),
  }),
});
const toolResultSchema = z.object({
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(blockSchema)]).optional(),
  is_error: z.boolean().optional(),
});
const toolUseSchema = z.object({ id: z.string(), name: z.string(), input: z.unknown() });
const metaFileSchema = z.object({ toolUseId: z.string() }).passthrough();

/** A subagent transcript next to a session: its file, its text and its `.meta.json` content. */
export interface ClaudeSubagentFile {
  /** The transcript path. */
  file: string;
  /** Its text. */
  text: string;
  /** The parsed `.meta.json` (null when missing). */
  meta: unknown;
}

const CONVERSATION = new Set(["user", "assistant"]);
/** Claude Code's subagent tools (`Task` in older versions). */
const SUBAGENT_TOOLS = new Set(["Agent", "Task"]);

/** True when a parsed line looks like a Claude Code transcript line. */
export function looksLikeClaude(first: unknown): boolean {
  const r = lineSchema.safeParse(first);
  if (!r.success) return false;
  const v = first as Record<string, unknown>;
  return typeof v.sessionId === "string" &&
    (CONVERSATION.has(r.data.type) || r.data.type === "queue-operation" ||
      r.data.type === "summary" || "parentUuid" in v);
}

function issue(err: z.ZodError): string {
  const i = err.issues[0];
  return i ? `${i.path.join(".") || "record"}: ${i.message}` : "unexpected shape";
}

function blockText(content: string | ReadonlyArray<{ type: string }> | undefined): {
  text: string;
  other: string[];
} {
  if (content === undefined) return { text: "", other: [] };
  if (typeof content === "string") return { text: content, other: [] };
  const parts: string[] = [];
  const other: string[] = [];
  for (const b of content) {
    const t = (b as { text?: unknown }).text;
    if (b.type === "text" && typeof t === "string") parts.push(t);
    else other.push(b.type);
  }
  return { text: parts.join("\n"), other };
}

/**
 * Convert a Claude Code transcript (see the module doc). `subagents` are
 * the transcripts found next to it; each one named by an Agent call of this
 * session becomes a child. `asChild` parses a subagent transcript itself:
 * its first prompt is the parent's.
 */
export function parseClaude(
  text: string,
  file: string,
  subagents: readonly ClaudeSubagentFile[] = [],
  asChild = false,
): ForeignSession {
  // Long because: one pass over the transcript's entries; the entry handlers share the branch
  // chain, subagent map and loss book.
  const { lines, problems } = splitJsonLines(text, file);
  const loss = createLossBook();
  const t = createTranscript(file, loss);
  const bad = (line: number, reason: string) => problems.push({ file, line, reason });
  const s: ForeignSession = {
    harness: "claude",
    file,
    id: "",
    version: null,
    cwd: "",
    provider: "anthropic",
    modelId: "unknown",
    systemPrompt: "",
    startedAt: "",
    records: [],
    children: [],
    loss: [],
    problems,
  };
  // Children by the Agent call that spawned them.
  const byCall = new Map<string, ClaudeSubagentFile>();
  for (const sub of subagents) {
    const m = metaFileSchema.safeParse(sub.meta);
    if (m.success) byCall.set(m.data.toolUseId, sub);
  }
  let lastTs = "";
  let firstPrompt = true;
  const calls = new Map<string, string>(); // tool call id -> tool name
  const offPath = linesOffPath(lines);
  for (const { line, value } of lines) {
    const branch = offPath.get(line);
    if (branch !== undefined) {
      loss.note(
        `branch ${branch}`,
        file,
        line,
        "a message not on the chain leading to the last one (an edited or retried turn); the chain to the last message is imported",
      );
      continue;
    }
    const rec = lineSchema.safeParse(value);
    if (!rec.success) {
      bad(line, `not a Claude Code transcript line: ${issue(rec.error)}`);
      continue;
    }
    const r = rec.data;
    const ts = r.timestamp ?? lastTs;
    lastTs = ts;
    if (s.startedAt === "" && ts !== "") s.startedAt = ts;
    const at = { ts, line };
    const lost = (kind: string, reason: string) => loss.note(kind, file, line, reason);
    if (!CONVERSATION.has(r.type)) {
      const sub = value as {
        attachment?: { type?: unknown };
        operation?: unknown;
        subtype?: unknown;
      };
      const detail = sub.attachment?.type ?? sub.subtype ?? sub.operation;
      lost(
        detail !== undefined ? `${r.type} ${String(detail)}` : r.type,
        NON_CONVERSATION[r.type] ??
          "Claude Code bookkeeping with no counterpart in a penguin trace",
      );
      continue;
    }
    if (s.id === "") {
      s.id = asChild && r.agentId ? r.agentId : r.sessionId ?? "";
      s.cwd = r.cwd ?? "";
    }
    if (s.version === null && r.version) s.version = r.version;
    if (r.isSidechain && !asChild) {
      lost(
        "sidechain line in the main transcript",
        "subagent lines belong to the child's transcript",
      );
      continue;
    }
    if (r.type === "user") {
      const u = userSchema.safeParse(value);
      if (!u.success) {
        bad(line, `user: ${issue(u.error)}`);
        continue;
      }
      const content = u.data.message.content;
      if ((value as { toolUseResult?: unknown }).toolUseResult !== undefined) {
        lost(
          "toolUseResult",
          "the structured copy of a tool result (stdout, file content, patch); the tool_result the model saw is kept",
        );
      }
      if (typeof content === "string") {
        const sender = asChild && firstPrompt ? "parent_agent" : r.isMeta ? "harness" : undefined;
        firstPrompt = false;
        t.user(content, at, sender);
        continue;
      }
      const texts: string[] = [];
      for (const b of content) {
        if (b.type === "tool_result") {
          const tr = toolResultSchema.safeParse(b);
          if (!tr.success) {
            bad(line, `tool_result: ${issue(tr.error)}`);
            continue;
          }
          const { text, other } = blockText(tr.data.content);
          if (text.includes("<persisted-output>")) {
            lost(
              "persisted tool output",
              "the full output Claude Code saved beside the session (tool-results/); the preview the model saw is kept",
            );
          }
          for (const o of other) lost(`tool_result part ${o}`, "only text parts are imported");
          const child = byCall.get(tr.data.tool_use_id);
          if (!child && SUBAGENT_TOOLS.has(calls.get(tr.data.tool_use_id) ?? "")) {
            lost(
              "subagent transcript not found",
              "the subagent's own messages are not next to the session; its answer (the tool output) is kept",
            );
          }
          if (child) {
            const c = parseClaude(child.text, child.file, [], true);
            s.children.push({ toolCallId: tr.data.tool_use_id, session: c } satisfies ForeignChild);
            t.pointer(c.id, at);
          }
          t.output(tr.data.tool_use_id, text, tr.data.is_error === true, at);
        } else if (b.type === "text" && typeof (b as { text?: unknown }).text === "string") {
          texts.push((b as unknown as { text: string }).text);
        } else {
          lost(`user content ${b.type}`, "only text and tool results are imported");
        }
      }
      if (texts.length > 0) {
        const sender = asChild && firstPrompt ? "parent_agent" : r.isMeta ? "harness" : undefined;
        firstPrompt = false;
        t.user(texts.join("\n"), at, sender);
      }
      continue;
    }
    const a = assistantSchema.safeParse(value);
    if (!a.success) {
      bad(line, `assistant: ${issue(a.error)}`);
      continue;
    }
    const m = a.data.message;
    if (m.model && s.modelId === "unknown" && m.model !== "<synthetic>") s.modelId = m.model;
    for (const b of m.content) {
      const rb = b as Record<string, unknown>;
      if (b.type === "text" && typeof rb.text === "string") {
        t.assistant(
          { type: "text", role: "assistant", text: rb.text, stop_reason: "completed" },
          at,
          m.id,
        );
      } else if (b.type === "thinking" && typeof rb.thinking === "string") {
        if (typeof rb.signature === "string" && rb.signature !== "") {
          lost(
            "thinking signature",
            "valid only with the provider that signed it; the thinking text is kept",
          );
        }
        t.assistant(
          { type: "thinking", role: "assistant", thinking: rb.thinking, stop_reason: "completed" },
          at,
          m.id,
        );
      } else if (b.type === "tool_use") {
        const c = toolUseSchema.safeParse(b);
        if (!c.success) {
          bad(line, `tool_use: ${issue(c.error)}`);
          continue;
        }
        calls.set(c.data.id, c.data.name);
        t.assistant(
          {
            type: "tool_call",
            role: "assistant",
            name: c.data.name,
            arguments: JSON.stringify(c.data.input ?? {}),
            tool_call_id: c.data.id,
            stop_reason: "completed",
          },
          at,
          m.id,
        );
      } else {
        lost(`assistant content ${b.type}`, "no penguin counterpart for this content block");
      }
    }
    if (m.usage) {
      t.usage({
        input: m.usage.input_tokens + (m.usage.cache_creation_input_tokens ?? 0),
        cached: m.usage.cache_read_input_tokens ?? 0,
        output: m.usage.output_tokens,
      }, at);
    }
  }
  // Subagent transcripts given but not named by any Agent call of this session.
  const named = new Set(s.children.map((c) => c.toolCallId));
  for (const sub of subagents) {
    const m = metaFileSchema.safeParse(sub.meta);
    if (!m.success || !named.has(m.data.toolUseId)) {
      loss.note(
        "subagent transcript not linked to an Agent call",
        sub.file,
        1,
        "no tool call of this session spawned it",
      );
    }
  }
  s.records = t.finish();
  s.loss = loss.entries();
  return s;
}

/**
 * Conversation lines not on the `parentUuid` chain that ends at the last
 * conversation line (a rewound or retried turn left a branch), each mapped
 * to the uuid its branch starts at. Compaction boundaries continue the chain
 * through `logicalParentUuid`. Empty when the file is one chain, or when the
 * chain is broken (a parent missing from the file): then file order is kept.
 */
function linesOffPath(lines: readonly { line: number; value: unknown }[]): Map<number, string> {
  type Node = { line: number; uuid: string; parent: string | null; conversation: boolean };
  const nodes = new Map<string, Node>();
  let leaf: Node | undefined;
  for (const { line, value } of lines) {
    const v = value as {
      uuid?: unknown;
      parentUuid?: unknown;
      logicalParentUuid?: unknown;
      type?: unknown;
      isSidechain?: unknown;
    } | null;
    if (typeof v?.uuid !== "string") continue;
    const parent = typeof v.parentUuid === "string"
      ? v.parentUuid
      : typeof v.logicalParentUuid === "string"
      ? v.logicalParentUuid
      : null;
    const node: Node = {
      line,
      uuid: v.uuid,
      parent,
      conversation: (v.type === "user" || v.type === "assistant") && v.isSidechain !== true,
    };
    nodes.set(v.uuid, node);
    if (node.conversation) leaf = node;
  }
  const off = new Map<number, string>();
  if (!leaf) return off;
  const onPath = new Set<string>();
  for (let n: Node | undefined = leaf; n && !onPath.has(n.uuid);) {
    onPath.add(n.uuid);
    if (n.parent === null) break;
    const next = nodes.get(n.parent);
    if (!next) return off; // broken chain: keep file order
    n = next;
  }
  const branchOf = new Map<string, string>();
  for (const n of nodes.values()) {
    if (onPath.has(n.uuid) || !n.conversation) continue;
    const start = (n.parent !== null ? branchOf.get(n.parent) : undefined) ?? n.uuid;
    branchOf.set(n.uuid, start);
    off.set(n.line, start);
  }
  return off;
}

const NON_CONVERSATION: Record<string, string> = {
  "queue-operation": "prompt queue bookkeeping; the prompt itself is the next user line",
  attachment: "context Claude Code attached for its own tools (agent and skill listings)",
  "last-prompt": "a copy of the last prompt, for the UI",
  mode: "the UI mode",
  summary: "a title for the session list",
  system: "a Claude Code system note",
  "file-history-snapshot": "file backups for Claude Code's undo",
};
