/**
 * Helpers shared by the `penguin trace …` inspect commands.
 *
 * @module
 */
import { PenguinError } from "../../protocol/errors.ts";
import { resolveTargets, type SessionFiles } from "../../inspect/targets.ts";
import type { CommandContext } from "../command.ts";

/** The text every inspect command's help ends with: what a target is. */
export const TARGET_HELP = `A target is a trace file, a directory (searched recursively for *.jsonl;
inside a data root only agents/*/traces is searched), or a session looked up
in the data root (--root, else $PENGUIN_HOME, else ~/.penguin/data, every
project and agent): its id, a unique part of it (its start, its end, or the
start of its 8 hex digits; several matches are an error that lists them), or
"latest" (the most recent session with records, subagent sessions skipped).
Files are grouped into sessions by name (<session>_<NNN>.jsonl) or by their
session_meta. Paths need no data root. Traces are only read, no config is
needed and nothing goes over the network.`;

/** The same, for commands that take exactly one session. */
export const SESSION_TARGET_HELP =
  `A session is a trace file, or a session looked up in the data root (--root,
else $PENGUIN_HOME, else ~/.penguin/data, every project and agent): its id, a
unique part of it (its start, its end, or the start of its 8 hex digits;
several matches are an error that lists them), or "latest" (the most recent
session with records, subagent sessions skipped). A session means all its
files, in index order.`;

/** The targets of `trace show`, `trace stats` and `trace export`: those given, else `latest`. */
export function targetsOrLatest(targets: string[]): string[] {
  return targets.length > 0 ? targets : ["latest"];
}

/** Resolve `targets` for `command`; a target that matches nothing is an error. */
export async function sessionsOf(
  command: string,
  targets: string[],
  ctx: CommandContext,
): Promise<SessionFiles[]> {
  if (targets.length === 0) {
    throw new PenguinError("usage", `${command}: give a trace file, directory or session id`);
  }
  const sessions = await resolveTargets(targets, { root: ctx.root });
  if (sessions.length === 0) {
    throw new PenguinError(
      "not_found",
      `${command}: no trace files found in ${targets.map((t) => JSON.stringify(t)).join(", ")}`,
    );
  }
  return sessions;
}

/**
 * Run `fn`; a closed stdout (e.g. piped into `head`) ends the command
 * quietly with exit code 0.
 */
export async function untilPipeCloses(fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof Deno.errors.BrokenPipe) return 0;
    throw err;
  }
}
