/**
 * The flags of `penguin run`: the shared session flags and its own, declared
 * once, with the help text generated from them.
 *
 * @module
 */
import { PenguinError } from "../../protocol/errors.ts";
import { bool, type Flag, flagHelp, flagValue, parseDeclared } from "../args.ts";
import { POLICY_FILE_HELP } from "./_workspace_policy.ts";
import { BUDGET, GOAL, MAX_ROUNDS } from "./_goal_flags.ts";
import { DEFAULT_BUDGET, DEFAULT_MAX_ROUNDS } from "../../agent/goal_limits.ts";
import { formatTokens } from "../../display/numbers.ts";
import {
  checkWorkspace,
  SESSION_FLAGS,
  type SessionFlags,
  sessionFlags,
} from "./_session_flags.ts";

const MESSAGE: Flag = {
  name: "message",
  short: "m",
  type: "string",
  value: "<text>",
  help:
    'the task; "-" reads it from stdin (required, except to continue\na goal: --resume with --goal)',
};
const RESUME: Flag = {
  name: "resume",
  type: "string",
  value: "<session>",
  help: "continue a session: id, unique part of an id, trace path, or latest",
};
const SKILL: Flag = {
  name: "skill",
  type: "string",
  value: "<name>",
  multiple: true,
  help: "ask the model to use this installed skill (repeatable;\nsee penguin skills)",
};
const JSON_FLAG: Flag<boolean> = {
  name: "json",
  type: "boolean",
  help: "print the OmniMessage stream as JSONL on stdout, nothing else;\n" +
    "the first record is the session_meta (the session id)",
};

/** The flags of `penguin run`, in help order. */
export const RUN_FLAGS: readonly Flag<unknown>[] = [
  MESSAGE,
  RESUME,
  ...SESSION_FLAGS,
  SKILL,
  GOAL,
  BUDGET,
  MAX_ROUNDS,
  JSON_FLAG,
];

/** The help text of `penguin run`. */
export const HELP = `Usage: penguin run -m <message> [flags]
       penguin run --resume <session> -m <message> [flags]
       penguin run --goal -m <objective> [--budget <tokens>] [--max-rounds <n>] [flags]

Run one agent task in a workspace: the model works with the tools until a
turn calls no tool, max turns, or an abort (Ctrl-C / SIGTERM). Every step is
recorded in the session's trace.

With --resume, the task continues a recorded session (an id, a unique part of
one, the path of one of its trace files, or "latest"): same workspace, model
and system prompt, the committed history as context, appending to the same
trace. Its model
pair must still be configured, unless --provider and --model-id name another
configured pair to continue on (an explicit switch, e.g. for a session
imported from another harness): a model_switched event in the trace records
it, later resumes continue on the last pair recorded, and trace stats
credits each pair with its own tokens.
--workspace continues a session whose recorded workspace no longer exists in
another directory (the move is recorded in the trace and told to the model);
while the recorded workspace exists, only that directory is accepted. The
first resume of an imported session (sessions import) works in the current
directory, or --workspace, with a note; later resumes stay there.

Goal mode (--goal): the objective is written to GOAL.yaml in the session's
scratchpad with status active, and the model works in rounds, each one task
opened by a [goal] block (the round, the goal file, the budget, the rounds
left). It sets the status to complete or blocked with its file tools or a
command; penguin reads the file after every round, and when a round ends with
a final answer but the status still active, the next block says so. A goal is
bounded by default: at most ${DEFAULT_MAX_ROUNDS} rounds per run (--max-rounds) and a budget of
${
  formatTokens(DEFAULT_BUDGET)
} tokens (--budget; --budget none for unbounded), both shown on its first
line. The goal ends complete, blocked, budget_limited (after one wrap-up round
once the budget is spent) or aborted (the round cap, Ctrl-C, a failed round or
max turns); its last line names which, and a goal_finished event with the
outcome, the rounds and the tokens used ends the trace's goal. --resume
<session> --goal without -m continues that session's unfinished goal (its
rounds and tokens so far count); with -m it starts a new goal in that session.

Flags:
${flagHelp(RUN_FLAGS, 28)}

${POLICY_FILE_HELP}

Output: the model's text (Markdown rendered on a colour terminal, raw under
NO_COLOR or into a pipe), tool calls and their output (long outputs collapsed
unless --verbose), a line for each prompt answered, denial or policy verdict,
and a closing "[stats] N turns · in … · out … · time · $cost" line (the cost
when the model has a price). On a terminal, "waiting for <provider>/<model>…"
shows until the model's first token.

Approval prompts ("? Approve this tool call? [Y/a/n] ") are answered on the
terminal, never by piped input, after what the call will do is shown (the
command, the content to write, the edit's diff; secrets masked): y, yes or
Enter allows; a allows it and, for the rest of the run, the same command
prefix or the same tool on the same path; n or no denies, then asks for an
optional note sent to the model; Escape (then Enter) or Ctrl-C stops the
task (exit 1, the session resumable); anything else asks again. A call whose
arguments do not validate is never asked about. Without a terminal, always-ask is a
usage error and read-only denies the tools that may change things. Every
denial says why, on screen and in the output the model reads. Destructive
commands are refused by the project's command policy under every mode.

Exit status: 0 the task completed (a goal: only when its outcome is
complete), 1 it was aborted, failed or hit max turns (a goal: blocked,
budget_limited or aborted), 2 usage or config error.

Example:
  penguin run -m "Add a README with build instructions" --approve read-only
`;

/** The validated flags of one `penguin run`. */
export interface RunFlags extends SessionFlags {
  /** The task; undefined only when continuing a goal (`--resume --goal` without `-m`). */
  message?: string;
  /** The message was read from stdin (`-m -`), so prompts find it at its end. */
  messageFromStdin: boolean;
  /** `--skill` names, in order (checked against the agent's skills when the session opens). */
  skills: string[];
  json: boolean;
  /** `--goal`: goal mode. */
  goal: boolean;
  /** `--budget`: the goal's token budget (null: `none`, unbounded). */
  budget?: number | null;
  /** `--max-rounds`: the goal's round cap. */
  maxRounds?: number;
}

async function readAllStdin(): Promise<string> {
  return (await new Response(Deno.stdin.readable).text()).replace(/\r?\n$/, "");
}

/** Parse and validate the flags of `penguin run` (`-m -` reads the message from stdin). */
export async function parse(args: string[]): Promise<RunFlags> {
  const p = parseDeclared("run", args, RUN_FLAGS, 0);
  const given = flagValue(p, MESSAGE);
  const session = sessionFlags("run", p);
  const goalValue = flagValue(p, GOAL);
  const goal = goalValue !== undefined;
  if (typeof goalValue === "number" && flagValue(p, BUDGET) !== undefined) {
    throw new PenguinError("usage", "run: give the budget once: --goal <budget> or --budget");
  }
  const budget = typeof goalValue === "number" ? goalValue : flagValue(p, BUDGET);
  const maxRounds = flagValue(p, MAX_ROUNDS);
  if (!goal && (budget !== undefined || maxRounds !== undefined)) {
    throw new PenguinError(
      "usage",
      `run: --${budget !== undefined ? BUDGET.name : MAX_ROUNDS.name} needs --goal`,
    );
  }
  if (given === undefined && !(goal && session.resume !== undefined)) {
    throw new PenguinError(
      "usage",
      goal
        ? "run: --goal needs -m <objective> (or --resume <session> to continue its goal)"
        : "run: -m/--message is required",
    );
  }
  if (session.resume !== undefined && session.resume.trim() === "") {
    throw new PenguinError("usage", "run: --resume needs a session id, a trace path or latest");
  }
  await checkWorkspace("run", session);
  const message = given === undefined ? undefined : given === "-" ? await readAllStdin() : given;
  if (message !== undefined && message.trim() === "") {
    throw new PenguinError("usage", `run: the ${goal ? "objective" : "message"} is empty`);
  }
  const skills = (p.values[SKILL.name] as string[] | undefined) ?? [];
  return {
    ...session,
    ...(message !== undefined ? { message } : {}),
    messageFromStdin: given === "-",
    skills: [...new Set(skills)],
    json: bool(p, JSON_FLAG.name),
    goal,
    ...(budget !== undefined ? { budget } : {}),
    ...(maxRounds !== undefined ? { maxRounds } : {}),
  };
}
