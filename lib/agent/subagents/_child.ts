// One child session as its parent holds it: the live child Session, the
// task it runs, where its messages go, its undelivered answer text and the
// approvals it is waiting for.
//
// Messages of the child are tagged with one origin hop (the child's session
// id prepended). While a tool call follows the child (a run_subagent window
// or an input_subagent poll) they are handed to that call, which forwards
// them into the parent's stream; otherwise they go to the host's listeners
// (`tap`), or are buffered for the next follower when nobody listens. The
// child's own `partial_text` deltas are its answer: a follower turns them
// into its tool output, otherwise they wait in the unread buffer.
//
// Approvals of child tool calls queue here and are answered one at a time
// by the follower's approve function (the window sink), else by the
// standing sink a background launch leaves; with neither they wait. A sink
// that throws or answers nonsense denies.
import { errorMessage, PenguinError } from "../../protocol/errors.ts";
import { onAbort } from "../../protocol/abort.ts";
import type { CompleteMessage, OmniMessage, ToolCallMessage } from "../../protocol/types.ts";
import { type RunOutcome, trackOutcome } from "../outcome.ts";
import type { ThinkingLevel } from "../../models/wire.ts";
import { droppedMarker } from "../../tools/_output_buffer.ts";
import type { ToolEvent } from "../../tools/tool.ts";
import { type ApprovalVerdict, type ApproveFn, verdictOf } from "../approval.ts";
import { SUBAGENT_MESSAGE_BUFFER, SUBAGENT_TEXT_BUFFER } from "./definitions.ts";

/**
 * What a parent uses of a child's live session (a `Session` fits): run one
 * task, and dispose it.
 */
export interface ChildSession {
  /** The child's session id. */
  readonly sessionId: string;
  /** The child's `session_meta` envelope (forwarded when it starts). */
  readonly metaMessage: OmniMessage;
  /** Run one task; yields the child's messages and returns how the task ended. */
  run(
    input: string | CompleteMessage[],
    opts: { signal: AbortSignal; approve?: ApproveFn; thinkingLevel?: ThinkingLevel },
  ): AsyncGenerator<OmniMessage, RunOutcome>;
  /** Stop everything the child session holds. */
  dispose(): Promise<void>;
}

/** What a child is doing. */
export type ChildState = "running" | "idle" | "interrupted";

/** How a child's task ended. */
export interface TaskEnd {
  /** The reason of the child's own `abort` event, when its task ended with one. */
  aborted?: string;
  /** Whether the task produced any answer text. */
  sawText: boolean;
}

/** How a follow window ended. */
export type FollowEnd = "done" | "window" | "aborted";

/** What a child is created with. */
export interface ChildInit {
  /** `subagent-<8>`. */
  id: string;
  /** The child's session id. */
  sessionId: string;
  /** The agent the child runs as. */
  agentId: string;
  /** The current task's prompt (first line used in notices). */
  label: string;
  /** Report each task end as a background notice. */
  background: boolean;
  /** The live child session; absent for a child restored from its trace until it is resumed. */
  session?: ChildSession;
  /** Initial state (default: idle). */
  state?: ChildState;
  /** Answer text the parent has not seen yet (a restored child's). */
  unread?: string;
  /** The thinking level its spawning call asked for (used when it is resumed). */
  thinkingLevel?: ThinkingLevel;
  /** Messages nobody follows: to the host's listeners; false when nobody listened. */
  tap(message: OmniMessage): boolean;
  /** Called after each task ends; `followed` when a tool call was following the child then. */
  onTaskEnd(child: Child, end: TaskEnd, followed: boolean): void;
}

/** A child session held by its parent. */
export interface Child {
  /** `subagent-<8>`. */
  readonly id: string;
  /** The child's session id. */
  readonly sessionId: string;
  /** The agent the child runs as. */
  readonly agentId: string;
  /** What it is doing. */
  readonly state: ChildState;
  /** The live session, if any. */
  readonly session: ChildSession | undefined;
  /** The current (or last) task's prompt. */
  label: string;
  /** The thinking level its spawning call asked for, if any. */
  readonly thinkingLevel: ThinkingLevel | undefined;
  /** Whether task ends are reported as background notices. */
  background: boolean;
  /** Whether the last task's end was reported to the parent (reset when a task starts). */
  endReported: boolean;
  /** How the last task ended (undefined while running or before the first task). */
  readonly lastEnd: TaskEnd | undefined;
  /** Last time a tool touched it (ms since the epoch). */
  lastUsed: number;
  /** Undelivered answer characters. */
  readonly unreadChars: number;
  /** Tool calls waiting for approval. */
  readonly pendingApprovals: number;
  /** Whether a tool call follows it right now. */
  readonly followed: boolean;
  /** The approve function the child's runs use. */
  readonly approve: ApproveFn;
  /** Set or clear the standing approval sink. */
  setStandingSink(sink: ApproveFn | undefined): void;
  /** Give a restored child its resumed session (state becomes idle). */
  attach(session: ChildSession): void;
  /** Start a task; throws when one is running or there is no session. */
  start(input: CompleteMessage[], thinkingLevel?: ThinkingLevel): void;
  /** Stream the child's messages and answer text until its task ends, the window passes or `signal` aborts. */
  follow(
    windowMs: number,
    signal: AbortSignal,
    sink: ApproveFn,
  ): AsyncGenerator<ToolEvent, FollowEnd, undefined>;
  /** Undelivered answer text (with a drop marker when older text was lost); empties the buffer. */
  take(): string;
  /** Resolves when the running task (if any) has ended. */
  settled(): Promise<void>;
  /** Deny pending approvals, abort the running task and wait for it to end. */
  abort(reason: string): Promise<void>;
  /** Abort, then dispose the child session. Idempotent. */
  dispose(reason: string): Promise<void>;
}

/** A tool call following a child: what it has not yielded yet, how to wake it, its approvals. */
interface Follower {
  items: ToolEvent[];
  wake: () => void;
  sink: ApproveFn;
}

/** Wait until `me` is woken, `ms` pass or `signal` aborts (not aborted yet: the caller checked). */
function wakeOrTimeout(me: Follower, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(finish, ms);
    const off = onAbort(signal, finish);
    me.wake = finish;
    function finish() {
      clearTimeout(timer);
      off();
      me.wake = () => {};
      resolve();
    }
  });
}

/** Unread answer text, bounded (oldest dropped, counted for the drop marker). */
function unreadText(initial: string): {
  add(text: string): void;
  take(): string;
  readonly length: number;
} {
  let unread = initial;
  let dropped = 0;
  return {
    add(text) {
      unread += text;
      if (unread.length > SUBAGENT_TEXT_BUFFER) {
        const cut = unread.length - SUBAGENT_TEXT_BUFFER;
        dropped += cut;
        unread = unread.slice(cut);
      }
    },
    take() {
      const out = dropped > 0 ? `${droppedMarker(dropped)}\n${unread}` : unread;
      unread = "";
      dropped = 0;
      return out;
    },
    get length() {
      return unread.length;
    },
  };
}

/**
 * The approvals a child's tool calls wait for, answered one at a time by
 * the current sink (`sinkOf`); denied at once once the child is `stopped`.
 */
function approvalQueue(sinkOf: () => ApproveFn | undefined, stopped: () => boolean): {
  approve: ApproveFn;
  pump(): Promise<void>;
  noteOutput(m: OmniMessage): void;
  denyAll(running: Promise<void>): Promise<void>;
  readonly count: number;
} {
  let pending: Array<{ call: ToolCallMessage; resolve: (d: ApprovalVerdict) => void }> = [];
  let asking = false;
  const pump = async () => {
    if (asking) return;
    asking = true;
    try {
      while (pending.length > 0) {
        const sink = sinkOf();
        if (!sink) return;
        const head = pending[0]!;
        let decision: ApprovalVerdict;
        try {
          decision = verdictOf(await sink(head.call)) ??
            { decision: "deny", reason: "the approval callback gave no decision" };
        } catch {
          decision = { decision: "deny", reason: "the approval callback failed" };
        }
        if (pending[0] === head) {
          pending.shift();
          head.resolve(decision);
        }
      }
    } finally {
      asking = false;
    }
  };
  // Denied calls whose outputs `abort` waits to see recorded.
  let awaitingOutputs: { ids: Set<string>; resolve: () => void } | undefined;
  const denyPending = () => {
    const all = pending;
    pending = [];
    for (const p of all) p.resolve({ decision: "deny", reason: "the subagent was stopped" });
  };
  return {
    approve: (call) => {
      if (stopped()) return { decision: "deny", reason: "the subagent was stopped" };
      return new Promise<ApprovalVerdict>((resolve) => {
        pending.push({ call, resolve });
        void pump();
      });
    },
    pump,
    noteOutput(m) {
      const p = m.payload as { type?: string; tool_call_id?: unknown };
      if (!awaitingOutputs || m.type !== "model_msg" || p.type !== "tool_call_output") return;
      if (typeof p.tool_call_id === "string") awaitingOutputs.ids.delete(p.tool_call_id);
      if (awaitingOutputs.ids.size === 0) awaitingOutputs.resolve();
    },
    async denyAll(running) {
      if (pending.length > 0) {
        // Let the child's turn record the denials before its task is aborted:
        // wait for their outputs to pass through (or the run to end), no longer.
        const ids = new Set(pending.map((p) => p.call.tool_call_id));
        const recorded = new Promise<void>((resolve) => {
          awaitingOutputs = { ids, resolve };
        });
        denyPending();
        await Promise.race([recorded, running]);
        awaitingOutputs = undefined;
      }
    },
    get count() {
      return pending.length;
    },
  };
}

/**
 * Pass each message of a child's task on (`deliver`, with the answer text of
 * its own text deltas) and to `noteOutput`; resolves to how the task ended.
 */
async function pumpTask(
  task: AsyncIterable<OmniMessage> & { readonly outcome: RunOutcome | undefined },
  deliver: (m: OmniMessage, text: string | undefined) => void,
  noteOutput: (m: OmniMessage) => void,
): Promise<TaskEnd> {
  let aborted: string | undefined;
  let sawText = false;
  try {
    for await (const m of task) {
      let text: string | undefined;
      if (m.origin === undefined || m.origin.length === 0) {
        const p = m.payload as { type: string; [k: string]: unknown };
        if (
          m.type === "model_msg" && p.type === "partial_text" && p.event_type === "delta" &&
          typeof p.text === "string" && p.text !== ""
        ) {
          text = p.text;
          sawText = true;
        }
      }
      deliver(m, text);
      if (m.origin === undefined || m.origin.length === 0) noteOutput(m);
    }
    const end = task.outcome;
    if (end?.kind === "aborted" || end?.kind === "failed") aborted = end.reason || "aborted";
  } catch (err) {
    aborted = `the subagent's run failed: ${errorMessage(err)}`;
  }
  return aborted !== undefined ? { aborted, sawText } : { sawText };
}

/** What a child's steps share: its state, its session and the current task. */
interface ChildCore {
  init: ChildInit;
  state: ChildState;
  session: ChildSession | undefined;
  lastEnd: TaskEnd | undefined;
  current: AbortController | undefined;
  running: Promise<void>;
  disposed: boolean;
  unread: ReturnType<typeof unreadText>;
  /** Messages kept for the next follower while nobody listens. */
  backlog: OmniMessage[];
  follower: Follower | undefined;
  standing: ApproveFn | undefined;
  approvals: ReturnType<typeof approvalQueue>;
}

/** Pass a message on: to the follower, else to the host's listeners, else to the backlog. */
function deliver(c: ChildCore, message: OmniMessage, text: string | undefined) {
  if (c.follower) {
    c.follower.items.push({ type: "forward", message });
    if (text) c.follower.items.push({ type: "delta", text });
    c.follower.wake();
    return;
  }
  if (text) c.unread.add(text);
  if (!c.init.tap(message)) {
    c.backlog.push(message);
    if (c.backlog.length > SUBAGENT_MESSAGE_BUFFER) {
      c.backlog.splice(0, c.backlog.length - SUBAGENT_MESSAGE_BUFFER);
    }
  }
}

const tag = (c: ChildCore, m: OmniMessage): OmniMessage => ({
  ...m,
  origin: [c.init.sessionId, ...(m.origin ?? [])],
});

/** Start a task (see `Child.start`). */
function startTask(
  c: ChildCore,
  child: Child,
  input: CompleteMessage[],
  thinkingLevel: ThinkingLevel | undefined,
) {
  const { init } = c;
  if (c.disposed) throw new PenguinError("runtime", `subagent ${init.id} is stopped`);
  const session = c.session;
  if (!session) {
    throw new PenguinError("runtime", `subagent ${init.id} has no live session to run`);
  }
  if (c.state === "running") {
    throw new PenguinError("runtime", `subagent ${init.id} is still running`);
  }
  const ctl = new AbortController();
  c.current = ctl;
  c.state = "running";
  c.lastEnd = undefined;
  child.endReported = false;
  const task = trackOutcome(session.run(input, {
    signal: ctl.signal,
    approve: c.approvals.approve,
    ...(thinkingLevel !== undefined ? { thinkingLevel } : {}),
  }));
  c.running = (async () => {
    const end = await pumpTask(
      task,
      (m, text) => deliver(c, tag(c, m), text),
      c.approvals.noteOutput,
    );
    c.state = "idle";
    c.lastEnd = end;
    if (c.current === ctl) c.current = undefined;
    child.lastUsed = Date.now();
    const followed = c.follower !== undefined;
    c.follower?.wake();
    try {
      init.onTaskEnd(child, c.lastEnd, followed);
    } catch {
      // the host's bookkeeping must not break the child
    }
  })();
}

/** Stream the child's messages and answer text (see `Child.follow`). */
async function* follow(
  c: ChildCore,
  child: Child,
  windowMs: number,
  signal: AbortSignal,
  sink: ApproveFn,
): AsyncGenerator<ToolEvent, FollowEnd, undefined> {
  if (c.follower) {
    throw new PenguinError(
      "runtime",
      `another tool call is already following subagent ${c.init.id}; wait for it to return`,
    );
  }
  const me: Follower = { items: [], wake: () => {}, sink };
  for (const m of c.backlog) me.items.push({ type: "forward", message: m });
  c.backlog = [];
  const text = child.take();
  if (text) me.items.push({ type: "delta", text });
  c.follower = me;
  child.lastUsed = Date.now();
  void c.approvals.pump();
  const deadline = Date.now() + Math.max(0, windowMs);
  try {
    for (;;) {
      while (me.items.length > 0) yield me.items.shift()!;
      if (c.state !== "running") return "done";
      if (signal.aborted) return "aborted";
      const left = deadline - Date.now();
      if (left <= 0) return "window";
      await wakeOrTimeout(me, left, signal);
    }
  } finally {
    if (c.follower === me) c.follower = undefined;
    child.lastUsed = Date.now();
    // Whatever the consumer did not take stays undelivered.
    for (const item of me.items) {
      if (item.type === "delta") c.unread.add(item.text);
      else if (item.type === "forward" && !c.init.tap(item.message)) c.backlog.push(item.message);
    }
    me.items = [];
  }
}

/** Create a child around `init`. */
export function createChild(init: ChildInit): Child {
  const c: ChildCore = {
    init,
    state: init.state ?? "idle",
    session: init.session,
    lastEnd: undefined,
    current: undefined,
    running: Promise.resolve(),
    disposed: false,
    unread: unreadText(init.unread ?? ""),
    backlog: [],
    follower: undefined,
    standing: undefined,
    approvals: approvalQueue(() => c.follower?.sink ?? c.standing, () => c.disposed),
  };
  const child: Child = {
    id: init.id,
    sessionId: init.sessionId,
    agentId: init.agentId,
    label: init.label,
    thinkingLevel: init.thinkingLevel,
    background: init.background,
    endReported: true,
    lastUsed: Date.now(),
    get state() {
      return c.state;
    },
    get session() {
      return c.session;
    },
    get lastEnd() {
      return c.lastEnd;
    },
    get unreadChars() {
      return c.unread.length;
    },
    get pendingApprovals() {
      return c.approvals.count;
    },
    get followed() {
      return c.follower !== undefined;
    },
    approve: c.approvals.approve,
    setStandingSink(sink) {
      c.standing = sink;
      void c.approvals.pump();
    },
    attach(s) {
      c.session = s;
      if (c.state === "interrupted") c.state = "idle";
    },
    start: (input, thinkingLevel) => startTask(c, child, input, thinkingLevel),
    follow: (windowMs, signal, sink) => follow(c, child, windowMs, signal, sink),
    take: () => c.unread.take(),
    settled: () => c.running,
    async abort(reason) {
      await c.approvals.denyAll(c.running);
      c.current?.abort(new DOMException(reason, "AbortError"));
      await c.running;
    },
    async dispose(reason) {
      if (c.disposed) return;
      c.disposed = true;
      c.standing = undefined;
      await child.abort(reason);
      await c.session?.dispose();
    },
  };
  return child;
}
