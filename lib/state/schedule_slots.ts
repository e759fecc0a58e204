/**
 * The slots of a scheduled task, computed from the task and a clock (pure).
 *
 * A task's slots are `start_at + k·period` (k = 0, 1, …) that lie within
 * `[start_at, end_at]`; a task without a period has the single slot
 * `start_at`. A period is a fixed length (`1d` is 24 hours, also across a
 * daylight-saving change).
 *
 * Missed slots: only the latest slot at or before now is ever due. When
 * the scheduler was not running for a while, the slots it missed are not
 * replayed one by one; the latest of them fires once, however late.
 *
 * @module
 */
import type { ScheduledTask } from "./schedule.ts";

type Slots = Pick<ScheduledTask, "startAt" | "periodMs" | "endAt">;

/** The latest slot at or before `now`, or undefined when the first slot is still ahead. */
export function lastSlot(task: Slots, now: Date): Date | undefined {
  const start = task.startAt.getTime();
  const t = now.getTime();
  if (t < start) return undefined;
  const limit = task.endAt !== undefined ? Math.min(t, task.endAt.getTime()) : t;
  if (task.periodMs === undefined) return new Date(start);
  const k = Math.floor((limit - start) / task.periodMs);
  return new Date(start + k * task.periodMs);
}

/** The first slot strictly after `now`, or undefined when there is none (one-shot done, past `end_at`). */
export function nextSlot(task: Slots, now: Date): Date | undefined {
  const start = task.startAt.getTime();
  const t = now.getTime();
  if (t < start) return new Date(start);
  if (task.periodMs === undefined) return undefined;
  const next = start + (Math.floor((t - start) / task.periodMs) + 1) * task.periodMs;
  if (task.endAt !== undefined && next > task.endAt.getTime()) return undefined;
  return new Date(next);
}

/**
 * The slot of `task` due at `now`: its latest slot at or before now, when
 * the task is enabled and that slot has not fired yet; else undefined.
 */
export function dueSlot(
  task: Slots & Pick<ScheduledTask, "enabled">,
  now: Date,
  hasFired: (slot: Date) => boolean,
): Date | undefined {
  if (!task.enabled) return undefined;
  const slot = lastSlot(task, now);
  return slot !== undefined && !hasFired(slot) ? slot : undefined;
}
