/**
 * The one line `sessions import` prints per foreign session: its messages
 * and tool calls, and either "everything the model saw was imported" or
 * what the model saw that was not. Records the model never saw (a UI
 * event, a duplicate, a title, the harness's bookkeeping) are left out of
 * the line; the full loss report is under `--verbose` and in `--json`.
 *
 * @module
 */
import type { LossEntry } from "./import_report.ts";

// Reasons that say the record was never part of the model's context.
// "… is kept": the model's own view of it was imported, only details around it were not.
const UNSEEN = new RegExp(
  [
    "\\bUI\\b",
    "duplicate",
    "bookkeeping",
    "tree view",
    "session list",
    "display name",
    "system note",
    "undo",
    "identifies the session",
    "prompt queue",
    "sidechain",
    "file-history",
    "is kept",
    "per-turn settings",
    "belong to the child",
  ].join("|"),
  "i",
);

/** True when the model saw what `entry` left out (a context item with no penguin counterpart, say). */
export function modelSaw(entry: LossEntry): boolean {
  return !UNSEEN.test(entry.reason) && !UNSEEN.test(entry.kind);
}

/** `everything the model saw was imported`, or `not imported: <kind> ×n, …`. */
export function lossSummary(loss: readonly LossEntry[]): string {
  const seen = loss.filter(modelSaw);
  if (seen.length === 0) return "everything the model saw was imported";
  return `not imported: ${seen.map((l) => `${l.kind} ×${l.count}`).join(", ")} (--verbose for why)`;
}
