// Shared helpers of the inspect tests: a trace builder with controlled
// timestamps and a data-root layout in a temp dir.
import { join } from "node:path";
import {
  assistantText,
  eventMsg,
  modelMsg,
  sessionMetaMsg,
  toolCall,
  toolCallOutput,
  userText,
} from "../../lib/protocol/mod.ts";
import type { EventPayload, OmniMessage, SessionMeta, StopReason } from "../../lib/protocol/mod.ts";

import { testMeta, toJsonl } from "../support/trace_records.ts";

export { withTempDir } from "../trace/_support.ts";

export {
  PENGUIN_TRACES as FIXTURES,
  penguinTraceFiles as fixtureFiles,
  penguinTracesPresent as fixturesPresent,
} from "../support/penguin_traces.ts";

/** Options of {@linkcode traceBuilder}. */
export interface BuilderOptions {
  provider?: string;
  modelId?: string;
  /** Start time (ms); default 2026-03-04T10:00:00Z. */
  start?: number;
  /** Agent id used in the meta's agent_state path. */
  agent?: string;
  /** Extra meta fields (e.g. lineage, source). */
  meta?: Partial<SessionMeta>;
}

/** A trace under construction; every method appends records and returns the builder. */
export interface TraceBuilder {
  /** The records so far. */
  records: OmniMessage[];
  /** The time of the last record (ms). */
  now(): number;
  meta(step?: number): TraceBuilder;
  tools(names?: string[]): TraceBuilder;
  user(text: string): TraceBuilder;
  begin(step?: number): TraceBuilder;
  usage(cr: number, cw: number, out: number): TraceBuilder;
  end(status?: StopReason, extra?: Record<string, unknown>, step?: number): TraceBuilder;
  text(text: string): TraceBuilder;
  thinking(text: string): TraceBuilder;
  call(name: string, args: Record<string, unknown>, id: string): TraceBuilder;
  approve(id: string, decision?: "allow" | "deny" | "forbidden"): TraceBuilder;
  output(id: string, text: string, stop?: StopReason): TraceBuilder;
  abort(reason: string): TraceBuilder;
  subagent(childId: string): TraceBuilder;
  compaction(): TraceBuilder;
  jsonl(): string;
}

/** Builds a trace record by record; every record is `step` ms after the previous one. */
export function traceBuilder(sessionId: string, opts: BuilderOptions = {}): TraceBuilder {
  let t = opts.start ?? Date.UTC(2026, 2, 4, 10, 0, 0);
  const records: OmniMessage[] = [];
  const session = { cache_read: 0, cache_write: 0, output: 0, total: 0 };
  const push = (m: OmniMessage, step = 100) => {
    t += step;
    m.timestamp = new Date(t).toISOString();
    records.push(m);
  };
  const ev = (p: EventPayload, step?: number) => push(eventMsg(p), step);
  const b: TraceBuilder = {
    records,
    /** The time of the last record (ms). */
    now: () => t,
    meta(step = 0) {
      push(
        sessionMetaMsg(testMeta(sessionId, {
          provider: opts.provider ?? "custom",
          model_id: opts.modelId ?? "mock",
          system_prompt: "You are a test agent.",
          agent_state: `/data/default_project/agents/${opts.agent ?? "default_agent"}/agent_state`,
          workspace: "/tmp/ws",
          ...opts.meta,
        })),
        step,
      );
      return b;
    },
    tools(names = ["exec_command", "read_file"]) {
      ev({ type: "tool_list_ready", tools: names.map((name) => ({ name, description: name })) });
      return b;
    },
    user(text: string) {
      push(modelMsg(userText(text)));
      return b;
    },
    begin(step?: number) {
      ev({ type: "request_begin" }, step);
      return b;
    },
    /** token_usage for one completed request (cache_read, cache_write, output). */
    usage(cr: number, cw: number, out: number) {
      const request = { cache_read: cr, cache_write: cw, output: out, total: cr + cw + out };
      session.cache_read += cr;
      session.cache_write += cw;
      session.output += out;
      session.total += request.total;
      ev({ type: "token_usage", session: { ...session }, request });
      return b;
    },
    end(status: StopReason = "completed", extra: Record<string, unknown> = {}, step?: number) {
      ev({ type: "request_end", status, ...extra }, step);
      return b;
    },
    text(text: string) {
      push(modelMsg(assistantText(text)));
      return b;
    },
    thinking(text: string) {
      push(
        modelMsg({ type: "thinking", role: "assistant", thinking: text, stop_reason: "completed" }),
      );
      return b;
    },
    call(name: string, args: Record<string, unknown>, id: string) {
      push(modelMsg(toolCall(name, JSON.stringify(args), id)));
      return b;
    },
    approve(id: string, decision: "allow" | "deny" | "forbidden" = "allow") {
      ev({ type: "approval_decision", decision, tool_call_id: id });
      return b;
    },
    output(id: string, text: string, stop: StopReason = "completed") {
      push(modelMsg(toolCallOutput(id, text, stop)));
      return b;
    },
    abort(reason: string) {
      ev({ type: "abort", reason });
      return b;
    },
    subagent(childId: string) {
      ev({ type: "subagent", session_id: childId });
      return b;
    },
    compaction() {
      ev({ type: "compaction_begin", reason: "turns", mode: "summarize", context: 10, turns: 3 });
      b.user("summarize please").begin().text("[summary]state[/summary]").usage(0, 10, 5).end();
      ev({ type: "compaction_end", reason: "turns", mode: "summarize", status: "completed" });
      return b;
    },
    jsonl(): string {
      return toJsonl(records);
    },
  };
  return b;
}

/** `<root>/<project>/agents/<agent>/traces/<day>`, created. */
export async function tracesDay(
  root: string,
  day = "2026-03-04",
  agent = "default_agent",
  project = "default_project",
): Promise<string> {
  const dir = join(root, project, "agents", agent, "traces", day);
  await Deno.mkdir(dir, { recursive: true });
  return dir;
}

/** A session id with the given 8-hex suffix. */
export function sid(suffix: string): string {
  return `session-2026-03-04-10-00-00-${suffix}`;
}
