/**
 * How `penguin batch run` runs one task: as a `penguin run --json`
 * subprocess of the same executable (the same entry and permission flags
 * under `deno run`), so every task is its own confined session in its own
 * process; a killed batch leaves no task running (sandbox/host_child.ts).
 *
 * The outcome comes from the child: the session id from the first record of
 * its stream (`session_meta`), turns from `request_end` records, tokens
 * from the last `token_usage`, the trace path from the data root, the cost
 * from the pair's price, and the result from the exit status (0:
 * completed). An aborted batch sends the child SIGTERM (`penguin run`
 * aborts cleanly, its trace valid and resumable); a task over its timeout
 * gets the same, and fails.
 *
 * @module
 */
import type { BatchTask } from "../../batch/task_file.ts";
import type { RunHooks, RunOne, TaskOutcome } from "../../batch/scheduler.ts";
import type { TaskTokens } from "../../batch/results.ts";
import { selfArgv } from "../../tools/host/self.ts";
import { spawnHostChild } from "../../sandbox/mod.ts";
import { locateInRoot, peekHead } from "../../session/locate.ts";
import { costOf, createPriceBook } from "../../inspect/pricing.ts";
import { projectConfigPathOf } from "../../trace/layout.ts";

/** The message that continues an interrupted task's session. */
export const CONTINUE_MESSAGE = "[batch] This task was interrupted before it ended (penguin " +
  "stopped). Continue it from where you were: check what is already done, then finish the task.";

/** Seconds a child gets to end after SIGTERM before it is killed. */
const TERM_GRACE_MS = 60_000;

/** The `penguin run` arguments of one task (a resume continues `hooks.resume`). */
export function runArgs(root: string, task: BatchTask, resume: string | undefined): string[] {
  const args = ["--root", root, "run", "--json", "--workspace", task.workspace];
  if (resume !== undefined) {
    args.push("--resume", resume);
    if (!task.goal) args.push(`--message=${CONTINUE_MESSAGE}`);
  } else {
    args.push(`--message=${task.prompt}`);
    if (task.provider !== undefined && task.model_id !== undefined) {
      args.push("--provider", task.provider, "--model-id", task.model_id);
    }
    for (const s of task.skills ?? []) args.push("--skill", s);
  }
  if (task.max_turns !== undefined) args.push("--max-turns", String(task.max_turns));
  if (task.sandbox !== undefined) args.push("--sandbox", task.sandbox);
  if (task.network !== undefined) args.push("--network", task.network ? "on" : "off");
  if (task.goal) {
    args.push("--goal");
    if (task.budget !== undefined) {
      args.push("--budget", task.budget === null ? "none" : String(task.budget));
    }
  }
  return args;
}

/** What the child's stream told. */
interface Seen {
  sessionId?: string;
  provider?: string;
  modelId?: string;
  turns: number;
  usage?: { cache_read: number; cache_write: number; output: number; total: number };
}

function take(line: string, seen: Seen): string | undefined {
  if (line.includes('"session_meta"') && seen.sessionId === undefined) {
    const m = JSON.parse(line) as {
      type?: string;
      payload?: { session_id?: unknown; provider?: unknown; model_id?: unknown };
    };
    if (m.type === "session_meta" && typeof m.payload?.session_id === "string") {
      seen.sessionId = m.payload.session_id;
      if (typeof m.payload.provider === "string") seen.provider = m.payload.provider;
      if (typeof m.payload.model_id === "string") seen.modelId = m.payload.model_id;
      return seen.sessionId;
    }
  }
  if (!line.startsWith('{"timestamp"') || !line.includes('"type":"event_msg"')) return undefined;
  if (line.includes('"type":"request_end"')) seen.turns++;
  else if (line.includes('"type":"token_usage"')) {
    const m = JSON.parse(line) as { payload?: { session?: Seen["usage"] } };
    if (m.payload?.session) seen.usage = m.payload.session;
  }
  return undefined;
}

/** Read `stream` line by line; `onSession` is awaited when the session id appears. */
async function readStream(
  stream: ReadableStream<Uint8Array>,
  seen: Seen,
  onSession: (id: string) => Promise<void>,
): Promise<void> {
  let buf = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buf += chunk;
    for (let nl = buf.indexOf("\n"); nl !== -1; nl = buf.indexOf("\n")) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let id: string | undefined;
      try {
        id = take(line, seen);
      } catch {
        // Not a record of the stream.
      }
      if (id !== undefined) await onSession(id);
    }
  }
}

/** The last lines of stderr, bounded. */
async function readTail(stream: ReadableStream<Uint8Array>): Promise<string[]> {
  let tail: string[] = [];
  let part = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    const lines = (part + chunk).split("\n");
    part = lines.pop()!.slice(-2000);
    tail = [...tail, ...lines.map((l) => l.slice(0, 500))].slice(-20);
  }
  if (part !== "") tail = [...tail, part.slice(0, 500)].slice(-20);
  return tail;
}

function failureReason(code: number, tail: string[]): string {
  const useful = tail.map((l) => l.trim()).filter((l) =>
    l !== "" && !l.startsWith("To continue this conversation")
  );
  const err = useful.findLast((l) => l.startsWith("penguin:") || /error|fail/i.test(l));
  return err ?? useful.at(-1) ?? `penguin run exited with status ${code}`;
}

async function outcomeOf(
  root: string,
  seen: Seen,
  status: Deno.CommandStatus,
  tail: string[],
  why: "signal" | "timeout" | undefined,
  timeout: number | undefined,
): Promise<TaskOutcome> {
  const out: TaskOutcome = { outcome: "failed", turns: seen.turns };
  if (status.success) out.outcome = "completed";
  else if (why === "signal") {
    out.outcome = "aborted";
    out.reason = "interrupted by a signal";
  } else if (why === "timeout") out.reason = `timed out after ${timeout} s`;
  else out.reason = failureReason(status.code, tail);
  if (seen.sessionId !== undefined) {
    out.session_id = seen.sessionId;
    try {
      out.trace = (await locateInRoot(root, seen.sessionId)).latest.path;
    } catch {
      // No trace to point at.
    }
  }
  if (seen.usage) {
    const u = seen.usage;
    const tokens: TaskTokens = {
      input: u.cache_read + u.cache_write,
      output: u.output,
      total: u.total,
    };
    out.tokens = tokens;
    out.cost = null;
    if (seen.provider !== undefined && seen.modelId !== undefined) {
      const price = await createPriceBook().priceFor(
        seen.provider,
        seen.modelId,
        out.trace !== undefined ? projectConfigPathOf(out.trace) : null,
      ).catch(() => null);
      if (price) out.cost = costOf(u, price);
    }
  }
  return out;
}

/**
 * Whether the session `id` recorded for a task can be resumed: its latest
 * trace file starts with a readable `session_meta`. A task killed while
 * its session was being created (the id already told, the file still
 * empty) left nothing to resume: it starts again.
 */
async function resumable(root: string, id: string): Promise<boolean> {
  try {
    const { latest } = await locateInRoot(root, id);
    return (await peekHead(latest.path))?.meta != null;
  } catch {
    return false;
  }
}

/** A {@linkcode RunOne} running each task as `penguin --root <root> run --json …`. */
export function subprocessRunOne(root: string): RunOne {
  return async (task: BatchTask, signal: AbortSignal, hooks: RunHooks) => {
    await Deno.mkdir(task.workspace, { recursive: true });
    const resume = hooks.resume !== undefined && await resumable(root, hooks.resume)
      ? hooks.resume
      : undefined;
    const argv = selfArgv(runArgs(root, task, resume));
    const child = await spawnHostChild(argv);
    let why: "signal" | "timeout" | undefined;
    let grace: ReturnType<typeof setTimeout> | undefined;
    const stop = (reason: "signal" | "timeout") => {
      why ??= reason;
      try {
        child.kill("SIGTERM");
      } catch {
        return; // Already ended.
      }
      grace ??= setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch {
          // Already ended.
        }
      }, TERM_GRACE_MS);
    };
    const onAbort = () => stop("signal");
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) onAbort();
    const timer = task.timeout !== undefined
      ? setTimeout(() => stop("timeout"), task.timeout * 1000)
      : undefined;
    const seen: Seen = { turns: 0 };
    try {
      const [, tail, status] = await Promise.all([
        readStream(child.stdout, seen, hooks.started),
        readTail(child.stderr),
        child.status,
      ]);
      return await outcomeOf(root, seen, status, tail, why, task.timeout);
    } finally {
      signal.removeEventListener("abort", onAbort);
      clearTimeout(timer);
      clearTimeout(grace);
    }
  };
}
