/**
 * The normalized conversation of one session — what `trace export` writes as
 * JSON and renders as Markdown or HTML: the session's facts, its family
 * (fork parent via the meta's `lineage`, forks of it, subagent children via
 * `subagent` events), one summary per request (status, latency, tokens) and
 * a flat timeline of items in trace order. A parent and its subagent
 * children are one unit: the conversations of the children found next to
 * the parent's traces come along in `subagents` (unless `children: false`).
 *
 * @module
 */
import { basename } from "node:path";
import type { OmniMessage, SessionMeta } from "../protocol/types.ts";
import { createCallNumbers, MAX_NUMBERED_IDS } from "../display/call_numbers.ts";
import { readTrace, type TraceProblem } from "../trace/reader.ts";
import { parseTraceFileName } from "../trace/paths.ts";
import { parseTimestamp } from "./format.ts";
import { importOrigin } from "../session/import_origin.ts";
import { toolCallPreview } from "../display/tool_preview.ts";
import { builtinToolPreviews } from "../agent/tool_previews.ts";
import { relativesDirOf, walkTraceFiles } from "../trace/layout.ts";
import { findRelative, readSessionMeta, type SessionFiles } from "../trace/session_files.ts";
import { forgetOldest } from "../protocol/forget_oldest.ts";
import { cutText } from "../protocol/short_text.ts";
import { maskedText } from "../protocol/record_mask.ts";

/** Characters of a tool's name or a call id a view keeps (copied when cut). */
const SHOWN_NAME_CHARS = 256;

/** One timeline item. `request` is the request it belongs to (0 before the first). */
/** The one-line preview of a tool call in exports (at most 120 characters). */
export function toolPreview(name: string, args: string): string {
  return toolCallPreview(name, args, { final: true, max: 120, previews: builtinToolPreviews }) ??
    name;
}

export type ConvItem =
  & { time: string; request: number }
  & (
    | { kind: "user"; text: string; sender?: string }
    | { kind: "assistant"; text: string; stop_reason: string }
    | { kind: "thinking"; text: string; stop_reason: string }
    | {
      kind: "tool_call";
      id: string;
      /** The call's short number, `#n` in every view (display/call_numbers.ts). */
      n: number;
      name: string;
      arguments: string;
      preview: string;
      stop_reason: string;
    }
    | {
      kind: "tool_output";
      id: string;
      n: number;
      name: string;
      output: string;
      stop_reason: string;
      images: string[];
    }
    | { kind: "approval"; id: string; n: number; decision: string }
    | { kind: "request_begin" }
    | {
      kind: "request_end";
      status: string;
      error_message?: string;
      attempt?: number;
      retry_in_ms?: number;
      latency_ms: number | null;
    }
    | { kind: "abort"; reason: string }
    | { kind: "compaction_begin"; reason: string; mode: string }
    | { kind: "compaction_end"; status: string; mode: string; error_message?: string }
    | { kind: "subagent"; session_id: string }
    | { kind: "image"; url: string }
    | { kind: "data"; mime_type: string; chars: number }
    | { kind: "tools"; names: string[] }
    | { kind: "context"; file: string }
    | { kind: "event"; type: string; payload: Record<string, unknown> }
  );

/** An item without a long text of its own: one line of an export. */
export type LineItem = Exclude<
  ConvItem,
  { kind: "user" | "assistant" | "thinking" | "tool_call" | "tool_output" }
>;

/** Token counts of one request. */
export interface RequestTokens {
  /** Cached input. */
  cache_read: number;
  /** Uncached input. */
  cache_write: number;
  /** Output. */
  output: number;
  /** Sum. */
  total: number;
}

/** One request (attempt). */
export interface RequestSummary {
  /** 1-based ordinal in the session. */
  n: number;
  /** request_begin time. */
  begin: string;
  /** request_end time (null when the trace ends inside the request). */
  end: string | null;
  /** request_end status (null when none). */
  status: string | null;
  /** end − begin, ms. */
  latency_ms: number | null;
  /** token_usage.request, when the request completed. */
  tokens: RequestTokens | null;
  /** Inside a compaction span. */
  compaction: boolean;
}

/** A related session. */
export interface Relative {
  /** Its session id. */
  session_id: string;
  /** How it relates. */
  relation: "parent" | "fork" | "clone" | "subagent";
  /** Its trace files, when found next to this session's. */
  files: string[];
}

/** The normalized conversation. */
export interface Conversation {
  /** Format tag. */
  format: "penguin.conversation/1";
  /** Session facts (from the first session_meta). */
  session: {
    session_id: string;
    provider: string | null;
    model_id: string | null;
    workspace: string | null;
    agent_state: string | null;
    source: string | null;
    lineage: Record<string, unknown> | null;
    /** Where an imported session came from (one line), else null. */
    imported_from: string | null;
    system_prompt: string | null;
    started: string | null;
    ended: string | null;
    files: string[];
  };
  /** Parent, forks and subagent children. */
  family: {
    parent: Relative | null;
    forks: Relative[];
    children: Relative[];
    /** Pointers past the first {@linkcode MAX_FAMILY_CHILDREN} children: counted, not looked up. */
    more_children?: number;
  };
  /** Per request. */
  requests: RequestSummary[];
  /** The timeline. */
  items: ConvItem[];
  /** Lines skipped as malformed. */
  skipped_lines: number;
  /** The conversations of the subagent children found on disk, in spawn order (absent when none). */
  subagents?: Conversation[];
}

function n(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

/** Options of {@linkcode loadConversation}. */
export interface LoadOptions {
  /** Look up the family (forks, children) on disk; default true. */
  family?: boolean;
  /** Load the subagent children's conversations into `subagents`; default true (needs `family`). */
  children?: boolean;
  /** Skipped lines. */
  onProblem?: (p: TraceProblem) => void;
  /** Sessions already loaded (guards against pointer cycles). */
  seen?: Set<string>;
  /**
   * Hand each timeline item to this as it is read instead of keeping it
   * (`items` stays empty, in the subagents' conversations too): a huge
   * trace then costs its request summaries, not its texts.
   */
  onItem?: (item: ConvItem) => void | Promise<void>;
  /** Applied to every record read (the current secrets masked). */
  mask?: ((message: OmniMessage) => OmniMessage) | undefined;
}

/** What one pass over a session's records builds: the items, the request summaries, the children. */
interface ConversationPass {
  /** Where items go: the conversation's, or (with `onItem`) a record's until they are handed on. */
  fresh: ConvItem[];
  requests: RequestSummary[];
  /** Tool names by call id, for the outputs. */
  names: Map<string, string>;
  /** The calls' short numbers. */
  numbers: ReturnType<typeof createCallNumbers>;
  /** The children the pointers name, the first {@linkcode MAX_FAMILY_CHILDREN}. */
  childIds: string[];
  moreChildren: number;
  /** The request begun and not yet ended. */
  open: RequestSummary | null;
  inCompaction: boolean;
}

/** The children of a session a view looks up at most (a trace of 600,000 pointers: 553 MB). */
export const MAX_FAMILY_CHILDREN = 1000;

function pushItem(pass: ConversationPass, time: string, item: Record<string, unknown>): void {
  pass.fresh.push({ time, request: pass.requests.length, ...item } as ConvItem);
}

/** The item of a `model_msg` record. */
function addModelMsg(pass: ConversationPass, t: string, p: Record<string, unknown>): void {
  const push = (time: string, item: Record<string, unknown>) => pushItem(pass, time, item);
  const type = String(p.type);
  const stop = String(p.stop_reason ?? "completed");
  if (type === "text") {
    if (p.role === "user") {
      push(t, {
        kind: "user",
        text: String(p.text),
        ...(p.sender ? { sender: p.sender } : {}),
      });
    } else push(t, { kind: "assistant", text: String(p.text), stop_reason: stop });
  } else if (type === "thinking") {
    push(t, { kind: "thinking", text: String(p.thinking), stop_reason: stop });
  } else if (type === "tool_call") {
    // Names and ids as a view keeps them, cut and copied: kept whole, megabyte names took the
    // exports to 676 MB and the OTLP export to 1056 MB (attack round 25 bounded C15).
    const id = cutText(String(p.tool_call_id), SHOWN_NAME_CHARS);
    const name = cutText(String(p.name), SHOWN_NAME_CHARS);
    pass.names.set(id, name);
    // The oldest forgotten past a bound (600,000 calls never answered kept every name: attack
    // round 24 bounded R9).
    forgetOldest(pass.names, MAX_NUMBERED_IDS);
    push(t, {
      kind: "tool_call",
      id,
      n: pass.numbers.of(id),
      name,
      arguments: String(p.arguments),
      preview: toolPreview(name, String(p.arguments)),
      stop_reason: stop,
    });
  } else if (type === "tool_call_output") {
    const id = cutText(String(p.tool_call_id), SHOWN_NAME_CHARS);
    push(t, {
      kind: "tool_output",
      id,
      n: pass.numbers.of(id),
      name: pass.names.get(id) ?? "?",
      output: String(p.output),
      stop_reason: stop,
      images: Array.isArray(p.images) ? p.images.map(String) : [],
    });
  } else if (type === "image_url") {
    push(t, { kind: "image", url: String(p.image_url) });
  } else {
    push(t, { kind: "data", mime_type: String(p.mime_type), chars: String(p.data).length });
  }
}

/** The item (and request summary) of an `event_msg` record. */
function addEvent(pass: ConversationPass, t: string, p: Record<string, unknown>): void {
  // Long because: one switch over the event types, a few lines each; the cases share the items
  // and the open request of the pass.
  const push = (time: string, item: Record<string, unknown>) => pushItem(pass, time, item);
  const type = String(p.type);
  const { requests } = pass;
  const open = pass.open;
  switch (type) {
    case "request_begin":
      pass.open = {
        n: requests.length + 1,
        begin: t,
        end: null,
        status: null,
        latency_ms: null,
        tokens: null,
        compaction: pass.inCompaction,
      };
      requests.push(pass.open);
      push(t, { kind: "request_begin" });
      return;
    case "token_usage": {
      const r = p.request as Record<string, unknown> | undefined;
      if (open && r) {
        open.tokens = {
          cache_read: n(r.cache_read),
          cache_write: n(r.cache_write),
          output: n(r.output),
          total: n(r.total),
        };
      }
      return;
    }
    case "request_end": {
      const latency = open ? parseTimestamp(t) - parseTimestamp(open.begin) : NaN;
      if (open) {
        open.end = t;
        open.status = String(p.status);
        open.latency_ms = Number.isFinite(latency) ? latency : null;
      }
      push(t, {
        kind: "request_end",
        status: String(p.status),
        latency_ms: Number.isFinite(latency) ? latency : null,
        ...(p.error_message !== undefined ? { error_message: String(p.error_message) } : {}),
        ...(p.attempt !== undefined ? { attempt: p.attempt } : {}),
        ...(p.retry_in_ms !== undefined ? { retry_in_ms: p.retry_in_ms } : {}),
      });
      pass.open = null;
      return;
    }
    case "approval_decision":
      push(t, {
        kind: "approval",
        id: cutText(String(p.tool_call_id), SHOWN_NAME_CHARS),
        n: pass.numbers.of(cutText(String(p.tool_call_id), SHOWN_NAME_CHARS)),
        decision: String(p.decision),
      });
      return;
    case "abort":
      push(t, { kind: "abort", reason: String(p.reason ?? "") });
      return;
    case "compaction_begin":
      pass.inCompaction = true;
      push(t, { kind: "compaction_begin", reason: String(p.reason), mode: String(p.mode) });
      return;
    case "compaction_end":
      pass.inCompaction = false;
      push(t, {
        kind: "compaction_end",
        status: String(p.status),
        mode: String(p.mode),
        ...(p.error_message !== undefined ? { error_message: String(p.error_message) } : {}),
      });
      return;
    case "subagent":
      if (pass.childIds.length < MAX_FAMILY_CHILDREN) pass.childIds.push(String(p.session_id));
      else pass.moreChildren++;
      push(t, { kind: "subagent", session_id: String(p.session_id) });
      return;
    case "tool_list_ready":
      push(t, {
        kind: "tools",
        names: Array.isArray(p.tools) ? p.tools.map((x) => String(x?.name)) : [],
      });
      return;
    default:
      push(t, { kind: "event", type, payload: p });
  }
}

/** Read a session into a {@linkcode Conversation}. */
export async function loadConversation(
  session: SessionFiles,
  options: LoadOptions = {},
): Promise<Conversation> {
  // Long because: one pass over the records (addModelMsg, addEvent) and then the session's family
  // and subagents, assembled into the one conversation value.
  const items: ConvItem[] = [];
  // With `onItem`, the items of one record wait here until it is handed them.
  const pass: ConversationPass = {
    fresh: options.onItem ? [] : items,
    requests: [],
    names: new Map(),
    numbers: createCallNumbers(),
    childIds: [],
    moreChildren: 0,
    open: null,
    inCompaction: false,
  };
  const { fresh, requests, childIds } = pass;
  let meta: SessionMeta | null = null;
  let first: string | null = null;
  let last: string | null = null;
  let skipped = 0;
  const add = (msg: OmniMessage, file: string) => {
    const t = msg.timestamp;
    first ??= t;
    last = t;
    if (msg.type === "session_meta") {
      if (meta === null) meta = msg.payload;
      else pushItem(pass, t, { kind: "context", file });
      return;
    }
    const p = msg.payload as Record<string, unknown>;
    if (msg.type === "model_msg") addModelMsg(pass, t, p);
    else addEvent(pass, t, p);
  };

  for (const file of session.files) {
    // Paths masked as the records are: a file is named after its session's id, which may hold a
    // value set as a secret since (attack round 25 secrets B3).
    const shownPath = maskedText(options.mask, file.path);
    for await (
      const { message } of readTrace(file.path, {
        mask: options.mask,
        onProblem: (pr) => {
          skipped++;
          options.onProblem?.(pr);
        },
      })
    ) {
      if (message.origin === undefined) add(message, shownPath);
      if (options.onItem && fresh.length > 0) {
        for (const it of fresh.splice(0)) await options.onItem(it);
      }
    }
  }
  const m = meta as SessionMeta | null;
  const lineage = m && typeof m.lineage === "object" && m.lineage !== null
    ? m.lineage as Record<string, unknown>
    : null;
  const sessionId = m?.session_id ?? session.key;
  const firstPath = session.files[0]!.path;
  const family = options.family === false
    ? { parent: null, forks: [], children: [] }
    : await findFamily(firstPath, sessionId, lineage, childIds);
  if (pass.moreChildren > 0) family.more_children = pass.moreChildren;
  const subagents: Conversation[] = [];
  if (options.children !== false) {
    const seen = options.seen ?? new Set<string>();
    seen.add(sessionId);
    for (const c of family.children) {
      if (c.files.length === 0 || seen.has(c.session_id)) continue;
      seen.add(c.session_id);
      const files = c.files.map((path) => ({
        path,
        index: parseTraceFileName(basename(path))?.index ?? null,
      }));
      subagents.push(await loadConversation({ key: c.session_id, files }, { ...options, seen }));
    }
  }
  return {
    format: "penguin.conversation/1",
    session: {
      session_id: sessionId,
      provider: m?.provider ?? null,
      model_id: m?.model_id ?? null,
      workspace: m?.workspace ?? null,
      agent_state: m?.agent_state ?? null,
      source: m?.source ?? null,
      lineage,
      imported_from: importOrigin(m?.imported_from),
      system_prompt: m?.system_prompt ?? null,
      started: first,
      ended: last,
      files: session.files.map((f) => f.path),
    },
    family,
    requests,
    items,
    skipped_lines: skipped,
    ...(subagents.length > 0 ? { subagents } : {}),
  };
}

async function findFamily(
  tracePath: string,
  sessionId: string,
  lineage: Record<string, unknown> | null,
  childIds: string[],
): Promise<Conversation["family"]> {
  const cache = new Map<string, string | null>();
  const filesOf = async (id: string) =>
    (await findRelative(tracePath, id, cache))?.files.map((f) => f.path) ?? [];
  let parent: Relative | null = null;
  if (lineage && typeof lineage.parent_session_id === "string") {
    parent = {
      session_id: lineage.parent_session_id,
      relation: "parent",
      files: await filesOf(lineage.parent_session_id),
    };
  }
  const children: Relative[] = [];
  for (const id of new Set(childIds)) {
    children.push({ session_id: id, relation: "subagent", files: await filesOf(id) });
  }
  // Forks of this session: first files next to it whose meta's lineage points here.
  const forks = new Map<string, Relative>();
  for (const f of await walkTraceFiles(relativesDirOf(tracePath))) {
    const parsed = parseTraceFileName(basename(f));
    if (parsed && parsed.index !== 1) continue;
    const meta = await readSessionMeta(f);
    const lin = meta?.lineage as Record<string, unknown> | undefined;
    if (!meta || !lin || lin.parent_session_id !== sessionId) continue;
    const rel = forks.get(meta.session_id) ??
      {
        session_id: meta.session_id,
        relation: lin.kind === "clone" ? "clone" as const : "fork" as const,
        files: [],
      };
    rel.files.push(f);
    forks.set(meta.session_id, rel);
  }
  return { parent, forks: [...forks.values()], children };
}
