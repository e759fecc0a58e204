/**
 * A session's background work as one registry view: the command sessions
 * of its process registry and the subagents of its children registry, with
 * their ids, state and undelivered output, and their notices drained as one
 * queue (commands first, then subagents and restored reports).
 *
 * @module
 */
import type { OmniMessage } from "../../protocol/types.ts";
import type { BackgroundNotice } from "../../tools/background_notice.ts";
import type { ProcessRegistry } from "../../tools/processes.ts";
import type { ChildRegistry } from "./registry.ts";

/** One piece of background work of a session. */
export interface BackgroundTask {
  /** `command` (an exec_command session) or `subagent`. */
  kind: "command" | "subagent";
  /** `proc-<8hex>` or `subagent-<8>`. */
  id: string;
  /**
   * Commands: `running` or `exited`. Subagents: `running`, `idle`, or
   * `interrupted` (restored from its trace after a restart, resumable).
   */
  state: "running" | "exited" | "idle" | "interrupted";
  /** First line of the command or the subagent's current prompt. */
  label: string;
  /** Output not delivered to the model yet, in characters. */
  unreadChars: number;
  /** Whether its end is reported as a `[background_task_done]` notice. */
  notify: boolean;
  /** A subagent's session id. */
  sessionId?: string;
  /** A subagent's tool calls waiting for approval. */
  pendingApprovals?: number;
}

/** Every registered command session and subagent of a session (listing does not touch LRU order of subagents). */
export function backgroundTasks(
  processes: ProcessRegistry,
  children: ChildRegistry,
): BackgroundTask[] {
  const out: BackgroundTask[] = [];
  for (const id of processes.ids()) {
    const s = processes.get(id);
    if (!s) continue;
    out.push({
      kind: "command",
      id,
      state: s.exit === undefined ? "running" : "exited",
      label: s.label,
      unreadChars: s.unread,
      notify: s.notify,
    });
  }
  for (const c of children.list()) {
    out.push({
      kind: "subagent",
      id: c.id,
      state: c.state,
      label: c.label,
      unreadChars: c.unreadChars,
      notify: c.background,
      sessionId: c.sessionId,
      pendingApprovals: c.pendingApprovals,
    });
  }
  return out;
}

/** Drain both notice queues: command notices first, then the children registry's. */
export function takeAllNotices(
  processes: ProcessRegistry,
  children: ChildRegistry,
): BackgroundNotice[] {
  return [...processes.takeNotices(), ...children.takeNotices()];
}

/** Subscribe `fn` to the notices of both registries; returns the unsubscribe. */
export function onAnyNotice(
  processes: ProcessRegistry,
  children: ChildRegistry,
  fn: (notice: BackgroundNotice) => void,
): () => void {
  const a = processes.onNotice(fn);
  const b = children.onNotice(fn);
  return () => {
    a();
    b();
  };
}

/**
 * The messages of `run`, merged with the origin-tagged messages background
 * children emit meanwhile (children followed by a tool call forward theirs
 * through that call instead): while a parent task runs, its whole family
 * streams through it. A child just launched in the background is held back
 * until its session_meta and prompt (forwarded by the launching call) have
 * gone by, so each child's messages stay in order. Returns what `run` returns.
 */
export async function* withBackgroundMessages<R>(
  run: AsyncGenerator<OmniMessage, R>,
  children: ChildRegistry,
): AsyncGenerator<OmniMessage, R> {
  const queue: OmniMessage[] = [];
  const held = new Map<string, OmniMessage[]>();
  let wake: (() => void) | undefined;
  const off = children.attachStream((m) => {
    const id = m.origin?.[0];
    if (id !== undefined && children.isExpected(id)) {
      const list = held.get(id) ?? [];
      list.push(m);
      held.set(id, list);
      return;
    }
    queue.push(m);
    wake?.();
  });
  /** After `m` went by: release the child it launched, if any. */
  const released = (m: OmniMessage) => {
    const id = m.origin?.length === 1 ? m.origin[0]! : undefined;
    const p = m.payload as { type: string; role?: string };
    if (id === undefined || !children.isExpected(id)) return;
    if (m.type !== "model_msg" || p.type !== "text" || p.role !== "user") return;
    children.announce(id);
    queue.unshift(...(held.get(id) ?? []));
    held.delete(id);
  };
  let done = false;
  let result!: R; // set when `run` is done, the only way out of the loop but a throw
  try {
    let pending = run.next();
    for (;;) {
      while (queue.length > 0) yield queue.shift()!;
      const woke = new Promise<"wake">((resolve) => (wake = () => resolve("wake")));
      const step = await Promise.race([pending, woke]);
      wake = undefined;
      if (step === "wake") continue;
      if (step.done) {
        result = step.value;
        break;
      }
      yield step.value;
      released(step.value);
      pending = run.next();
    }
    done = true;
  } finally {
    off();
    for (const list of held.values()) queue.push(...list);
    held.clear();
    children.announce();
    const stopped: AsyncGenerator<OmniMessage, unknown> = run;
    if (!done) await stopped.return(undefined);
  }
  while (queue.length > 0) yield queue.shift()!;
  return result;
}
