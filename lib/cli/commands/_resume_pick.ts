/**
 * `penguin chat --resume` without an id, and `/resume` in a chat: pick the
 * session to continue from this workspace's sessions (`--all`: every
 * workspace's), newest first, with the picker of `_session_picker.ts`.
 * Without a terminal there is nothing to pick with: the caller says to give
 * an id.
 *
 * @module
 */
import type { Agent } from "../../agent/mod.ts";
import { PenguinError } from "../../protocol/errors.ts";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../state/ids.ts";
import { listSessions } from "../../session/list.ts";
import { realDir, selectSessions } from "../../session/select.ts";
import { type PickerIo, type PickerRow, runPicker } from "../_session_picker.ts";

/** The line a picker on a non-terminal gets instead. */
export const NO_PICKER_TERMINAL =
  "chat: --resume without an id picks from a list, which needs a terminal: give a session id " +
  "(penguin sessions list lists them) or --resume latest";

/**
 * The sessions the picker offers: this workspace's user sessions (`all`:
 * every workspace's), their titles and workspaces masked with the secrets
 * known now, as `sessions list` shows them; `warn` gets a line for each
 * agent whose secrets could not be read.
 */
export async function resumeCandidates(
  agent: Agent,
  all: boolean,
  cwd: string = Deno.cwd(),
  warn: (line: string) => void = () => {},
): Promise<PickerRow[]> {
  const rows = await listSessions(agent.ref);
  const { rows: kept } = await selectSessions(rows, all ? {} : { workspace: cwd });
  if (kept.length > 0) {
    // Loaded when used, as the views' mask: no part of chat's startup without a picker.
    const { displayMaskValue } = await import("../../agent/display_mask.ts");
    const root = { ...agent.ref, projectId: DEFAULT_PROJECT_ID, agentId: DEFAULT_AGENT_ID };
    const masked = await displayMaskValue(kept, kept.map((r) => r.latestPath), [root, agent.ref]);
    for (const p of masked.problems) warn(`chat: ${p}`);
    return masked.value;
  }
  throw new PenguinError(
    "not_found",
    all
      ? "chat: no session to resume: none is recorded for this agent"
      : `chat: no session to resume in this workspace (${await realDir(cwd)}): ` +
        `give a session id, or --all to pick from every workspace's sessions`,
  );
}

/** Options of {@linkcode pickResume}. */
export interface PickResumeOptions {
  /** Every workspace's sessions. */
  all: boolean;
  /** Terminal width. */
  columns: number;
  /** Reverse video for the selection. */
  color: boolean;
  /** The directory whose workspace is "this workspace". */
  cwd?: string;
  /** Where a secret that could not be read for masking is said. */
  warn?: (line: string) => void;
}

/** Let the person pick a session to resume; null when they cancelled. */
export async function pickResume(
  agent: Agent,
  opts: PickResumeOptions,
  io: PickerIo,
): Promise<string | null> {
  const cwd = opts.cwd ?? Deno.cwd();
  const rows = await resumeCandidates(agent, opts.all, cwd, opts.warn);
  const title = opts.all
    ? "Resume a session (every workspace):"
    : `Resume a session of ${await realDir(cwd)}:`;
  return await runPicker(
    rows,
    { title, columns: opts.columns, color: opts.color, workspaces: opts.all },
    io,
  );
}
