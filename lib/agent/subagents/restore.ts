/**
 * Restoring a session's background work after a restart: what the previous
 * process knew only in memory is derived again from the traces, so nothing
 * silently vanishes when a parent is resumed.
 *
 * From the parent's trace files: each `subagent` pointer names a child
 * session; the spawning call's `penguin_subagent.session_id`, else the
 * child's `session_meta.parent.tool_call_id` (or, for older traces, the
 * order of the run_subagent calls) finds the spawning call. A child is
 * registered again unless its spawning call returned its answer (a
 * foreground child that finished) or a kill_subagent removed it; its id is
 * the one the spawning call's `penguin_subagent` (in a trace without it:
 * its output's wording) named, else `subagent-<last 8>`.
 * From the child's own trace: whether its last task ended (and with what
 * text or abort), or was cut off by the process dying.
 *
 * Then, for each registered child:
 * - cut off → registered as `interrupted` (input_subagent resumes it from
 *   its trace) and, unless a notice already told the parent, reported as
 *   `failed` with an `interrupted: …` detail and the text it had produced;
 * - finished → registered `idle` (a follow-up prompt resumes its session)
 *   and, unless the parent already saw the result (a notice, or an
 *   input_subagent/kill_subagent output naming it, after the child's end),
 *   reported with its answer.
 *
 * Background command sessions (an exec_command output whose
 * `penguin_process` is `running`; in a trace without those fields, such as
 * PenguinHarness's, one whose note names a `proc-<8hex>` as running) that
 * never ended in the trace (no notice, no input_command that saw it end, no
 * kill_command) died with the process: each is reported as lost, with the
 * last output the trace captured of it.
 *
 * Reports are `[background_task_done]` notices (sender `harness`) queued in
 * the registry; they ride the parent's next run.
 *
 * @module
 */
import type { OmniMessage } from "../../protocol/types.ts";
import { defaultWarn, errorMessage } from "../../protocol/errors.ts";
import type { ThinkingLevel } from "../../models/wire.ts";
import type { TraceFileRef } from "../../trace/paths.ts";
import { sessionFilesIn } from "../../trace/layout.ts";
import { readTrace } from "../../trace/reader.ts";
import {
  legacyRunningProcessId,
  legacySpawnedSubagentId,
  legacySpawnFailed,
  legacyStillRunning,
} from "../../trace/legacy_text_facts.ts";
import { type BackgroundNotice, formatBackgroundNotice } from "../../tools/background_notice.ts";
import {
  type CallFact,
  type ChildProgress,
  factsCollector,
  type ParentFacts,
  progressCollector,
} from "./_facts.ts";
import type { ChildState } from "./_child.ts";
import type { ChildRegistry } from "./registry.ts";

/** A child to register again. */
export interface RestoredChild {
  /** `subagent-<8>`. */
  id: string;
  /** Its session id. */
  sessionId: string;
  /** The agent it runs as. */
  agentId: string;
  /** `interrupted` (cut off) or `idle` (its last task ended). */
  state: Extract<ChildState, "idle" | "interrupted">;
  /** Started with run_in_background. */
  background: boolean;
  /** Its last prompt. */
  label: string;
  /** The thinking level its spawning call asked for. */
  thinkingLevel?: ThinkingLevel;
}

/** What a restore does. */
export interface RestorePlan {
  /** Children to register (no live session until resumed). */
  children: RestoredChild[];
  /** Reports to queue, in order. */
  notices: BackgroundNotice[];
}

/** A child as restore sees it: where it runs and how far its trace got. */
export interface ChildFacts extends ChildProgress {
  /** The agent whose traces hold it. */
  agentId: string;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
}

/** The detail of a report about a child the restart cut off. */
export function interruptedDetail(id: string): string {
  return `interrupted: penguin exited while it was working; its session is saved in its trace — input_subagent with subagent_id ${id} resumes it`;
}

/** The detail of a report about a background command the restart lost. */
export const LOST_COMMAND_DETAIL =
  "lost: penguin exited while it was running, and it did not survive; the output below is the last the trace captured";

/** The spawning run_subagent call of each child, by child session id. */
function spawnCalls(
  facts: ParentFacts,
  children: ReadonlyMap<string, ChildFacts>,
): Map<string, [string, CallFact]> {
  const out = new Map<string, [string, CallFact]>();
  const runs = [...facts.calls].filter(([, c]) => c.name === "run_subagent");
  const used = new Set<string>();
  const bySession = new Map<string, string>(); // child session id → the call whose facts name it
  for (const [id, c] of runs) {
    const sid = c.output?.subagent?.session_id;
    if (sid !== undefined && !bySession.has(sid)) bySession.set(sid, id);
  }
  for (const sid of facts.pointers) {
    const link = bySession.get(sid) ?? children.get(sid)?.parent?.tool_call_id;
    const call = link !== undefined ? facts.calls.get(link) : undefined;
    if (link !== undefined && call?.name === "run_subagent") {
      out.set(sid, [link, call]);
      used.add(link);
    }
  }
  // Older traces carry no parent link: pair the rest in order.
  const rest = runs.filter(([id, c]) =>
    !used.has(id) && !c.output?.subagent && !(c.output && legacySpawnFailed(c.output.text))
  );
  for (const sid of facts.pointers) {
    if (out.has(sid)) continue;
    const next = rest.shift();
    if (next) out.set(sid, next);
  }
  return out;
}

/** Work out what to register and report (pure; see the module doc). */
export function planRestore(
  facts: ParentFacts,
  children: ReadonlyMap<string, ChildFacts>,
): RestorePlan {
  const plan: RestorePlan = { children: [], notices: [] };
  const spawns = spawnCalls(facts, children);
  const killed = new Set<string>();
  const touched = new Map<string, number>(); // subagent id → last output of a call naming it
  for (const c of facts.calls.values()) {
    const id = str(c.args.subagent_id);
    if (!id) continue;
    if (c.name === "kill_subagent") killed.add(id);
    if ((c.name === "input_subagent" || c.name === "kill_subagent") && c.output) {
      touched.set(id, Math.max(touched.get(id) ?? 0, c.output.ts));
    }
  }
  const noticed = (kind: string, id: string, after: number) =>
    facts.notices.some((n) => n.kind === kind && n.id === id && n.ts >= after);
  const taken = new Set<string>();

  for (const sid of facts.pointers) {
    const child = children.get(sid);
    const spawn = spawns.get(sid)?.[1];
    // A child linked to a call that is none of penguin's subagent tools was
    // spawned by another harness (an imported session): its answer is history.
    const link = child?.parent?.tool_call_id;
    if (link !== undefined && !spawn && !facts.calls.has(link)) continue;
    const named = spawnedId(spawn);
    if (spawn?.output && !named) continue; // answered in the foreground (or stopped with its call)
    let id = named ?? `subagent-${sid.slice(-8)}`;
    if (taken.has(id)) id = `subagent-${sid.slice(-8)}`;
    if (killed.has(id) || taken.has(id) || !child) continue;
    taken.add(id);
    const level = str(spawn?.args.thinking_level);
    const restored: RestoredChild = {
      id,
      sessionId: sid,
      agentId: child.agentId,
      state: child.interrupted ? "interrupted" : "idle",
      background: spawn?.output?.subagent
        ? spawn.output.subagent.kind === "background"
        : spawn?.args.run_in_background === true || spawn?.args.run_in_background === "true",
      label: child.label || str(spawn?.args.prompt) || "",
      ...(level ? { thinkingLevel: level as ThinkingLevel } : {}),
    };
    plan.children.push(restored);
    const seen = noticed("subagent", id, child.ts) || (touched.get(id) ?? -1) >= child.ts;
    if (seen) continue;
    if (child.interrupted) {
      plan.notices.push(formatBackgroundNotice({
        kind: "subagent",
        id,
        status: "failed",
        detail: interruptedDetail(id),
        command: restored.label,
        output: child.text,
      }));
    } else {
      plan.notices.push(formatBackgroundNotice({
        kind: "subagent",
        id,
        status: child.aborted !== undefined ? "failed" : "completed",
        ...(child.aborted !== undefined
          ? { detail: `aborted: ${child.aborted}` }
          : child.text === ""
          ? { detail: "finished without a text answer" }
          : {}),
        command: restored.label,
        output: child.text,
      }));
    }
  }

  plan.notices.push(...lostCommands(facts));
  return plan;
}

/**
 * The id under which a spawning call left its child registered: from its
 * output's `penguin_subagent` facts, else (a trace without them) from the
 * output's wording; undefined when the call answered for the child.
 */
function spawnedId(spawn: CallFact | undefined): string | undefined {
  const facts = spawn?.output?.subagent;
  if (facts) return facts.state === "ended" ? undefined : facts.id;
  return spawn?.output ? legacySpawnedSubagentId(spawn.output.text) : undefined;
}

/** Reports of the background commands the trace registered and never saw end (see the module doc). */
function lostCommands(facts: ParentFacts): BackgroundNotice[] {
  const notices: BackgroundNotice[] = [];
  const ended = new Set<string>();
  const lastOutput = new Map<string, string>();
  const procs: Array<{ id: string; cmd: string }> = [];
  for (const c of facts.calls.values()) {
    if (c.name === "exec_command" && c.output) {
      const id = runningProcess(c.output);
      if (!id) continue;
      procs.push({ id, cmd: str(c.args.cmd) ?? "" });
      lastOutput.set(id, withoutNotes(c.output.text));
    } else if ((c.name === "input_command" || c.name === "kill_command") && c.output) {
      const id = str(c.args.process_id);
      if (!id) continue;
      if (c.name === "kill_command" || !stillRunning(id, c.output)) ended.add(id);
      lastOutput.set(id, withoutNotes(c.output.text));
    }
  }
  for (const n of facts.notices) if (n.kind === "command") ended.add(n.id);
  for (const p of procs) {
    if (ended.has(p.id)) continue;
    ended.add(p.id);
    notices.push(formatBackgroundNotice({
      kind: "command",
      id: p.id,
      status: "failed",
      detail: LOST_COMMAND_DETAIL,
      command: p.cmd,
      output: lastOutput.get(p.id) ?? "",
    }));
  }
  return notices;
}

type Output = NonNullable<CallFact["output"]>;

/**
 * The process an exec_command output left running, if any: from its
 * `penguin_process` facts, else (a trace without them, e.g. PenguinHarness's)
 * from the wording of its note.
 */
function runningProcess(out: Output): string | undefined {
  if (out.process) return out.process.state === "running" ? out.process.id : undefined;
  return legacyRunningProcessId(out.text);
}

/** Whether the process `id` still ran after this input_command output (same fallback). */
function stillRunning(id: string, out: Output): boolean {
  if (out.process?.id === id) return out.process.state === "running";
  return legacyStillRunning(id, out.text) || out.status === "aborted";
}

/** A tool output without its trailing `[…]` note lines (or `[no output]`). */
function withoutNotes(text: string): string {
  const lines = text.split("\n");
  while (lines.length > 0 && /^\[[^\]]*\]$|^\[process .*\]$/.test(lines.at(-1)!)) lines.pop();
  return lines.join("\n");
}

/** Where restore finds traces. */
export interface RestoreSource {
  /** The parent's trace files, in index order. */
  parentFiles: readonly string[];
  /** One of `parentFiles` already read: the records of it that restore needs (see `factsFilter`). */
  preread?: { path: string; messages: readonly OmniMessage[] };
  /** The parent's agent. */
  agentId: string;
  /** The traces directory of an agent of the project. */
  tracesDir(agentId: string): string;
  /** Diagnostics. */
  warn?: (line: string) => void;
}

/**
 * Derive the registry of a resumed parent from the traces (see the module
 * doc) and load it into `registry`: restored children (not live until
 * resumed) and the reports, queued as notices. Never throws; a child whose
 * trace cannot be read is reported through `warn` and skipped.
 */
export async function restoreChildren(
  registry: ChildRegistry,
  source: RestoreSource,
): Promise<RestorePlan> {
  const warn = source.warn ?? defaultWarn;
  const collector = factsCollector();
  try {
    for (const path of source.parentFiles) {
      if (source.preread?.path === path) {
        for (const m of source.preread.messages) collector.push(m);
        continue;
      }
      for await (const rec of readTrace(path, { validate: false, onProblem: () => {} })) {
        collector.push(rec.message);
      }
    }
  } catch (err) {
    warn(
      `[penguin] cannot restore the background work of ${registry.parentSessionId}: ${
        errorMessage(err)
      }`,
    );
    return { children: [], notices: [] };
  }
  const facts = collector.facts;
  const agents = new Set([source.agentId]);
  for (const c of facts.calls.values()) {
    const a = c.name === "run_subagent" ? str(c.args.agent_id) : undefined;
    if (a && /^[A-Za-z0-9_-]+$/.test(a)) agents.add(a);
  }
  const children = new Map<string, ChildFacts>();
  // Each agent's traces directory listed once, not once a pointer: 30,000 pointers beside 3000
  // sessions sent no request in 150 s (attack round 24 bounded R15).
  const listed = new Map<string, Promise<Map<string, TraceFileRef[]>>>();
  const filesOf = async (agentId: string, sid: string) => {
    let byId = listed.get(agentId);
    if (byId === undefined) listed.set(agentId, byId = sessionFilesIn(source.tracesDir(agentId)));
    return (await byId).get(sid) ?? [];
  };
  for (const sid of facts.pointers) {
    try {
      for (const agentId of agents) {
        const files = await filesOf(agentId, sid);
        if (files.length === 0) continue;
        const progress = progressCollector();
        for (const f of files) {
          for await (const rec of readTrace(f.path, { validate: false, onProblem: () => {} })) {
            progress.push(rec.message);
          }
        }
        children.set(sid, { ...progress.finish(), agentId });
        break;
      }
    } catch (err) {
      warn(`[penguin] cannot read the trace of subagent session ${sid}: ${errorMessage(err)}`);
    }
  }
  const plan = planRestore(facts, children);
  for (const c of plan.children) {
    if (registry.get(c.id)) continue;
    const child = await registry.createChild({
      id: c.id,
      sessionId: c.sessionId,
      agentId: c.agentId,
      label: c.label,
      background: c.background,
      state: c.state,
      ...(c.thinkingLevel ? { thinkingLevel: c.thinkingLevel } : {}),
    });
    registry.register(child);
  }
  for (const n of plan.notices) registry.queueNotice(n);
  return plan;
}
