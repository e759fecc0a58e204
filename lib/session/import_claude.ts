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
import {
  assistantPart,
  type AssistantPartForm,
  finishForeignParse,
  type ForeignParse,
  issue,
  startForeignParse,
  textParts,
} from "./_foreign_parse.ts";
import { type At, cacheSplitUsage } from "./_transcript.ts";
import type {
  ChildSpool,
  ForeignChild,
  ForeignSession,
  ForeignText,
  RecordSink,
} from "./foreign_session.ts";

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
type Line = z.infer<typeof lineSchema>;
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
    }).transform((u) =>
      cacheSplitUsage(
        u.input_tokens,
        u.cache_creation_input_tokens ?? 0,
        u.cache_read_input_tokens ?? 0,
        u.output_tokens,
      )
    ).optional(),
  }),
});
const toolResultSchema = z.object({
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(blockSchema)]).optional(),
  is_error: z.boolean().optional(),
});
const metaFileSchema = z.object({ toolUseId: z.string() }).passthrough();

/** A subagent transcript next to a session: its file, its text and its `.meta.json` content. */
export interface ClaudeSubagentFile {
  /** The transcript path. */
  file: string;
  /** Its text, or the file to read it from line by line. */
  text: ForeignText;
  /** The parsed `.meta.json` (null when missing). */
  meta: unknown;
}

const CONVERSATION = new Set(["user", "assistant"]);
/**
 * Subagent transcripts one import converts as children at most: each is a trace of its own,
 * staged, validated and written, and ten thousand took 93 s and 373 MB, twenty thousand did not
 * end (attack round 23 bounded B3).
 */
export const MAX_CHILDREN = 1000;

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

function blockText(content: string | ReadonlyArray<{ type: string }> | undefined): {
  text: string;
  other: string[];
} {
  if (content === undefined) return { text: "", other: [] };
  if (typeof content === "string") return { text: content, other: [] };
  return textParts(content);
}

/** Claude Code's names for the parts of an assistant message. */
const CLAUDE_PARTS: AssistantPartForm = {
  toolCall: "tool_use",
  callSchema: z.object({ id: z.string(), name: z.string(), input: z.unknown() }),
  args: "input",
  signature: "signature",
  noun: "content block",
};

/** One parse of a Claude Code transcript: the shared parse and what its line handlers share. */
interface ClaudeParse {
  p: ForeignParse;
  /** Parsing a subagent transcript: its first prompt is the parent's. */
  asChild: boolean;
  /** No prompt seen yet. */
  firstPrompt: boolean;
  /** Tool call id -> tool name. */
  calls: Map<string, string>;
  /** Subagent transcripts by the Agent call that spawned them. */
  byCall: Map<string, ClaudeSubagentFile>;
  /** Where each subagent's records go (else they are held). */
  childSpool: (() => ChildSpool) | undefined;
  /** The subagent transcripts already imported as a child (each is once). */
  used: Set<string>;
  /** Those named past {@linkcode MAX_CHILDREN}, not imported. */
  pastLimit: Set<string>;
}

/**
 * Convert a Claude Code transcript (see the module doc). `subagents` are
 * the transcripts found next to it; each one named by an Agent call of this
 * session becomes a child. `asChild` parses a subagent transcript itself:
 * its first prompt is the parent's. With `sink`, the session's records go
 * there as they are made; with `childSpool`, each child's go to a spool of
 * its own (else they stay in their sessions: eight 60 MB subagent
 * transcripts held at once took an import to 759 MB, attack round 22).
 */
export function parseClaude(
  text: ForeignText,
  file: string,
  subagents: readonly ClaudeSubagentFile[] = [],
  asChild = false,
  sink?: RecordSink,
  childSpool?: () => ChildSpool,
): ForeignSession {
  const p = startForeignParse(text, file, "claude", "anthropic", sink);
  const byCall = new Map<string, ClaudeSubagentFile>();
  for (const sub of subagents) {
    const m = metaFileSchema.safeParse(sub.meta);
    if (m.success) byCall.set(m.data.toolUseId, sub);
  }
  const cx: ClaudeParse = {
    p,
    asChild,
    firstPrompt: true,
    calls: new Map(),
    byCall,
    childSpool,
    used: new Set(),
    pastLimit: new Set(),
  };
  let lastTs = "";
  const offPath = linesOffPath(p.lines);
  for (const { line, value } of p.lines) {
    const branch = offPath.get(line);
    if (branch !== undefined) {
      p.lost(
        line,
        `branch ${branch}`,
        "a message not on the chain leading to the last one (an edited or retried turn); the chain to the last message is imported",
      );
      continue;
    }
    const rec = lineSchema.safeParse(value);
    if (!rec.success) {
      p.bad(line, `not a Claude Code transcript line: ${issue(rec.error)}`);
      continue;
    }
    const ts = rec.data.timestamp ?? lastTs;
    lastTs = ts;
    if (p.s.startedAt === "" && ts !== "") p.s.startedAt = ts;
    claudeLine(cx, rec.data, value, { ts, line });
  }
  // Subagent transcripts given but not named by any Agent call of this session.
  const named = new Set(p.s.children.map((c) => c.toolCallId));
  for (const sub of subagents) {
    const m = metaFileSchema.safeParse(sub.meta);
    // One past the limit was named (and noted there).
    if (cx.pastLimit.has(sub.file)) continue;
    if (!m.success || !named.has(m.data.toolUseId)) {
      p.loss.note(
        "subagent transcript not linked to an Agent call",
        sub.file,
        1,
        "no tool call of this session spawned it",
      );
    }
  }
  return finishForeignParse(p);
}

/** One transcript line, its envelope valid. */
function claudeLine(cx: ClaudeParse, r: Line, value: unknown, at: At): void {
  const { p } = cx;
  const lost = (kind: string, reason: string) => p.lost(at.line, kind, reason);
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
    return;
  }
  if (p.s.id === "") {
    p.s.id = cx.asChild && r.agentId ? r.agentId : r.sessionId ?? "";
    p.s.cwd = r.cwd ?? "";
  }
  if (p.s.version === null && r.version) p.s.version = r.version;
  if (r.isSidechain && !cx.asChild) {
    lost(
      "sidechain line in the main transcript",
      "subagent lines belong to the child's transcript",
    );
    return;
  }
  if (r.type === "user") userLine(cx, r, value, at);
  else assistantLine(cx, value, at);
}

/** A prompt (the parent's, for a child's first one; the harness's, for a meta line). */
function prompt(cx: ClaudeParse, text: string, r: Line, at: At): void {
  const sender = cx.asChild && cx.firstPrompt ? "parent_agent" : r.isMeta ? "harness" : undefined;
  cx.firstPrompt = false;
  cx.p.t.user(text, at, sender);
}

function userLine(cx: ClaudeParse, r: Line, value: unknown, at: At): void {
  const { p } = cx;
  const u = userSchema.safeParse(value);
  if (!u.success) return p.bad(at.line, `user: ${issue(u.error)}`);
  const content = u.data.message.content;
  if ((value as { toolUseResult?: unknown }).toolUseResult !== undefined) {
    p.lost(
      at.line,
      "toolUseResult",
      "the structured copy of a tool result (stdout, file content, patch); the tool_result the model saw is kept",
    );
  }
  if (typeof content === "string") return prompt(cx, content, r, at);
  const texts: string[] = [];
  for (const b of content) {
    if (b.type === "tool_result") {
      toolResult(cx, b, at);
    } else if (b.type === "text" && typeof (b as { text?: unknown }).text === "string") {
      texts.push((b as unknown as { text: string }).text);
    } else {
      p.lost(at.line, `user content ${b.type}`, "only text and tool results are imported");
    }
  }
  if (texts.length > 0) prompt(cx, texts.join("\n"), r, at);
}

/** A tool_result block: the output of its call, after the pointer to the subagent it ran. */
function toolResult(cx: ClaudeParse, b: unknown, at: At): void {
  const { p } = cx;
  const lost = (kind: string, reason: string) => p.lost(at.line, kind, reason);
  const tr = toolResultSchema.safeParse(b);
  if (!tr.success) return p.bad(at.line, `tool_result: ${issue(tr.error)}`);
  const { text, other } = blockText(tr.data.content);
  if (text.includes("<persisted-output>")) {
    lost(
      "persisted tool output",
      "the full output Claude Code saved beside the session (tool-results/); the preview the model saw is kept",
    );
  }
  for (const o of other) lost(`tool_result part ${o}`, "only text parts are imported");
  const child = cx.byCall.get(tr.data.tool_use_id);
  if (!child && SUBAGENT_TOOLS.has(cx.calls.get(tr.data.tool_use_id) ?? "")) {
    lost(
      "subagent transcript not found",
      "the subagent's own messages are not next to the session; its answer (the tool output) is kept",
    );
  }
  if (child && !cx.used.has(child.file) && cx.used.size >= MAX_CHILDREN) {
    cx.pastLimit.add(child.file);
    lost(
      "subagent transcript past the limit",
      `only the first ${MAX_CHILDREN} subagent transcripts are imported as children; its answer ` +
        `(the tool output) is kept`,
    );
  } else if (child && cx.used.has(child.file)) {
    // Named again (many tool_result blocks of one call): one child, not a copy per block
    // (attack round 23 bounded A02: 100 copies of one transcript).
    lost(
      "subagent transcript named again",
      "the transcript is imported once, as the child of the first result that names it",
    );
  } else if (child) {
    cx.used.add(child.file);
    const spool = cx.childSpool?.();
    let c: ForeignSession;
    try {
      c = parseClaude(child.text, child.file, [], true, spool?.sink);
    } finally {
      spool?.close();
    }
    p.s.children.push(
      {
        toolCallId: tr.data.tool_use_id,
        session: c,
        ...(spool ? { spool } : {}),
      } satisfies ForeignChild,
    );
    p.t.pointer(c.id, at);
  }
  p.t.output(tr.data.tool_use_id, text, tr.data.is_error === true, at);
}

function assistantLine(cx: ClaudeParse, value: unknown, at: At): void {
  const { p } = cx;
  const a = assistantSchema.safeParse(value);
  if (!a.success) return p.bad(at.line, `assistant: ${issue(a.error)}`);
  const m = a.data.message;
  if (m.model && p.s.modelId === "unknown" && m.model !== "<synthetic>") p.s.modelId = m.model;
  for (const b of m.content) {
    const call = assistantPart(p, b, at, m.id, CLAUDE_PARTS);
    if (call) cx.calls.set(call.id, call.name);
  }
  if (m.usage) p.t.usage(m.usage, at);
}

/**
 * Conversation lines not on the `parentUuid` chain that ends at the last
 * conversation line (a rewound or retried turn left a branch), each mapped
 * to the uuid its branch starts at. Compaction boundaries continue the chain
 * through `logicalParentUuid`. Empty when the file is one chain, or when the
 * chain is broken (a parent missing from the file): then file order is kept.
 */
function linesOffPath(lines: Iterable<{ line: number; value: unknown }>): Map<number, string> {
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
