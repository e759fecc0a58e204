/**
 * The per-session process registry: the command sessions that
 * outlived their exec_command call, addressable by `proc-<8hex>` id, and
 * the background completion notices they produce.
 *
 * How a session uses it:
 * - create one per Session (`createProcessRegistry()`) and pass it as
 *   `ToolContext.processes` to every tool call;
 * - drain notices with `takeNotices()` at every next-input assembly (each
 *   one becomes `userText(notice.text, "harness")`, delivered before
 *   steering); while idle, `onNotice(fn)` signals that one arrived;
 * - call `disposeAll()` when the Session is disposed: every command it
 *   started dies, armed notices are dropped.
 *
 * Limits: 64 sessions (a full registry evicts an exited session first, else
 * the least recently used running one, which is killed); 1 MiB of unread
 * output per session; sessions idle for 10 days are killed and removed by an
 * hourly sweep (unref'd timer).
 *
 * @module
 */
import {
  type BackgroundNotice,
  formatBackgroundNotice,
  tellNoticeListeners,
} from "./background_notice.ts";
import { type CommandSession, describeExit, newProcessId } from "./command_session.ts";
import { DEFAULT_BUFFER_LIMIT } from "./_output_buffer.ts";

/** Command sessions a registry holds at most. */
export const DEFAULT_MAX_SESSIONS = 64;

/** Idle time after which a session is killed and removed (10 days). */
export const DEFAULT_IDLE_TTL_MS = 10 * 24 * 60 * 60 * 1000;

/** How often idle sessions are swept (hourly). */
export const DEFAULT_SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/** Options of {@linkcode createProcessRegistry}; the defaults are the production limits. */
export interface ProcessRegistryOptions {
  /** Sessions held at most (default 64). */
  maxSessions?: number;
  /** Unread output per session in chars (default 1 MiB); exec_command passes it to `startCommand`. */
  bufferLimit?: number;
  /** Idle TTL in ms (default 10 days; `<= 0` disables the sweep). */
  idleTtlMs?: number;
  /** Sweep interval in ms (default 1 hour). */
  sweepIntervalMs?: number;
  /** Called with each notice as it is queued (same as a first `onNotice`). */
  onNotice?: (notice: BackgroundNotice) => void;
  /** Clock (tests). */
  now?: () => number;
}

/** A session's command registry. */
export interface ProcessRegistry {
  /** Unread-output limit for new sessions, in chars. */
  readonly bufferLimit: number;
  /** Sessions held at most. */
  readonly maxSessions: number;
  /** Number of registered sessions. */
  readonly size: number;
  /** True after `disposeAll()`. */
  readonly disposed: boolean;
  /** A fresh `proc-<8hex>` id not in use here. */
  newId(): string;
  /**
   * Make `session` addressable by its id. `notify` arms the background
   * completion notice. A full registry evicts first (exited sessions, then
   * the least recently used running one, killed). Returns false, after
   * killing the session, when the registry is disposed.
   */
  register(session: CommandSession, opts?: { notify?: boolean }): Promise<boolean>;
  /** Keep an in-flight (not yet registered) session so `disposeAll()` kills it too; returns the release. */
  track(session: CommandSession): () => void;
  /** The registered session with `id` (marks it used). */
  get(id: string): CommandSession | undefined;
  /** Registered ids, oldest registration first. */
  ids(): string[];
  /** Forget a session (does not kill it). Returns whether it was registered. */
  remove(id: string): boolean;
  /** Queued notices, oldest first; empties the queue. */
  takeNotices(): BackgroundNotice[];
  /** Number of queued notices. */
  readonly pendingNotices: number;
  /** Call `fn` with each notice as it is queued (it stays queued); returns the unsubscribe. */
  onNotice(fn: (notice: BackgroundNotice) => void): () => void;
  /** Kill and remove sessions idle longer than the TTL; returns their ids. */
  sweep(): Promise<string[]>;
  /** Kill every session (registered and in flight), drop armed notices, stop the sweep. */
  disposeAll(): Promise<void>;
}

/** The notice of a background command that ended with `status`. */
function exitNotice(
  session: CommandSession,
  status: Awaited<CommandSession["done"]>,
): BackgroundNotice {
  return formatBackgroundNotice({
    kind: "command",
    id: session.id,
    status: status.code === 0 && !status.signal ? "completed" : "failed",
    detail: describeExit(status),
    command: session.cmd,
    output: session.take(),
  });
}

/** The notice of a background command killed to make room. */
function evictedNotice(
  victim: CommandSession,
  status: Awaited<CommandSession["done"]>,
  maxSessions: number,
): BackgroundNotice {
  return formatBackgroundNotice({
    kind: "command",
    id: victim.id,
    status: "failed",
    detail: `killed (${
      describeExit(status)
    }) to make room: the limit of ${maxSessions} command sessions was reached`,
    command: victim.cmd,
    output: victim.take(),
  });
}

/** The session to evict: the least recently used one that exited, else the least recently used. */
function evictionVictim(sessions: ReadonlyMap<string, CommandSession>): CommandSession | undefined {
  let victim: CommandSession | undefined;
  for (const s of sessions.values()) {
    if (s.exit !== undefined && (!victim || s.lastUsed < victim.lastUsed)) victim = s;
  }
  if (!victim) {
    for (const s of sessions.values()) if (!victim || s.lastUsed < victim.lastUsed) victim = s;
  }
  return victim;
}

/** A registry with the default limits above (override them in `opts`). */
export function createProcessRegistry(opts: ProcessRegistryOptions = {}): ProcessRegistry {
  // Long because: one closure-based registry whose methods share the sessions, the limits and the
  // sweep timer; each method is short.
  const maxSessions = Math.max(1, opts.maxSessions ?? DEFAULT_MAX_SESSIONS);
  const bufferLimit = opts.bufferLimit ?? DEFAULT_BUFFER_LIMIT;
  const ttl = opts.idleTtlMs ?? DEFAULT_IDLE_TTL_MS;
  const interval = opts.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
  const now = opts.now ?? Date.now;
  const sessions = new Map<string, CommandSession>();
  const inflight = new Set<CommandSession>();
  const notices: BackgroundNotice[] = [];
  const listeners = new Set<(notice: BackgroundNotice) => void>();
  if (opts.onNotice) listeners.add(opts.onNotice);
  let disposed = false;
  let sweepTimer: ReturnType<typeof setInterval> | undefined;

  const queue = (notice: BackgroundNotice) => {
    notices.push(notice);
    tellNoticeListeners(listeners, notice);
  };

  const armNotice = (session: CommandSession) => {
    session.notify = true;
    session.done.then((status) => {
      if (!session.notify || disposed) return;
      session.notify = false;
      queue(exitNotice(session, status));
    });
  };

  const startSweep = () => {
    if (sweepTimer !== undefined || ttl <= 0 || interval <= 0) return;
    const timer = setInterval(() => void registry.sweep(), interval);
    Deno.unrefTimer(timer);
    sweepTimer = timer;
  };

  const evictOne = async () => {
    const victim = evictionVictim(sessions);
    if (!victim) return;
    sessions.delete(victim.id);
    if (victim.exit !== undefined) return;
    const armed = victim.notify;
    victim.notify = false;
    const status = await victim.kill();
    if (armed && !disposed) queue(evictedNotice(victim, status, maxSessions));
  };

  const registry: ProcessRegistry = {
    bufferLimit,
    maxSessions,
    get size() {
      return sessions.size;
    },
    get disposed() {
      return disposed;
    },
    get pendingNotices() {
      return notices.length;
    },
    newId: () => newProcessId((id) => sessions.has(id)),
    async register(session, { notify = false } = {}) {
      if (disposed) {
        session.notify = false;
        await session.kill();
        return false;
      }
      if (notify) armNotice(session);
      while (sessions.size >= maxSessions) await evictOne();
      if (disposed) {
        session.notify = false;
        await session.kill();
        return false;
      }
      session.lastUsed = now();
      sessions.set(session.id, session);
      startSweep();
      return true;
    },
    track(session) {
      inflight.add(session);
      return () => void inflight.delete(session);
    },
    get(id) {
      const s = sessions.get(id);
      if (s) s.lastUsed = now();
      return s;
    },
    ids: () => [...sessions.keys()],
    remove: (id) => sessions.delete(id),
    takeNotices: () => notices.splice(0, notices.length),
    onNotice(fn) {
      listeners.add(fn);
      return () => void listeners.delete(fn);
    },
    async sweep() {
      if (ttl <= 0) return [];
      const cutoff = now() - ttl;
      const stale = [...sessions.values()].filter((s) => s.lastUsed < cutoff);
      for (const s of stale) {
        sessions.delete(s.id);
        s.notify = false;
      }
      await Promise.all(stale.map((s) => s.kill()));
      return stale.map((s) => s.id);
    },
    async disposeAll() {
      disposed = true;
      if (sweepTimer !== undefined) clearInterval(sweepTimer);
      sweepTimer = undefined;
      const all = [...sessions.values(), ...inflight];
      sessions.clear();
      inflight.clear();
      for (const s of all) s.notify = false;
      await Promise.all(all.map((s) => s.kill()));
    },
  };
  return registry;
}
