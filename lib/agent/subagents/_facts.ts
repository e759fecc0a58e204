// What the traces say about a session's background work, for the restore
// after a restart: the facts of a parent trace (tool calls and outputs,
// `subagent` pointers, delivered `[background_task_done]` notices) and the
// progress of a child trace (how its last task ended, or that it was cut
// off). Pure functions over records; the I/O is in restore.ts. Typed fields
// (`penguin_subagent`, `penguin_process`, `penguin_notice`) are read first;
// a record without them is read from its wording (trace/legacy_text_facts.ts).
import { parseJsonBounded } from "../../protocol/bounded_json.ts";
import type {
  BackgroundNoticeFacts,
  OmniMessage,
  ToolProcessFacts,
  ToolSubagentFacts,
} from "../../protocol/types.ts";
import { legacyNoticeFacts } from "../../trace/legacy_text_facts.ts";

/** A tool call of the parent with its output, if one was recorded. */
export interface CallFact {
  /** Tool name. */
  name: string;
  /** Parsed arguments (empty when they were not a JSON object). */
  args: Record<string, unknown>;
  /**
   * The recorded output, with its `penguin_process` and `penguin_subagent`
   * facts when it has them (penguin ≥ 0.1 traces).
   */
  output?: {
    text: string;
    status: string;
    ts: number;
    process?: ToolProcessFacts;
    subagent?: ToolSubagentFacts;
  };
}

/** A `[background_task_done]` notice delivered to the parent. */
export interface NoticeFact {
  /** `command` or `subagent`. */
  kind: string;
  /** The task id. */
  id: string;
  /** When it was recorded (ms). */
  ts: number;
}

/** Everything restore needs from the parent's trace files. */
export interface ParentFacts {
  /** Calls of the subagent and command tools by id, in call order. */
  calls: Map<string, CallFact>;
  /** Child session ids named by `subagent` pointers, in order. */
  pointers: string[];
  /** Delivered notices. */
  notices: NoticeFact[];
}

function time(m: OmniMessage): number {
  const t = Date.parse(m.timestamp);
  return Number.isFinite(t) ? t : 0;
}

function parseArgs(raw: unknown): Record<string, unknown> {
  if (typeof raw !== "string") return {};
  try {
    const v = parseJsonBounded(raw, "a tool call's arguments");
    return v !== null && typeof v === "object" && !Array.isArray(v)
      ? v as Record<string, unknown>
      : {};
  } catch {
    return {};
  }
}

const PROCESS_STATES: readonly string[] = ["running", "exited", "killed"];

/** A `penguin_process` field, or undefined when it is absent or not well formed. */
function processFactsOf(v: unknown): ToolProcessFacts | undefined {
  if (v === null || typeof v !== "object") return undefined;
  const f = v as Record<string, unknown>;
  if (typeof f.id !== "string" || !PROCESS_STATES.includes(String(f.state))) return undefined;
  const code = typeof f.exit_code === "number" ? f.exit_code : null;
  return { id: f.id, state: f.state as ToolProcessFacts["state"], exit_code: code };
}

const SUBAGENT_KINDS: readonly string[] = ["foreground", "background"];
const SUBAGENT_STATES: readonly string[] = ["running", "idle", "ended"];

/** A `penguin_subagent` field, or undefined when it is absent or not well formed. */
function subagentFactsOf(v: unknown): ToolSubagentFacts | undefined {
  if (v === null || typeof v !== "object") return undefined;
  const f = v as Record<string, unknown>;
  if (
    typeof f.id !== "string" || typeof f.session_id !== "string" ||
    typeof f.parent_tool_call_id !== "string" || !SUBAGENT_KINDS.includes(String(f.kind)) ||
    !SUBAGENT_STATES.includes(String(f.state))
  ) return undefined;
  return {
    id: f.id,
    session_id: f.session_id,
    kind: f.kind as ToolSubagentFacts["kind"],
    state: f.state as ToolSubagentFacts["state"],
    parent_tool_call_id: f.parent_tool_call_id,
  };
}

/** A `penguin_notice` field, or undefined when it is absent or not well formed. */
function noticeFactsOf(v: unknown): BackgroundNoticeFacts | undefined {
  if (v === null || typeof v !== "object") return undefined;
  const f = v as Record<string, unknown>;
  if (f.kind !== "command" && f.kind !== "subagent") return undefined;
  if (typeof f.id !== "string" || (f.status !== "completed" && f.status !== "failed")) {
    return undefined;
  }
  return { kind: f.kind, id: f.id, status: f.status };
}

/**
 * The kind and id of the task a harness text reports: its `penguin_notice`
 * field, else (a trace without it) its `[background_task_done]` block; null
 * for any other text.
 */
export function noticeOf(payload: Record<string, unknown>): { kind: string; id: string } | null {
  const typed = noticeFactsOf(payload.penguin_notice);
  if (typed) return { kind: typed.kind, id: typed.id };
  return typeof payload.text === "string" ? legacyNoticeFacts(payload.text) : null;
}

/** Tools whose calls restore looks at (others are only counted as calls). */
const WATCHED = new Set([
  "run_subagent",
  "input_subagent",
  "kill_subagent",
  "exec_command",
  "input_command",
  "kill_command",
]);

/** Collects {@linkcode ParentFacts} one record at a time (a parent's files, in order). */
export interface FactsCollector {
  /** Take one record. */
  push(m: OmniMessage): void;
  /** The facts so far. */
  readonly facts: ParentFacts;
}

/** A collector of parent facts; keeps only what restore needs (the watched tools' calls). */
export function factsCollector(): FactsCollector {
  const facts: ParentFacts = { calls: new Map(), pointers: [], notices: [] };
  // Looked up in a set: a list searched once a pointer made a resume of 300,000 pointers
  // quadratic (no request in 170 s; attack round 25 bounded C14).
  const seen = new Set<string>();
  return {
    facts,
    push(m) {
      if (m.origin !== undefined) return;
      const p = m.payload as { type: string; [k: string]: unknown };
      if (m.type === "event_msg" && p.type === "subagent" && typeof p.session_id === "string") {
        if (!seen.has(p.session_id)) {
          seen.add(p.session_id);
          facts.pointers.push(p.session_id);
        }
      } else if (
        m.type === "model_msg" && p.type === "tool_call" && p.stop_reason === "completed" &&
        WATCHED.has(String(p.name))
      ) {
        facts.calls.set(String(p.tool_call_id), {
          name: String(p.name),
          args: parseArgs(p.arguments),
        });
      } else if (m.type === "model_msg" && p.type === "tool_call_output") {
        const call = facts.calls.get(String(p.tool_call_id));
        if (call && !call.output) {
          const process = processFactsOf(p.penguin_process);
          const subagent = subagentFactsOf(p.penguin_subagent);
          call.output = {
            text: String(p.output),
            status: String(p.stop_reason),
            ts: time(m),
            ...(process ? { process } : {}),
            ...(subagent ? { subagent } : {}),
          };
        }
      } else if (
        m.type === "model_msg" && p.type === "text" && p.role === "user" &&
        p.sender === "harness" && typeof p.text === "string"
      ) {
        const block = noticeOf(p);
        if (block) facts.notices.push({ ...block, ts: time(m) });
      }
    },
  };
}

/** The facts of a parent's records (all its trace files, in order). */
export function parentFacts(records: Iterable<OmniMessage>): ParentFacts {
  const c = factsCollector();
  for (const m of records) c.push(m);
  return c.facts;
}

/** How far a child got, from its own trace. */
export interface ChildProgress {
  /** The `session_meta.parent` link, when recorded. */
  parent?: { session_id?: string; tool_call_id?: string };
  /** True when the last task was cut off (the process died mid-task). */
  interrupted: boolean;
  /** The last task's prompt (its first user text), if any. */
  label: string;
  /** Assistant text of the last task. */
  text: string;
  /** The reason, when the last task ended with an abort. */
  aborted?: string;
  /** When the last task ended (or the last record, for an interrupted one), in ms. */
  ts: number;
  /** Whether any task was started. */
  started: boolean;
}

/** Collects {@linkcode ChildProgress} one record at a time (a child's files, in order). */
export interface ProgressCollector {
  /** Take one record. */
  push(m: OmniMessage): void;
  /** The progress after the last record. */
  finish(): ChildProgress;
}

/**
 * A collector of a child's progress. A task starts with a user text while
 * no task is open; it ends with a completed request that made no tool call
 * (outside compaction), an abort, or the max-turns notice. Open at the end
 * of the trace = cut off.
 */
export function progressCollector(): ProgressCollector {
  const out: ChildProgress = { interrupted: false, label: "", text: "", ts: 0, started: false };
  let open = false;
  let inCompaction = false;
  let inRequest = false;
  let calls = 0;
  let last = 0;
  return {
    push(m) {
      if (m.origin !== undefined) return;
      last = time(m);
      if (m.type === "session_meta") {
        const parent = (m.payload as { parent?: unknown }).parent;
        if (parent && typeof parent === "object") {
          out.parent = parent as NonNullable<ChildProgress["parent"]>;
        }
        return;
      }
      const p = m.payload as { type: string; [k: string]: unknown };
      if (m.type === "event_msg") {
        if (p.type === "compaction_begin") inCompaction = true;
        else if (p.type === "compaction_end") inCompaction = false;
        else if (p.type === "request_begin") {
          inRequest = true;
          calls = 0;
        } else if (p.type === "request_end") {
          inRequest = false;
          if (open && !inCompaction && p.status === "completed" && calls === 0) {
            open = false;
            out.ts = time(m);
          }
        } else if (p.type === "abort" && open) {
          open = false;
          out.aborted = typeof p.reason === "string" && p.reason !== "" ? p.reason : "aborted";
          out.ts = time(m);
        }
        return;
      }
      if (p.type === "text" && p.role === "user" && !inCompaction && !open) {
        open = true;
        out.started = true;
        out.label = String(p.text);
        out.text = "";
        delete out.aborted;
      } else if (p.type === "text" && p.role === "assistant" && !inCompaction) {
        if (inRequest) out.text += String(p.text);
        else if (open && p.stop_reason === "failed") {
          // The max-turns notice ends the task outside a request.
          out.text += String(p.text);
          open = false;
          out.ts = time(m);
        }
      } else if (p.type === "tool_call" && inRequest && p.stop_reason === "completed") calls++;
    },
    finish() {
      const result = { ...out };
      if (open || !out.started) {
        result.interrupted = true;
        result.ts = last;
      }
      return result;
    },
  };
}

/** The progress of a child from its records (all its trace files, in order). */
export function childProgress(records: Iterable<OmniMessage>): ChildProgress {
  const c = progressCollector();
  for (const m of records) c.push(m);
  return c.finish();
}

/**
 * Keeps, from a stream of records, only those {@linkcode factsCollector}
 * uses (pointers, watched calls and their outputs, harness notices), so a
 * file read once for the resume replay need not be read again for restore.
 */
export function factsFilter(): { push(m: OmniMessage): void; readonly kept: OmniMessage[] } {
  const kept: OmniMessage[] = [];
  const watchedCalls = new Set<string>();
  return {
    kept,
    push(m) {
      if (m.origin !== undefined) return;
      const p = m.payload as { type: string; [k: string]: unknown };
      if (m.type === "event_msg") {
        if (p.type === "subagent") kept.push(m);
      } else if (m.type === "model_msg") {
        if (p.type === "tool_call" && WATCHED.has(String(p.name))) {
          watchedCalls.add(String(p.tool_call_id));
          kept.push(m);
        } else if (p.type === "tool_call_output" && watchedCalls.has(String(p.tool_call_id))) {
          kept.push(m);
        } else if (p.type === "text" && p.role === "user" && p.sender === "harness") {
          kept.push(m);
        }
      }
    },
  };
}
