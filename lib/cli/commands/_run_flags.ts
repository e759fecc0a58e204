/**
 * The flags of `penguin run`: the shared session flags and its own, declared
 * once, with the help text generated from them.
 *
 * @module
 */
import { PenguinError } from "../../protocol/errors.ts";
import { bool, type Flag, flagHelp, flagValue, parseDeclared } from "../args.ts";
import { POLICY_FILE_HELP } from "./_workspace_policy.ts";
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
  help: 'the task; "-" reads it from stdin (required)',
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
  help: "ask the model to use this installed skill (repeatable; see penguin skills)",
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
  JSON_FLAG,
];

/** The help text of `penguin run`. */
export const HELP = `Usage: penguin run -m <message> [flags]
       penguin run --resume <session> -m <message> [flags]

Run one agent task in a workspace: the model works with the tools until a
turn calls no tool, max turns, or an abort (Ctrl-C / SIGTERM). Every step is
recorded in the session's trace.

With --resume, the task continues a recorded session (an id, a unique part of
one, the path of one of its trace files, or "latest"): same workspace, model and system prompt,
the committed history as context, appending to the same trace. Its model
pair must still be configured, unless --provider and --model-id name another
configured pair to continue on (an explicit switch, e.g. for a session
imported from another harness; the session_meta keeps the recorded pair).
--workspace continues a session whose recorded workspace no longer exists in
another directory (the move is recorded in the trace and told to the model);
while the recorded workspace exists, only that directory is accepted.

Flags:
${flagHelp(RUN_FLAGS, 28)}

${POLICY_FILE_HELP}

Output: the model's text (Markdown rendered on a colour terminal, raw under
NO_COLOR or into a pipe), tool calls and their output (long outputs collapsed
unless --verbose), a line for each prompt answered, denial or policy verdict,
and a closing "[stats] N turns · in … · out … · time · $cost" line (the cost
when the model has a price). On a terminal, "waiting for <provider>/<model>…"
shows until the model's first token.

Approval prompts ("? Approve this tool call? [Y/n] ") are answered on the
terminal, never by piped input: y, yes or Enter allows, n or no denies,
anything else asks again, Ctrl-C denies. Without a terminal, always-ask is a
usage error and read-only denies the tools that may change things. Every
denial says why, on screen and in the output the model reads. Destructive
commands are refused by the project's command policy under every mode.

Exit status: 0 the task completed, 1 it was aborted, failed or hit max turns,
2 usage or config error.

Example:
  penguin run -m "Add a README with build instructions" --approve read-only
`;

/** The validated flags of one `penguin run`. */
export interface RunFlags extends SessionFlags {
  message: string;
  /** The message was read from stdin (`-m -`), so prompts find it at its end. */
  messageFromStdin: boolean;
  /** `--skill` names, in order (checked against the agent's skills when the session opens). */
  skills: string[];
  json: boolean;
}

async function readAllStdin(): Promise<string> {
  return (await new Response(Deno.stdin.readable).text()).replace(/\r?\n$/, "");
}

/** Parse and validate the flags of `penguin run` (`-m -` reads the message from stdin). */
export async function parse(args: string[]): Promise<RunFlags> {
  const p = parseDeclared("run", args, RUN_FLAGS, 0);
  const given = flagValue(p, MESSAGE);
  if (given === undefined) throw new PenguinError("usage", "run: -m/--message is required");
  const session = sessionFlags("run", p);
  if (session.resume !== undefined && session.resume.trim() === "") {
    throw new PenguinError("usage", "run: --resume needs a session id, a trace path or latest");
  }
  await checkWorkspace("run", session);
  const message = given === "-" ? await readAllStdin() : given;
  if (message.trim() === "") throw new PenguinError("usage", "run: the message is empty");
  const skills = (p.values[SKILL.name] as string[] | undefined) ?? [];
  return {
    ...session,
    message,
    messageFromStdin: given === "-",
    skills: [...new Set(skills)],
    json: bool(p, JSON_FLAG.name),
  };
}
