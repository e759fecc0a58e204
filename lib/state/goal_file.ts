/**
 * `scratchpad/<sessionId>/GOAL.yaml`: the objective of a goal run and its
 * status. penguin writes `objective` and `status: active` when a goal
 * starts; the model changes `status` to `complete` or `blocked` with its
 * file tools or its commands, and penguin reads it back after every round.
 *
 * @module
 */
import { join } from "node:path";
import { stringify } from "yaml";
import { parseYaml, YAML_CONFIG_MAX_NODES } from "./bounded_yaml.ts";
import { errorMessage } from "../protocol/errors.ts";
import { readUntrustedFile, replaceUntrustedFile } from "./untrusted_file.ts";

/** The file name inside the session scratchpad. */
export const GOAL_FILE = "GOAL.yaml";

/** The statuses the model may set (`active` is penguin's starting value). */
export type GoalStatus = "active" | "complete" | "blocked";

/** What a goal file says, or why it could not be read. */
export type GoalFileState =
  | { ok: true; objective: string; status: GoalStatus }
  | { ok: false; problem: string };

/** `<scratchpad>/GOAL.yaml`. */
export function goalFilePath(scratchpad: string): string {
  return join(scratchpad, GOAL_FILE);
}

/** The YAML text of a goal file: `objective: …` then `status: …`. */
export function goalFileText(objective: string, status: GoalStatus = "active"): string {
  return stringify({ objective, status }, { lineWidth: 0 });
}

/**
 * Write `<scratchpad>/GOAL.yaml` (the directory is created when missing).
 * The model can write the scratchpad, so the name is replaced, never
 * written through: a link planted there is not followed.
 */
export async function writeGoalFile(
  scratchpad: string,
  objective: string,
  status: GoalStatus = "active",
): Promise<string> {
  await Deno.mkdir(scratchpad, { recursive: true, mode: 0o700 });
  await replaceUntrustedFile(scratchpad, GOAL_FILE, goalFileText(objective, status));
  return goalFilePath(scratchpad);
}

/** A problem's quote of what the model wrote, as given (no masking). */
const asGiven = (s: string) => s;

/**
 * Interpret the text of a goal file; an unknown status or a missing field is
 * a problem. `mask` is applied to the status a problem quotes before it is
 * JSON-quoted: a secret holding `"` or `\` is then found whole, not through
 * its escapes.
 */
export function parseGoalFile(text: string, mask: (s: string) => string = asGiven): GoalFileState {
  let doc: unknown;
  try {
    doc = parseYaml(text, GOAL_FILE, YAML_CONFIG_MAX_NODES);
  } catch (err) {
    return { ok: false, problem: `it is not valid YAML: ${errorMessage(err)}` };
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    return { ok: false, problem: "it is not a mapping with objective and status" };
  }
  const { objective, status } = doc as Record<string, unknown>;
  if (typeof objective !== "string") return { ok: false, problem: "objective is missing" };
  const s = typeof status === "string" ? status.trim().toLowerCase() : status;
  if (s !== "active" && s !== "complete" && s !== "blocked") {
    return {
      ok: false,
      problem: `status is ${
        JSON.stringify(typeof status === "string" ? mask(status) : status)
      }, not one of active, complete, blocked`,
    };
  }
  return { ok: true, objective, status: s };
}

/**
 * Read `<scratchpad>/GOAL.yaml`; a missing or unreadable file is a problem,
 * never a throw. The model can write the scratchpad: a symbolic link, a
 * hard link or anything but a regular file is refused, so a link to a
 * secret never brings the secret into the next round's prompt. `mask` is
 * for the status a problem quotes (see {@linkcode parseGoalFile}).
 */
export async function readGoalFile(
  scratchpad: string,
  mask: (s: string) => string = asGiven,
): Promise<GoalFileState> {
  const path = goalFilePath(scratchpad);
  try {
    const read = await readUntrustedFile(scratchpad, GOAL_FILE, 1024 * 1024);
    if (!read.ok) {
      return { ok: false, problem: read.missing ? `${path} does not exist` : read.message };
    }
    if (read.truncated) return { ok: false, problem: `${path} is larger than 1 MiB` };
    return parseGoalFile(read.text, mask);
  } catch (err) {
    return { ok: false, problem: `${path} cannot be read: ${errorMessage(err)}` };
  }
}
