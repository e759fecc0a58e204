/**
 * The numbered outline of a session, read from all of its trace files in
 * index order: what `sessions show` lists and what fork positions refer to.
 *
 * Numbering rule: the human prompts are numbered 1..n in file order. A human
 * prompt is a user-role `text` without `sender`, outside any compaction span
 * (which excludes the compaction prompt and its corrective note), that is not
 * a whole marker block of a kind that is never a task prompt:
 * `[context_summary]`, `[user_steering]`, `[turn_aborted]`, `[turn_retried]`,
 * `[handoff_from]`, `[model_switch_from]`, `[developer_instructions]` (or the
 * legacy `<tag>` form). Everything else is listed, unnumbered, under the
 * prompt it follows.
 *
 * @module
 */
import type {
  EventPayload,
  ModelPayload,
  OmniMessage,
  SessionMeta,
  TokenCounts,
} from "../protocol/types.ts";
import { keepProblem, readTrace, type TraceProblem } from "../trace/reader.ts";
import type { TraceFileRef } from "../trace/paths.ts";
import type { LocatedSession } from "./locate.ts";
import { forgetOldest } from "../protocol/forget_oldest.ts";
import { cutText } from "../protocol/short_text.ts";
import { maskedText } from "../protocol/record_mask.ts";

/** What an outline entry is. */
export type OutlineKind =
  | "prompt"
  | "user"
  | "summary"
  | "assistant"
  | "thinking"
  | "tool_call"
  | "tool_output"
  | "media"
  | "event";

/** One entry of the outline. */
export interface OutlineItem {
  /** What it is. */
  kind: OutlineKind;
  /** The prompt number (prompts only). */
  n?: number;
  /** Index of the trace file it is in. */
  file: number;
  /** Line in that file. */
  line: number;
  /** Record timestamp. */
  timestamp: string;
  /** Text, thinking, arguments or output; cut to the preview limit. */
  text: string;
  /** Length of the full content in characters. */
  chars: number;
  /** Tool name (tool calls and outputs of known calls). */
  name?: string;
  /** Tool call id. */
  toolCallId?: string;
  /** stop_reason of a model message, status of an event. */
  status?: string | undefined;
  /** Sender of a user text. */
  sender?: string;
  /** Event type (events only). */
  event?: string;
  /** True for records inside a compaction span. */
  inCompaction?: boolean;
  /** Line where a prompt's input begins (before any handoff/model-switch block written with it). */
  groupLine?: number;
}

/** The whole outline. */
export interface SessionOutline {
  /** The session. */
  sessionId: string;
  /** Its files, by index. */
  files: TraceFileRef[];
  /** The session_meta of the first file (null when unreadable). */
  meta: SessionMeta | null;
  /** Timestamp of that session_meta. */
  created: string | null;
  /** The entries in order: the last {@linkcode MAX_OUTLINE_ITEMS}. */
  items: OutlineItem[];
  /** How many entries before those are left out (0 for most sessions). */
  itemsLeftOut: number;
  /** Number of human prompts. */
  prompts: number;
  /** Completed requests outside compaction spans, across all files. */
  turns: number;
  /** Session counts of the last token_usage. */
  tokens: TokenCounts | null;
  /** Timestamp of the last record. */
  lastActivity: string | null;
  /** Lines skipped while reading. */
  problems: TraceProblem[];
}

const NON_PROMPT_BLOCKS = [
  "context_summary",
  "user_steering",
  "turn_aborted",
  "turn_retried",
  "handoff_from",
  "model_switch_from",
  "developer_instructions",
];
const INPUT_PREFIX_BLOCKS = new Set([
  "handoff_from",
  "model_switch_from",
  "developer_instructions",
]);

/** The tag of `text` when it is one whole `[tag]…[/tag]` (or `<tag>…</tag>`) block. */
export function wholeBlockTag(text: string): string | null {
  const t = text.trim();
  const m = /^[[<]([a-z_]+)[\]>]/.exec(t);
  if (!m) return null;
  const tag = m[1]!;
  return t.endsWith(`[/${tag}]`) || t.endsWith(`</${tag}>`) ? tag : null;
}

/**
 * `s` cut to `limit`, copied when cut: a slice kept the whole record's string alive for as long
 * as the outline (attack round 25 bounded C4: `sessions show` of 0.9 MB tool outputs, 741 MB).
 */
const cut = cutText;

/** Characters of a timestamp, a tool's name or a call id an outline keeps. */
const NAME_CHARS = 256;

/** The outline item of a shown event. */
function eventItem(
  p: EventPayload,
  base: { file: number; line: number; timestamp: string },
): OutlineItem {
  const detail = p.type === "request_end" || p.type === "compaction_end"
    ? (p.error_message ?? "")
    : p.type === "abort"
    ? (p.reason ?? "")
    : p.type === "subagent"
    ? p.session_id
    : `${p.reason} ${p.mode}`;
  const status = "status" in p ? String(p.status) : undefined;
  return {
    ...base,
    kind: "event",
    event: p.type,
    text: detail,
    chars: detail.length,
    status,
  };
}

/** The outline item of a model message other than a text; a tool call's name is noted in `callNames`. */
function modelItem(
  p: Exclude<ModelPayload, { type: "text" }>,
  base: { file: number; line: number; timestamp: string },
  limit: number,
  callNames: Map<string, string>,
): OutlineItem {
  switch (p.type) {
    case "thinking":
      return {
        ...base,
        kind: "thinking",
        text: cut(p.thinking, limit),
        chars: p.thinking.length,
      };
    case "tool_call":
      callNames.set(cut(p.tool_call_id, NAME_CHARS), cut(p.name, NAME_CHARS));
      forgetOldest(callNames, MAX_OUTLINE_ITEMS);
      return {
        ...base,
        kind: "tool_call",
        name: cut(p.name, NAME_CHARS),
        toolCallId: p.tool_call_id,
        text: cut(p.arguments, limit),
        chars: p.arguments.length,
        status: p.stop_reason,
      };
    case "tool_call_output": {
      const item: OutlineItem = {
        ...base,
        kind: "tool_output",
        toolCallId: p.tool_call_id,
        text: cut(p.output, limit),
        chars: p.output.length,
        status: p.stop_reason,
      };
      const name = callNames.get(cut(p.tool_call_id, NAME_CHARS));
      if (name !== undefined) item.name = name;
      return item;
    }
    default: {
      const what = p.type === "image_url"
        ? (p.image_url.startsWith("data:") ? "[image data URL]" : p.image_url)
        : `[${p.type} ${"mime_type" in p ? String(p.mime_type) : ""}]`;
      return { ...base, kind: "media", text: cut(what, limit), chars: what.length };
    }
  }
}

/**
 * The most entries an outline keeps: the last ones, the others counted. A
 * session of 600,000 tool calls was held whole: 425 MB, 441 MB with --json
 * (attack round 24 bounded R8).
 */
export const MAX_OUTLINE_ITEMS = 10_000;

/** Keep the last {@linkcode MAX_OUTLINE_ITEMS} entries of `out`, counting the others. */
function trimItems(out: SessionOutline): void {
  const over = out.items.length - MAX_OUTLINE_ITEMS;
  if (over <= 0) return;
  out.itemsLeftOut += over;
  out.items = out.items.slice(over);
}

/**
 * Read every file of a located session and build its outline. `preview`
 * caps the text kept per entry (default 2000 characters); `mask` is applied
 * to every record read (the current secrets masked).
 */
export async function buildOutline(
  session: LocatedSession,
  options: { preview?: number; mask?: ((message: OmniMessage) => OmniMessage) | undefined } = {},
): Promise<SessionOutline> {
  // Long because: one pass over every record of every file; its cases share the per-file state
  // (compaction, request, prefix lines) and the call names.
  const limit = options.preview ?? 2000;
  const out: SessionOutline = {
    // Masked as the records are: an imported session's id may hold a value set as a secret since
    // (attack round 25 secrets B3).
    sessionId: options.mask ? maskedText(options.mask, session.sessionId) : session.sessionId,
    files: options.mask
      ? session.files.map((f) => ({ ...f, path: maskedText(options.mask, f.path) }))
      : session.files,
    meta: null,
    created: null,
    items: [],
    itemsLeftOut: 0,
    prompts: 0,
    turns: 0,
    tokens: null,
    lastActivity: null,
    problems: [],
  };
  const callNames = new Map<string, string>();
  for (const f of session.files) {
    let inCompaction = false;
    let inRequest = false;
    // Lines of the input-prefix blocks written right before the next prompt.
    let prefixLine: number | null = null;
    const push = (item: OutlineItem) => {
      if (inCompaction) item.inCompaction = true;
      out.items.push(item);
      if (out.items.length >= 2 * MAX_OUTLINE_ITEMS) trimItems(out);
    };
    for await (
      const { line, message: m } of readTrace(f.path, {
        mask: options.mask,
        onProblem: keepProblem(out.problems),
      })
    ) {
      if (m.origin !== undefined && m.origin.length > 0) continue;
      const timestamp = cut(m.timestamp, NAME_CHARS);
      out.lastActivity = timestamp;
      const base = { file: f.index, line, timestamp };
      if (m.type === "session_meta") {
        if (out.meta === null) {
          out.meta = m.payload;
          out.created = m.timestamp;
        }
        continue;
      }
      if (m.type === "event_msg") {
        const p = m.payload;
        if (p.type !== "tool_list_ready") prefixLine = null;
        if (p.type === "request_begin") inRequest = true;
        if (p.type === "token_usage") out.tokens = p.session;
        if (p.type === "compaction_begin") inCompaction = true;
        if (p.type === "request_end") {
          if (inRequest && p.status === "completed" && !inCompaction) out.turns++;
          inRequest = false;
        }
        const shown = ["request_end", "abort", "compaction_begin", "compaction_end", "subagent"];
        if (shown.includes(p.type)) push(eventItem(p, base));
        if (p.type === "compaction_end") inCompaction = false;
        continue;
      }
      const p = m.payload;
      switch (p.type) {
        case "text": {
          if (p.role === "assistant") {
            push({
              ...base,
              kind: "assistant",
              text: cut(p.text, limit),
              chars: p.text.length,
              status: p.stop_reason,
            });
            prefixLine = null;
            break;
          }
          const tag = wholeBlockTag(p.text);
          const human = p.sender === undefined && !inCompaction &&
            (tag === null || !NON_PROMPT_BLOCKS.includes(tag));
          if (human) {
            out.prompts++;
            push({
              ...base,
              kind: "prompt",
              n: out.prompts,
              text: cut(p.text, limit),
              chars: p.text.length,
              groupLine: prefixLine ?? line,
            });
            prefixLine = null;
            break;
          }
          if (tag !== null && INPUT_PREFIX_BLOCKS.has(tag) && !inRequest) prefixLine ??= line;
          else prefixLine = null;
          const kind = tag === "context_summary" ? "summary" : "user";
          const item: OutlineItem = {
            ...base,
            kind,
            text: cut(p.text, limit),
            chars: p.text.length,
          };
          if (p.sender !== undefined) item.sender = p.sender;
          push(item);
          break;
        }
        default:
          push(modelItem(p, base, limit, callNames));
      }
      // Only prefix blocks may stand between a prefix block and its prompt.
      if (p.type !== "text" && p.type !== "image_url") prefixLine = null;
    }
  }
  trimItems(out);
  return out;
}

/** Where a copy of a session is cut: keep lines 1..`line` of file `file` (its index). */
export interface CutPoint {
  /** The file index (the file the copy is made from). */
  file: number;
  /** The last line kept (inclusive). */
  line: number;
}

/** The outline item of prompt `n`, or null. */
export function promptItem(outline: SessionOutline, n: number): OutlineItem | null {
  return outline.items.find((i) => i.kind === "prompt" && i.n === n) ?? null;
}

/** The cut before prompt `n`: everything written before its input began. */
export function cutBefore(outline: SessionOutline, n: number): CutPoint | null {
  const p = promptItem(outline, n);
  if (!p) return null;
  return { file: p.file, line: (p.groupLine ?? p.line) - 1 };
}

/**
 * The cut after the answer to prompt `n`: the end of the last completed
 * request (outside compaction spans) of that task, i.e. before the next
 * prompt. Null when the task has no completed request.
 */
export function cutAfterAnswer(outline: SessionOutline, n: number): CutPoint | null {
  const start = outline.items.findIndex((i) => i.kind === "prompt" && i.n === n);
  if (start < 0) return null;
  let found: OutlineItem | null = null;
  for (let i = start + 1; i < outline.items.length; i++) {
    const it = outline.items[i]!;
    if (it.kind === "prompt") break;
    if (
      it.kind === "event" && it.event === "request_end" && it.status === "completed" &&
      !it.inCompaction
    ) {
      found = it;
    }
  }
  return found ? { file: found.file, line: found.line } : null;
}
