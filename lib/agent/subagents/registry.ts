/**
 * The children registry of a session: the subagents
 * it keeps addressable by `subagent-<8>` id, the background notices they
 * (and, after a restart, the lost background commands) produce, and the
 * live message tap for the host.
 *
 * What lives only in memory: the live child sessions, what each is doing,
 * its undelivered answer text and buffered messages, the approvals it waits
 * for and its standing approval sink. Everything else can be derived from
 * the traces (`restore.ts` does so when a parent is resumed): the parent's
 * trace names every child with a `subagent` pointer, each spawn and its
 * outcome are tool calls and outputs there, delivered notices are harness
 * texts there, and each child's own trace says how far it got.
 *
 * Limits: 8 registered subagents (a full registry evicts its least recently
 * used idle child; a spawn is refused when none is idle).
 *
 * @module
 */
import { defaultWarn, errorMessage } from "../../protocol/errors.ts";
import type { OmniMessage } from "../../protocol/types.ts";
import type { ThinkingLevel } from "../../models/wire.ts";
import { randomHex8 } from "../../state/ids.ts";
import { type BackgroundNotice, formatBackgroundNotice } from "../../tools/background_notice.ts";
import { tellNoticeListeners } from "../../tools/background_notice.ts";
import type { ToolCallContext } from "../../tools/tool.ts";
import type { ApproveFn } from "../approval.ts";
import type { Child, ChildInit, ChildSession, TaskEnd } from "./_child.ts";
import { MAX_REGISTERED_SUBAGENTS, MAX_SUBAGENT_DEPTH } from "./definitions.ts";

/** What the subagent tools are given: the call's context and the session's children registry. */
export interface SubagentToolContext extends ToolCallContext {
  /** The session's children registry. */
  children: ChildRegistry;
}

/** What the parent asks for when it spawns a child. */
export interface ChildSpawnRequest {
  /** The spawning tool call (recorded in the child's `session_meta.parent`). */
  toolCallId: string;
  /** Run as this agent (default: the parent's agent). */
  agentId?: string;
  /** Explicit model pair; both or neither. */
  provider?: string;
  /** Explicit model pair; both or neither. */
  modelId?: string;
  /** The child's default thinking level. */
  thinkingLevel?: ThinkingLevel | undefined;
}

/** How a registry creates and reopens child sessions (the agent layer provides it). */
export interface ChildSpawner {
  /** The parent's agent id. */
  readonly agentId: string;
  /** Create a child session: `source: "subagent"`, parent link, depth + 1, parent's workspace and confinement. */
  spawn(req: ChildSpawnRequest): Promise<ChildSession>;
  /** Reopen a child session from its trace (after a restart), with this default thinking level. */
  resume(sessionId: string, agentId: string, thinkingLevel?: ThinkingLevel): Promise<ChildSession>;
  /** The traces directory of an agent of the parent's project. */
  tracesDir(agentId: string): string;
}

/** The parent run a tool call happens in: its approve function and thinking level. */
export interface RunBinding {
  /** The run's approve function (absent: every call denied). */
  approve?: ApproveFn | undefined;
  /** The run's effective thinking level. */
  thinkingLevel?: ThinkingLevel | undefined;
}

/** One entry of {@linkcode ChildRegistry.list}. */
export interface SubagentInfo {
  /** `subagent-<8>`. */
  id: string;
  /** The child's session id. */
  sessionId: string;
  /** The agent it runs as. */
  agentId: string;
  /** `running`, `idle`, or `interrupted` (restored from a trace, not resumed yet). */
  state: Child["state"];
  /** Started with `run_in_background` (task ends are reported as notices). */
  background: boolean;
  /** First line of its current (or last) prompt. */
  label: string;
  /** Undelivered answer characters. */
  unreadChars: number;
  /** Tool calls waiting for approval. */
  pendingApprovals: number;
}

/** Options of {@linkcode createChildRegistry}. */
export interface ChildRegistryOptions {
  /** The parent session. */
  parentSessionId: string;
  /** The parent's subagent depth (0 for a user session). */
  depth: number;
  /** Creates and reopens children; absent → the subagent tools cannot spawn. */
  spawner?: ChildSpawner;
  /** Registered subagents at most (default 8). */
  maxChildren?: number;
  /** Diagnostics (default stderr). */
  warn?: (line: string) => void;
}

/** A session's children registry. */
export interface ChildRegistry {
  /** The parent session. */
  readonly parentSessionId: string;
  /** The parent's subagent depth. */
  readonly depth: number;
  /** Creates and reopens children, when this session may have them. */
  readonly spawner: ChildSpawner | undefined;
  /** Registered subagents at most. */
  readonly maxChildren: number;
  /** True when this session may spawn subagents (below the depth cap, with a spawner). */
  readonly canSpawn: boolean;
  /** Set (or clear, with undefined) the parent run tool calls happen in. */
  bindRun(run: RunBinding | undefined): void;
  /** The parent run in progress, if any. */
  currentRun(): RunBinding | undefined;
  /**
   * A child wired to this registry's tap and notices (not registered yet). The child's code
   * loads with the first child: a session that starts none does not load it.
   */
  createChild(init: Omit<ChildInit, "tap" | "onTaskEnd">): Promise<Child>;
  /** `subagent-<last 8 of sessionId>`, or a random one when that is taken. */
  newId(sessionId: string): string;
  /** Make `child` addressable by its id. */
  register(child: Child): void;
  /** Keep an unregistered child so `dispose()` stops it too; returns the release. */
  track(child: Child): () => void;
  /** The registered child with `id` (marks it used). */
  get(id: string): Child | undefined;
  /** Registered ids, oldest registration first. */
  ids(): string[];
  /** Forget a child (does not stop it). */
  remove(id: string): boolean;
  /** Evict idle children until one more fits; false when the registry is full of busy ones. */
  makeRoom(): Promise<boolean>;
  /** Queue a background notice. */
  queueNotice(notice: BackgroundNotice): void;
  /** Queued notices, oldest first; empties the queue. */
  takeNotices(): BackgroundNotice[];
  /** Number of queued notices. */
  readonly pendingNotices: number;
  /** Be told of each notice as it is queued; returns the unsubscribe. */
  onNotice(fn: (notice: BackgroundNotice) => void): () => void;
  /** Receive the origin-tagged messages of children nobody follows; returns the unsubscribe. */
  onMessage(fn: (message: OmniMessage) => void): () => void;
  /**
   * While a parent task runs: take those messages into its stream instead
   * (listeners of `onMessage` get nothing meanwhile); returns the detach.
   */
  attachStream(fn: (message: OmniMessage) => void): () => void;
  /**
   * A background child about to be launched: its own messages must not
   * overtake its session_meta and prompt, which reach the parent's stream
   * through the launching tool call. `announce` it once they have.
   */
  expect(sessionId: string): void;
  /** The launch messages of a child (or, without an id, of every child) passed through the parent's stream. */
  announce(sessionId?: string): void;
  /** Whether the launch messages of a child are still on their way. */
  isExpected(sessionId: string): boolean;
  /** The registered children. */
  list(): SubagentInfo[];
  /** Whether a registered background child is running. */
  hasRunningBackground(): boolean;
  /** Stop every child (registered and tracked) and drop the queued notices. Idempotent. */
  dispose(): Promise<void>;
  /** True after `dispose()`. */
  readonly disposed: boolean;
}

/** Hand `message` to each listener; one that throws is reported through `warn`. */
function tellMessageListeners(
  listeners: ReadonlySet<(m: OmniMessage) => void>,
  message: OmniMessage,
  warn: (line: string) => void,
): void {
  for (const fn of [...listeners]) {
    try {
      fn(message);
    } catch (err) {
      warn(`[penguin] background message listener threw: ${errorMessage(err)}`);
    }
  }
}

/** The background notice of a child's task end. */
function taskEndNotice(child: Child, end: TaskEnd): BackgroundNotice {
  return formatBackgroundNotice({
    kind: "subagent",
    id: child.id,
    status: end.aborted !== undefined ? "failed" : "completed",
    ...(end.aborted !== undefined
      ? { detail: `aborted: ${end.aborted}` }
      : end.sawText
      ? {}
      : { detail: "finished without a text answer" }),
    command: child.label,
    output: child.take(),
  });
}

/** `subagent-<last 8 of sessionId>`, or a random one when that is taken. */
function freeId(children: ReadonlyMap<string, Child>, sessionId: string): string {
  const base = `subagent-${sessionId.slice(-8)}`;
  if (!children.has(base)) return base;
  for (;;) {
    const id = `subagent-${randomHex8()}`;
    if (!children.has(id)) return id;
  }
}

/** Evict the least recently used idle, unfollowed children until one more fits; false when none can go. */
async function evictIdle(children: Map<string, Child>, maxChildren: number): Promise<boolean> {
  while (children.size >= maxChildren) {
    let victim: Child | undefined;
    for (const c of children.values()) {
      if (c.state !== "idle" || c.followed) continue;
      if (!victim || c.lastUsed < victim.lastUsed) victim = c;
    }
    if (!victim) return false;
    children.delete(victim.id);
    await victim.dispose("evicted to make room for another subagent");
  }
  return true;
}

/** A registered child as `list` shows it. */
function listEntry(c: Child): SubagentInfo {
  return {
    id: c.id,
    sessionId: c.sessionId,
    agentId: c.agentId,
    state: c.state,
    background: c.background,
    label: c.label,
    unreadChars: c.unreadChars,
    pendingApprovals: c.pendingApprovals,
  };
}

/** A new, empty registry. */
export function createChildRegistry(opts: ChildRegistryOptions): ChildRegistry {
  // Long because: one closure-based registry whose methods share the children, the tracked tasks
  // and the notices; each method is short.
  const warn = opts.warn ?? defaultWarn;
  const maxChildren = Math.max(1, opts.maxChildren ?? MAX_REGISTERED_SUBAGENTS);
  const children = new Map<string, Child>();
  const tracked = new Set<Child>();
  const notices: BackgroundNotice[] = [];
  const noticeListeners = new Set<(n: BackgroundNotice) => void>();
  const messageListeners = new Set<(m: OmniMessage) => void>();
  let stream: ((m: OmniMessage) => void) | undefined;
  const expected = new Set<string>();
  let run: RunBinding | undefined;
  let disposed = false;

  const queueNotice = (notice: BackgroundNotice) => {
    if (disposed) return;
    notices.push(notice);
    tellNoticeListeners(noticeListeners, notice);
  };

  const tap = (message: OmniMessage): boolean => {
    if (stream) {
      stream(message);
      return true;
    }
    if (messageListeners.size === 0) return false;
    tellMessageListeners(messageListeners, message, warn);
    return true;
  };

  const onTaskEnd = (child: Child, end: TaskEnd, followed: boolean) => {
    if (disposed || children.get(child.id) !== child) return;
    if (followed || !child.background) return;
    child.endReported = true;
    queueNotice(taskEndNotice(child, end));
  };

  const registry: ChildRegistry = {
    parentSessionId: opts.parentSessionId,
    depth: opts.depth,
    spawner: opts.spawner,
    maxChildren,
    get canSpawn() {
      return opts.depth < MAX_SUBAGENT_DEPTH && opts.spawner !== undefined && !disposed;
    },
    get disposed() {
      return disposed;
    },
    get pendingNotices() {
      return notices.length;
    },
    bindRun(r) {
      run = r;
    },
    currentRun: () => run,
    createChild: async (init) =>
      (await import("./_child.ts")).createChild({ ...init, tap, onTaskEnd }),
    newId: (sessionId) => freeId(children, sessionId),
    register(child) {
      children.set(child.id, child);
      child.lastUsed = Date.now();
    },
    track(child) {
      tracked.add(child);
      return () => void tracked.delete(child);
    },
    get(id) {
      const c = children.get(id);
      if (c) c.lastUsed = Date.now();
      return c;
    },
    ids: () => [...children.keys()],
    remove: (id) => children.delete(id),
    makeRoom: () => evictIdle(children, maxChildren),
    queueNotice,
    takeNotices: () => notices.splice(0, notices.length),
    onNotice(fn) {
      noticeListeners.add(fn);
      return () => void noticeListeners.delete(fn);
    },
    onMessage(fn) {
      messageListeners.add(fn);
      return () => void messageListeners.delete(fn);
    },
    expect: (id) => void expected.add(id),
    announce: (id) => (id === undefined ? expected.clear() : void expected.delete(id)),
    isExpected: (id) => expected.has(id),
    attachStream(fn) {
      stream = fn;
      return () => {
        if (stream === fn) stream = undefined;
      };
    },
    list: () => [...children.values()].map(listEntry),
    hasRunningBackground: () =>
      [...children.values()].some((c) => c.background && c.state === "running"),
    async dispose() {
      if (disposed) return;
      disposed = true;
      notices.length = 0;
      const all = [...children.values(), ...tracked];
      children.clear();
      tracked.clear();
      await Promise.all(
        all.map((c) =>
          c.dispose("the parent session was disposed").catch((err) =>
            warn(`[penguin] stopping subagent ${c.id} failed: ${errorMessage(err)}`)
          )
        ),
      );
    },
  };
  return registry;
}
