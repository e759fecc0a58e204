// Shared helpers of the session tests: deterministic record builders, temp
// data roots, fixture paths and a way to lay traces out on disk.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type {
  CompactionMode,
  CompactionReason,
  CompleteMessage,
  EventPayload,
  OmniMessage,
  PhaseStatus,
  Sender,
  SessionMeta,
  StopReason,
} from "../../lib/protocol/mod.ts";
import { readTraceFile } from "../../lib/trace/mod.ts";
import { testMeta, toJsonl } from "../support/trace_records.ts";

export { withRoot } from "../support/roots.ts";

/** The default project and agent of `root`: the scope the session functions take. */
export const scope = (root: string): { root: string; projectId: string; agentId: string } => ({
  root,
  projectId: "default_project",
  agentId: "default_agent",
});

/** The PenguinHarness sample traces. */
export const FIXTURES = "/work/shared/fixtures/penguin-traces";

/** Path of one fixture file. */
export function fixture(name: string): string {
  return join(FIXTURES, name);
}

/** Repository root. */
export const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** Read the records of a trace file (tolerant). */
export async function records(path: string): Promise<OmniMessage[]> {
  return (await readTraceFile(path)).messages;
}

/** One step of {@linkcode Script.steps}: a notation string or a record builder. */
export type ScriptStep = string | ((s: Script) => OmniMessage);

/** Builds records with strictly increasing, deterministic timestamps. */
export class Script {
  #t = Date.UTC(2026, 0, 2, 3, 4, 5);
  #next(): string {
    this.#t += 1000;
    return new Date(this.#t).toISOString();
  }
  /** A session_meta envelope. */
  meta(id: string, extra: Partial<SessionMeta> = {}): OmniMessage {
    return {
      timestamp: this.#next(),
      type: "session_meta",
      payload: testMeta(id, extra),
    };
  }
  /** Any complete model message. */
  model(payload: CompleteMessage, origin?: string[]): OmniMessage {
    const m: OmniMessage = { timestamp: this.#next(), type: "model_msg", payload };
    if (origin) m.origin = origin;
    return m;
  }
  /** Any event. */
  event(payload: EventPayload): OmniMessage {
    return { timestamp: this.#next(), type: "event_msg", payload };
  }
  /** A user text (a human prompt unless `sender`). */
  user(text: string, sender?: Sender): OmniMessage {
    const p: CompleteMessage = { type: "text", role: "user", text, stop_reason: "completed" };
    if (sender) p.sender = sender;
    return this.model(p);
  }
  /** An assistant text. */
  say(text: string, stop: StopReason = "completed"): OmniMessage {
    return this.model({ type: "text", role: "assistant", text, stop_reason: stop });
  }
  /** An assistant thinking block. */
  think(thinking: string): OmniMessage {
    return this.model({ type: "thinking", role: "assistant", thinking, stop_reason: "completed" });
  }
  /** A tool call. */
  call(id: string, stop: StopReason = "completed", name = "exec_command"): OmniMessage {
    return this.model({
      type: "tool_call",
      role: "assistant",
      name,
      arguments: JSON.stringify({ cmd: `echo ${id}` }),
      tool_call_id: id,
      stop_reason: stop,
    });
  }
  /** A tool output. */
  out(id: string, output = `out of ${id}`, stop: StopReason = "completed"): OmniMessage {
    return this.model({
      type: "tool_call_output",
      role: "user",
      output,
      tool_call_id: id,
      stop_reason: stop,
    });
  }
  /** A prompt ("go") whose reply runs a subagent by tool call `callId`; the request ended. */
  spawn(callId = "c1"): OmniMessage[] {
    return [
      this.user("go"),
      this.begin(),
      this.call(callId, "completed", "run_subagent"),
      this.end(),
    ];
  }
  /** request_begin. */
  begin(): OmniMessage {
    return this.event({ type: "request_begin" });
  }
  /** request_end. */
  end(status: StopReason = "completed"): OmniMessage {
    return this.event({ type: "request_end", status });
  }
  /** token_usage with the given session and request totals. */
  usage(session: number, request: number): OmniMessage {
    return this.event({
      type: "token_usage",
      session: { cache_read: 0, cache_write: session - 10, output: 10, total: session },
      request: { cache_read: 0, cache_write: request - 10, output: 10, total: request },
    });
  }
  /** compaction_begin. */
  compactBegin(
    mode: CompactionMode = "summarize",
    reason: CompactionReason = "turns",
  ): OmniMessage {
    return this.event({ type: "compaction_begin", reason, mode, context: 100, turns: 4 });
  }
  /** compaction_end. */
  compactEnd(
    status: PhaseStatus = "completed",
    mode: CompactionMode = "summarize",
    reason: CompactionReason = "turns",
  ): OmniMessage {
    return this.event({ type: "compaction_end", reason, mode, status, attempt: 1 });
  }
  /** abort. */
  abort(reason = "aborted by user"): OmniMessage {
    return this.event({ type: "abort", reason });
  }
  /** subagent pointer. */
  subagent(childId: string): OmniMessage {
    return this.event({ type: "subagent", session_id: childId });
  }
  /** tool_list_ready with one tool. */
  tools(): OmniMessage {
    return this.event({
      type: "tool_list_ready",
      tools: [{ name: "exec_command", description: "run a command" }],
    });
  }
  /**
   * Write `records` as file `index` of session `id` in `traces`, in the date
   * directory `dateDir` ({@linkcode putTrace}); returns the path.
   */
  put(
    traces: string,
    id: string,
    records: OmniMessage[],
    index = 1,
    dateDir = "2026-01-02",
  ): Promise<string> {
    return putTrace(traces, dateDir, id, index, toJsonl(records));
  }
  /**
   * Records from a compact step list, in the notation the replay tests read
   * their results in: `user:TEXT`, `say:TEXT`, `think:TEXT`, `call:ID`,
   * `out:ID`, `begin`, `end` or `end:STATUS`, `usage:SESSION/REQUEST`,
   * `compact` (a summarize compaction_begin), `compact-end:STATUS`, `tools`;
   * a function step builds its record from this script, in turn.
   */
  steps(...steps: ScriptStep[]): OmniMessage[] {
    return steps.map((step) => typeof step === "string" ? this.#step(step) : step(this));
  }
  #step(step: string): OmniMessage {
    const at = step.indexOf(":");
    const [verb, arg] = at < 0 ? [step, ""] : [step.slice(0, at), step.slice(at + 1)];
    switch (verb) {
      case "user":
        return this.user(arg);
      case "say":
        return this.say(arg);
      case "think":
        return this.think(arg);
      case "call":
        return this.call(arg);
      case "out":
        return this.out(arg);
      case "begin":
        return this.begin();
      case "end":
        return this.end((arg || "completed") as StopReason);
      case "usage": {
        const [session, request] = arg.split("/").map(Number);
        return this.usage(session!, request!);
      }
      case "compact":
        return this.compactBegin();
      case "compact-end":
        return this.compactEnd(arg as PhaseStatus);
      case "tools":
        return this.tools();
    }
    throw new Error(`unknown script step: ${step}`);
  }
}

/** Serialise records the way the trace writer does. */
export const jsonl = toJsonl;

/** The traces dir of the default agent of the default project under `root`. */
export function tracesOf(
  root: string,
  agent = "default_agent",
  project = "default_project",
): string {
  return join(root, project, "agents", agent, "traces");
}

/** Write `text` as `<traces>/<dateDir>/<id>_<NNN>.jsonl`; returns the path. */
export async function putTrace(
  traces: string,
  dateDir: string,
  id: string,
  index: number,
  text: string,
): Promise<string> {
  const dir = join(traces, dateDir);
  await Deno.mkdir(dir, { recursive: true });
  const path = join(dir, `${id}_${String(index).padStart(3, "0")}.jsonl`);
  await Deno.writeTextFile(path, text);
  return path;
}

/** A session id with the given 8-hex suffix and second. */
export function sid(hex: string, second = 5, day = 2): string {
  return `session-2026-01-${String(day).padStart(2, "0")}-03-04-${
    String(second).padStart(2, "0")
  }-${hex}`;
}

/** SHA-256 of a file, hex. */
export async function digest(path: string): Promise<string> {
  const data = await Deno.readFile(path);
  const h = await crypto.subtle.digest("SHA-256", data);
  return Array.from(new Uint8Array(h), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Digests of every file under `dir`, keyed by relative path. */
export async function treeDigest(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (d: string, rel: string) => {
    for await (const e of Deno.readDir(d)) {
      const p = join(d, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory) await walk(p, r);
      else if (e.isFile) out[r] = await digest(p);
    }
  };
  await walk(dir, "");
  return out;
}
