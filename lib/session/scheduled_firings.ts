/**
 * Scheduled firings as the traces record them: the trace is the only
 * record of which slot of which task has fired.
 *
 * A firing sends one user text, with sender `server`, that opens with a
 * `[scheduled_task]` block naming the task and the slot:
 *
 * ```
 * [scheduled_task]
 * schedule: nightly
 * fired_at: 2026-12-02T05:00:00.000Z
 * [/scheduled_task]
 *
 * <the task's prompt>
 * ```
 *
 * `fired_at` is the instant of the slot that fired (a late firing still
 * names its slot; the message's own timestamp says when it was sent).
 * {@linkcode firedSlots} reads the block back from the trace files written
 * since a given instant, so a restarted scheduler never fires a slot twice.
 *
 * @module
 */
import { join } from "node:path";
import { parseJsonBounded } from "../protocol/bounded_json.ts";
import { readDirEntries } from "../trace/_fs.ts";
import { parseTraceFileName } from "../trace/paths.ts";

/** The marker tag of a scheduled firing. */
export const SCHEDULED_TASK_TAG = "scheduled_task";

/** The text of a firing: the `[scheduled_task]` block, a blank line, the prompt. */
export function scheduledTaskText(name: string, slot: Date, prompt: string): string {
  return `[${SCHEDULED_TASK_TAG}]\nschedule: ${name}\nfired_at: ${slot.toISOString()}\n` +
    `[/${SCHEDULED_TASK_TAG}]\n\n${prompt}`;
}

/** One recorded firing. */
export interface Firing {
  /** The task name. */
  schedule: string;
  /** The slot that fired. */
  slot: Date;
}

const BLOCK = new RegExp(
  String.raw`^\s*(?:\[${SCHEDULED_TASK_TAG}\]|<${SCHEDULED_TASK_TAG}>)\r?\n([\s\S]*?)\r?\n` +
    String.raw`(?:\[/${SCHEDULED_TASK_TAG}\]|</${SCHEDULED_TASK_TAG}>)`,
);

/** The firing a user text opens with (square or legacy `<scheduled_task>` form), or undefined. */
export function parseScheduledTaskText(text: string): Firing | undefined {
  const body = BLOCK.exec(text)?.[1];
  if (body === undefined) return undefined;
  const field = (key: string) =>
    new RegExp(String.raw`^\s*${key}:[ \t]*(.*?)\s*$`, "m").exec(body)?.[1];
  const schedule = field("schedule");
  const firedAt = field("fired_at");
  if (!schedule || !firedAt) return undefined;
  const slot = new Date(firedAt);
  return Number.isNaN(slot.getTime()) ? undefined : { schedule, slot };
}

/** The key of one slot of one task in {@linkcode firedSlots}' set. */
export function slotKey(schedule: string, slot: Date): string {
  return `${schedule}@${slot.toISOString()}`;
}

function firingOf(line: string): Firing | undefined {
  if (!line.includes(SCHEDULED_TASK_TAG)) return undefined;
  let rec: unknown;
  try {
    rec = parseJsonBounded(line, "a trace line");
  } catch {
    return undefined;
  }
  const r = rec as { type?: unknown; origin?: unknown; payload?: Record<string, unknown> };
  const p = r.payload;
  if (r.type !== "model_msg" || r.origin !== undefined || !p) return undefined;
  if (p.type !== "text" || p.role !== "user" || p.sender !== "server") return undefined;
  return typeof p.text === "string" ? parseScheduledTaskText(p.text) : undefined;
}

/**
 * The slots (keys of {@linkcode slotKey}) recorded as fired in the trace
 * files of `tracesDir`; with `since`, only in the files last written at or
 * after it (a firing of a slot is written after the slot's instant, so
 * every firing of a slot at or after `since` is still found). Unreadable
 * files and lines are skipped.
 */
export async function firedSlots(tracesDir: string, since?: Date): Promise<Set<string>> {
  const fired = new Set<string>();
  for (const dir of await readDirEntries(tracesDir)) {
    if (!dir.isDirectory || dir.name.startsWith(".")) continue;
    for (const f of await readDirEntries(join(tracesDir, dir.name))) {
      if (!f.isFile || parseTraceFileName(f.name) === null) continue;
      const path = join(tracesDir, dir.name, f.name);
      let text: string;
      try {
        const st = await Deno.stat(path);
        if (since && st.mtime !== null && st.mtime.getTime() < since.getTime()) continue;
        text = await Deno.readTextFile(path);
      } catch {
        continue;
      }
      if (!text.includes(SCHEDULED_TASK_TAG)) continue;
      for (const line of text.split("\n")) {
        const firing = firingOf(line);
        if (firing) fired.add(slotKey(firing.schedule, firing.slot));
      }
    }
  }
  return fired;
}
