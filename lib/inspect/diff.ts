/**
 * `trace diff`: where two sessions (e.g. a fork and its parent) diverge. The
 * complete model messages of both are compared in order (payloads, ignoring
 * timestamps; events do not count); the result is the common prefix length
 * and, for each side, what came after it — compact one-line entries plus
 * request, tool-call and token counts. Both traces are streamed twice (find
 * the prefix, then collect the tails); only the tails' entries are kept.
 *
 * @module
 */
import type { CompleteMessage, OmniMessage, SessionMeta } from "../protocol/types.ts";
import { readTrace } from "../trace/reader.ts";
import { breaksMarked, firstLine } from "./format.ts";
import { toolCallPreview } from "../display/tool_preview.ts";
import { builtinToolPreviews } from "../agent/tool_previews.ts";
import type { SessionFiles } from "./targets.ts";

/** One model message after the divergence, in one line. */
export interface DiffEntry {
  /** 1-based position among the session's model messages. */
  index: number;
  /** `user`, `assistant`, `thinking`, `tool_call`, `tool_output`, `image`, `data`. */
  kind: string;
  /** The one-line summary. */
  summary: string;
  /** File and line of the record. */
  file: string;
  /** Line in that file. */
  line: number;
  /** Record time. */
  time: string;
}

/** One side of a diff. */
export interface DiffSide {
  /** Session id (from the meta, else the grouping key). */
  session_id: string;
  /** provider/model. */
  model: string | null;
  /** Its files. */
  files: string[];
  /** Model messages in total. */
  messages: number;
  /** Where the first differing model message is (null when the side ends within the prefix). */
  diverged_at: { file: string; line: number } | null;
  /** Counts after the prefix. */
  after: { messages: number; requests: number; tool_calls: number; tokens: number };
  /** The entries after the prefix (at most `limit`). */
  entries: DiffEntry[];
}

/** The result of {@linkcode diffSessions}. */
export interface DiffReport {
  /** First session. */
  a: DiffSide;
  /** Second session. */
  b: DiffSide;
  /** Model messages both share, from the start. */
  common_prefix: number;
  /** E.g. "b is a fork of a (cut after line 12 of _001)", or null. */
  relation: string | null;
}

interface Rec {
  msg: OmniMessage;
  file: string;
  line: number;
}

async function* records(session: SessionFiles): AsyncGenerator<Rec> {
  for (const f of session.files) {
    for await (const r of readTrace(f.path)) {
      if (r.message.origin === undefined) yield { msg: r.message, file: f.path, line: r.line };
    }
  }
}

async function* modelMessages(session: SessionFiles): AsyncGenerator<Rec> {
  for await (const r of records(session)) if (r.msg.type === "model_msg") yield r;
}

/**
 * Whether `a` and `b` are the same JSON value, keys in any order. Compared in place: the
 * canonical JSON text of each was built before, and a 66 MB record took `trace diff` to
 * 676 MB (attack round 25 bounded C12).
 */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  }
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return false;
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) =>
    Object.hasOwn(b, k) &&
    sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])
  );
}

/** Lines of `text` as `split("\n")` counts them, a final newline not starting one. */
function lineCount(text: string): number {
  const end = text.endsWith("\n") ? text.length - 1 : text.length;
  let n = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < end; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** A one-line summary of a complete model message. */
export function summarize(p: CompleteMessage, names: Map<string, string>): [string, string] {
  switch (p.type) {
    case "text":
      return p.role === "user"
        ? ["user", `user${p.sender ? ` (${p.sender})` : ""}: ${firstLine(p.text, 100)}`]
        : ["assistant", `assistant: ${firstLine(p.text, 100)}`];
    case "thinking":
      return ["thinking", `thinking: ${p.thinking ? firstLine(p.thinking, 100) : "(encrypted)"}`];
    case "tool_call":
      names.set(p.tool_call_id, p.name);
      return [
        "tool_call",
        `tool_call ${
          toolCallPreview(p.name, p.arguments, {
            final: true,
            max: 100,
            previews: builtinToolPreviews,
          })
        }`,
      ];
    case "tool_call_output": {
      // Counted and cut without splitting the output (an array of its lines, each a copy).
      const lines = lineCount(p.output);
      const nl = p.output.indexOf("\n");
      const first = p.output.slice(0, Math.min(nl < 0 ? p.output.length : nl, 1024));
      return [
        "tool_output",
        `tool_output ${names.get(p.tool_call_id) ?? p.tool_call_id} [${p.stop_reason}] ${
          breaksMarked(first, 80)
        }${lines > 1 ? ` (+${lines - 1} lines)` : ""}`,
      ];
    }
    case "image_url":
      return ["image", `image ${breaksMarked(p.image_url, 60)}`];
    default:
      return ["data", `${p.type} ${"mime_type" in p ? String(p.mime_type) : ""}`];
  }
}

async function metaOf(session: SessionFiles): Promise<SessionMeta | null> {
  for await (const r of records(session)) {
    return r.msg.type === "session_meta" ? r.msg.payload : null;
  }
  return null;
}

async function side(
  session: SessionFiles,
  prefix: number,
  limit: number,
): Promise<DiffSide> {
  const meta = await metaOf(session);
  const names = new Map<string, string>();
  const out: DiffSide = {
    session_id: meta?.session_id ?? session.key,
    model: meta ? `${meta.provider}/${meta.model_id}` : null,
    files: session.files.map((f) => f.path),
    messages: 0,
    diverged_at: null,
    after: { messages: 0, requests: 0, tool_calls: 0, tokens: 0 },
    entries: [],
  };
  // A request counts as "after" when it began after the divergence or produced
  // a divergent message; its tokens count with it.
  let reqOpen = false;
  let reqCounted = false;
  for await (const r of records(session)) {
    if (r.msg.type === "model_msg") {
      out.messages++;
      const p = r.msg.payload as CompleteMessage;
      const [kind, summary] = summarize(p, names);
      if (out.messages <= prefix) continue;
      if (out.diverged_at === null) out.diverged_at = { file: r.file, line: r.line };
      if (reqOpen && !reqCounted) {
        reqCounted = true;
        out.after.requests++;
      }
      out.after.messages++;
      if (p.type === "tool_call") out.after.tool_calls++;
      if (out.entries.length < limit) {
        out.entries.push({
          index: out.messages,
          kind,
          summary,
          file: r.file,
          line: r.line,
          time: r.msg.timestamp,
        });
      }
    } else if (r.msg.type === "event_msg") {
      const p = r.msg.payload;
      if (p.type === "request_begin") {
        reqOpen = true;
        reqCounted = out.messages > prefix;
        if (reqCounted) out.after.requests++;
      } else if (p.type === "request_end") {
        reqOpen = false;
      } else if (p.type === "token_usage" && reqCounted) {
        const t = (p.request as { total?: unknown }).total;
        if (typeof t === "number") out.after.tokens += t;
      }
    }
  }
  return out;
}

function relationOf(a: SessionMeta | null, b: SessionMeta | null): string | null {
  const rel = (child: SessionMeta | null, parent: SessionMeta | null, c: string, p: string) => {
    const lin = child?.lineage as Record<string, unknown> | undefined;
    if (!lin || !parent || lin.parent_session_id !== parent.session_id) return null;
    return `${c} is a ${lin.kind ?? "fork"} of ${p} (cut after line ${lin.line ?? "?"} of _${
      String(lin.trace_index ?? "?").padStart(3, "0")
    })`;
  };
  return rel(b, a, "b", "a") ?? rel(a, b, "a", "b");
}

/** Compare sessions `a` and `b` (see the module doc); at most `limit` entries per side. */
export async function diffSessions(
  a: SessionFiles,
  b: SessionFiles,
  limit = 200,
): Promise<DiffReport> {
  const ia = modelMessages(a);
  const ib = modelMessages(b);
  let prefix = 0;
  try {
    while (true) {
      const [ra, rb] = await Promise.all([ia.next(), ib.next()]);
      if (ra.done || rb.done) break;
      if (!sameValue(ra.value.msg.payload, rb.value.msg.payload)) break;
      prefix++;
    }
  } finally {
    await ia.return(undefined);
    await ib.return(undefined);
  }
  const [sa, sb, ma, mb] = await Promise.all([
    side(a, prefix, limit),
    side(b, prefix, limit),
    metaOf(a),
    metaOf(b),
  ]);
  return { a: sa, b: sb, common_prefix: prefix, relation: relationOf(ma, mb) };
}
