// File-level rules of `validateTraceFiles`. Each rule sees the valid records
// of one file in order and may report problems; add a rule by appending a
// factory to FILE_CHECKS. Rules that span the files of a session live in
// validate.ts. A finding marked `warning` is reported but does not make the
// file invalid: it is what a crash leaves, and resume tolerates it.
import { basename } from "node:path";
import { isPartial } from "../protocol/guards.ts";
import { preview } from "../protocol/validate.ts";
import type { TraceProblem, TraceRecord } from "./reader.ts";
import { parseTraceFileName } from "./paths.ts";

/** What a rule knows about the file it checks. */
export interface CheckContext {
  /** The file, as the caller named it. */
  file: string;
  /** Require `<session_id>_<NNN>.jsonl` names for every file, not only `session-…` ones. */
  strictNames: boolean;
  /** Problems the reader found so far in this file. */
  problemsSoFar(): number;
  /** True when the reader found a torn last line. */
  tornTail(): boolean;
}

/** A problem, or (with `warning: true`) something worth reporting that does not invalidate the file. */
export interface CheckFinding extends TraceProblem {
  /** Reported as a warning: resume tolerates it. */
  warning?: true;
}

/** One rule, instantiated per file. */
export interface FileCheck {
  /** See the next valid record; return the problems it shows. */
  record(rec: TraceRecord): CheckFinding[];
  /** The file ended after `lines` lines; return any last problems. */
  end(lines: number): CheckFinding[];
}

function structure(file: string, line: number, reason: string): TraceProblem {
  return { file, line, kind: "structure", reason };
}

function warning(file: string, line: number, reason: string): CheckFinding {
  return { file, line, kind: "structure", reason, warning: true };
}

function describe(rec: TraceRecord): string {
  const m = rec.message;
  return m.type === "session_meta"
    ? "a session_meta"
    : `a ${m.type} ${JSON.stringify(m.payload.type)}`;
}

/** The first record is a `session_meta`, and it is the only one. */
function sessionMetaFirst(ctx: CheckContext): FileCheck {
  let seen = 0;
  let firstLine = 0;
  return {
    record(rec) {
      seen++;
      if (seen === 1) {
        firstLine = rec.line;
        // A damaged line before the first record already explains the file.
        if (rec.message.type !== "session_meta" && ctx.problemsSoFar() === 0) {
          return [
            structure(
              ctx.file,
              rec.line,
              `expected a session_meta as the first record, found ${describe(rec)}`,
            ),
          ];
        }
        return [];
      }
      if (rec.message.type === "session_meta") {
        return [
          structure(
            ctx.file,
            rec.line,
            `expected one session_meta per file (at line ${firstLine}), found another`,
          ),
        ];
      }
      return [];
    },
    end(lines) {
      if (seen > 0 || ctx.problemsSoFar() > 0) return [];
      return [
        structure(
          ctx.file,
          Math.max(lines, 1),
          "expected a session_meta as the first record, found no records",
        ),
      ];
    },
  };
}

/** A file named `session-…_NNN.jsonl` (any name under strictNames) carries that session id. */
function nameMatchesSession(ctx: CheckContext): FileCheck {
  const name = basename(ctx.file);
  const parsed = parseTraceFileName(name);
  let done = false;
  return {
    record(rec) {
      if (done || rec.message.type !== "session_meta") return [];
      done = true;
      const id = rec.message.payload.session_id;
      if (!parsed) {
        if (!ctx.strictNames) return [];
        return [
          structure(
            ctx.file,
            rec.line,
            `file name: expected ${
              JSON.stringify(`${id}_NNN.jsonl`)
            } (the session_meta's session_id), found ${JSON.stringify(name)}`,
          ),
        ];
      }
      if (!ctx.strictNames && !parsed.sessionId.startsWith("session-")) return [];
      if (parsed.sessionId === id) return [];
      return [
        structure(
          ctx.file,
          rec.line,
          `session_meta.session_id: expected ${
            JSON.stringify(parsed.sessionId)
          } (from the file name), found ${JSON.stringify(id)}`,
        ),
      ];
    },
    end: () => [],
  };
}

/** Streaming fragments are never recorded. */
function noPartials(ctx: CheckContext): FileCheck {
  return {
    record(rec) {
      const m = rec.message;
      if (m.type !== "model_msg" || !isPartial(m.payload)) return [];
      return [
        structure(
          ctx.file,
          rec.line,
          `payload.type: expected a complete model message, found the streaming fragment ${
            JSON.stringify(m.payload.type)
          } (partials are never recorded)`,
        ),
      ];
    },
    end: () => [],
  };
}

/** Messages forwarded from a child session live in the child's own trace. */
function noOrigin(ctx: CheckContext): FileCheck {
  return {
    record(rec) {
      const origin = rec.message.origin;
      if (origin === undefined) return [];
      return [
        structure(
          ctx.file,
          rec.line,
          `origin: expected no origin (forwarded child messages belong to the child's trace), found ${
            preview(origin)
          }`,
        ),
      ];
    },
    end: () => [],
  };
}

function eventType(rec: TraceRecord): string | null {
  return rec.message.type === "event_msg" ? String(rec.message.payload.type) : null;
}

/**
 * request_begin and request_end come in pairs. A request left open is a
 * warning when the process evidently stopped mid-request — the file ends
 * there (and not in a torn line, which explains it already) or the session
 * was resumed after it (a new tool_list_ready) — and a problem otherwise.
 */
function requestPairing(ctx: CheckContext): FileCheck {
  let open = 0; // line of the open request_begin
  let resumed = false; // a tool_list_ready came after it
  const dangling = (line: number) =>
    warning(
      ctx.file,
      line,
      "request_begin has no request_end: the process stopped mid-request (resume drops the request and re-sends its input)",
    );
  return {
    record(rec) {
      const t = eventType(rec);
      if (t === "tool_list_ready" && open) resumed = true;
      if (t === "request_begin") {
        const prev = open;
        const wasResumed = resumed;
        open = rec.line;
        resumed = false;
        if (!prev) return [];
        if (wasResumed) return [dangling(prev)];
        return [
          structure(
            ctx.file,
            rec.line,
            `request_begin: the request opened at line ${prev} has no request_end before this one`,
          ),
        ];
      }
      if (t === "request_end") {
        if (open) {
          open = 0;
          return [];
        }
        return [structure(ctx.file, rec.line, "request_end without an open request_begin")];
      }
      return [];
    },
    end() {
      return open && !ctx.tornTail() ? [dangling(open)] : [];
    },
  };
}

/**
 * Every committed tool call (stop_reason completed, in a request that ended
 * completed) is answered by exactly one tool_call_output, written before the
 * next request begins. Outputs of calls that were never committed (a dropped
 * round) are not checked. An unanswered call is a warning when an abort, a
 * resume (a new tool_list_ready) or the end of the file follows it — the
 * process stopped while the tool ran, and resume supplies a placeholder
 * output — and a problem otherwise.
 */
function toolCallsAnswered(ctx: CheckContext): FileCheck {
  // Long because: one pass over the records; the rules below share the per-call maps (open request,
  // early, pending, answered), and each rule is a short closure.
  let inRequest = false;
  const requestCalls = new Map<string, number>(); // id -> line, in the open request
  const early = new Map<string, number>(); // outputs that came before their request ended
  const pending = new Map<string, number>(); // committed, not yet answered
  const answered = new Map<string, number>(); // id -> line of its output
  let interrupted = false; // abort or resume since the last commit
  const unanswered = (asWarning: boolean): CheckFinding[] => {
    const out: CheckFinding[] = [];
    for (const [id, line] of pending) {
      const what = `tool_call ${
        JSON.stringify(id)
      } was committed but never answered by a tool_call_output`;
      out.push(
        asWarning
          ? warning(
            ctx.file,
            line,
            `${what} (the process stopped while it ran; resume supplies a placeholder output)`,
          )
          : structure(ctx.file, line, what),
      );
    }
    pending.clear();
    return out;
  };
  const output = (id: string, line: number): CheckFinding[] => {
    const first = answered.get(id) ?? early.get(id);
    if (first !== undefined) {
      return [
        structure(
          ctx.file,
          line,
          `tool_call_output: a second output for tool_call_id ${
            JSON.stringify(id)
          } (the first is at line ${first})`,
        ),
      ];
    }
    if (pending.has(id)) {
      pending.delete(id);
      answered.set(id, line);
    } else if (requestCalls.has(id)) {
      early.set(id, line);
    }
    return [];
  };
  return {
    record(rec) {
      const m = rec.message;
      if (m.type === "model_msg") {
        const p = m.payload;
        if (p.type === "tool_call" && inRequest && p.stop_reason === "completed") {
          requestCalls.set(String(p.tool_call_id), rec.line);
        } else if (p.type === "tool_call_output") {
          return output(String(p.tool_call_id), rec.line);
        }
        return [];
      }
      const t = eventType(rec);
      if (t === "abort" || t === "tool_list_ready") interrupted = true;
      if (t === "request_begin") {
        const out = pending.size > 0 ? unanswered(interrupted) : [];
        inRequest = true;
        requestCalls.clear();
        early.clear();
        return out;
      }
      if (t === "request_end" && inRequest) {
        inRequest = false;
        if (m.type === "event_msg" && m.payload.status === "completed") {
          interrupted = false;
          for (const [id, line] of requestCalls) {
            const out = early.get(id);
            if (out !== undefined) answered.set(id, out);
            else pending.set(id, line);
          }
        }
        requestCalls.clear();
        early.clear();
      }
      return [];
    },
    end: () => unanswered(true),
  };
}

/** Every per-file rule, in reporting order. */
export const FILE_CHECKS: ReadonlyArray<(ctx: CheckContext) => FileCheck> = [
  sessionMetaFirst,
  nameMatchesSession,
  noPartials,
  noOrigin,
  requestPairing,
  toolCallsAnswered,
];
