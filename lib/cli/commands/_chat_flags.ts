/**
 * The flags and help of `penguin chat`: the shared session flags and its
 * optional-value `--resume`, declared once.
 *
 * @module
 */
import type { ThinkingLevel } from "../../models/wire.ts";
import { AGENT_THINKING_LEVELS } from "../../state/system_config.ts";
import type { SessionOptions } from "../../agent/mod.ts";
import { type Flag, flagHelp, parseDeclared } from "../args.ts";
import { PenguinError } from "../../protocol/errors.ts";
import { POLICY_FILE_HELP } from "./_workspace_policy.ts";
import { SESSION_FLAGS, type SessionFlags, sessionFlags } from "./_session_flags.ts";

export { parseThinking } from "./_session_flags.ts";

const RESUME: Flag = {
  name: "resume",
  type: "string",
  value: "[session]",
  optionalValue: true,
  help: "continue a session: id, unique part of an id, trace path,\n" +
    "or latest (this workspace's latest); without a value, pick\n" +
    "one of this workspace's sessions from a list (a terminal\n" +
    "only; --all: every workspace's); with\n" +
    "--workspace, continue one whose recorded workspace is\n" +
    "gone in that directory (recorded in the trace; the first\n" +
    "resume of an imported session: the current directory, or\n" +
    "--workspace); with\n" +
    "--provider and --model-id, continue it on that pair\n" +
    "(recorded in the trace as a model_switched event)",
};

const ALL: Flag = {
  name: "all",
  type: "boolean",
  help: "with --resume and no id: pick from every workspace's sessions",
};

/** The flags of `penguin chat`, in help order. */
export const CHAT_FLAGS: readonly Flag<unknown>[] = [...SESSION_FLAGS, RESUME, ALL];

/** The help text of `penguin chat`. */
export const CHAT_HELP = `Usage: penguin chat [flags]

Talk with an agent. Each message you enter is one task: the agent works on it
(streaming its thinking, tool calls and their output) until it answers.
End a line with \\ to continue the message on the next line; a multi-line
paste is one message. Typing while a task runs steers it (delivered with the
next turn). With stdin not a terminal, each line is one task until EOF.

Commands (/help lists them; Tab completes them): /help, /status (model,
workspace, session, tokens, cost, context use), /cost (the session's cost so
far), /expand [#n] (show a collapsed tool output whole: the latest, or
call [#n]'s), /compact, /clear (fresh session, same workspace and model; prints the
old and the new session id), /resume [<session>|--all] (continue another
session: by id, or picked from this workspace's sessions as with --resume),
/model <provider> <model-id> (the session goes
on with another configured model, keeping the conversation; recorded as a
model_switched event; /model alone lists the configured models),
/goal[:<budget>] <objective> (goal mode in this session, as
penguin run --goal: rounds until the model marks GOAL.yaml complete or
blocked, the budget (default 500k; /goal:200k, /goal:none) is spent, or 10
rounds; /goal alone continues the session's unfinished goal), /skill
<name>[,<name>…] [message] (ask the model to use installed skills: a
[use_skills] block opens the message, or the next one), /thinking [level],
/verbose (toggle full tool output), /exit, /quit.

Keys: Enter sends; Alt-Enter or Ctrl-J inserts a newline, and so does Enter
after a trailing \\; Up/Down recall earlier messages (kept per agent in its
agent_state/chat_history); Escape interrupts a running task.
Ctrl-C: stops the task at a pending approval, interrupts a running task,
clears the input, or asks whether to exit (a second Ctrl-C exits).

Approvals ("? Approve this tool call? [Y/a/n] ") show first what the call
will do (the command, the content to write, the edit's diff; secrets
masked). y, yes or Enter allows; a allows it and, for the rest of the
session, the same command prefix or the same tool on the same path (said on
screen); n or no denies, then asks for an optional note sent to the model;
Escape or Ctrl-C stops the task; anything else asks again. A call whose
arguments do not validate is never asked about. They are answered on the terminal, also
when the messages are piped in (piped lines are always tasks). Without a
terminal, always-ask is a usage error and read-only denies the tools that may
change things. Every denial says why, on screen and to the model.

Flags:
${flagHelp(CHAT_FLAGS, 24)}

${POLICY_FILE_HELP}

On exit it prints the command that continues the conversation.
`;

/** Thinking levels a user may choose: the same as `penguin run` (and an agent's config). */
export const CHAT_THINKING_LEVELS: readonly ThinkingLevel[] = AGENT_THINKING_LEVELS;

/** Parsed `penguin chat` flags. */
export interface ChatOptions {
  /** The session flags (narrowed by penguin.jsonc once it is read). */
  flags: SessionFlags;
  /** `--project-id`. */
  projectId?: string;
  /** `--agent-id`. */
  agentId?: string;
  /** Options of every session the chat creates (workspace, model pair, sandbox…). */
  session: SessionOptions;
  /** `--thinking`: the initial per-run level. */
  thinking?: ThinkingLevel;
  /** `--verbose`: start with collapsing off. */
  verbose: boolean;
  /** Session id to resume; "" = pick one (on a terminal). */
  resume?: string;
  /** `--all`: the picker lists every workspace's sessions. */
  all: boolean;
  /** `--workspace` with `--resume`: where to continue when the recorded workspace is gone. */
  resumeWorkspace?: string;
}

/** Parse and validate the arguments of `penguin chat`. */
export function parseChatFlags(args: string[]): ChatOptions {
  const parsed = parseDeclared("chat", args, CHAT_FLAGS, 0);
  const f = sessionFlags("chat", parsed);
  const session: SessionOptions = { workspaceDir: f.workspace };
  if (f.provider !== undefined && f.modelId !== undefined) {
    session.provider = f.provider;
    session.modelId = f.modelId;
  }
  if (f.thinking !== undefined) session.thinkingLevel = f.thinking;
  if (f.maxTurns !== undefined) session.maxTurns = f.maxTurns;
  if (f.gitWritable) session.git = "writable";
  const all = parsed.values["all"] === true;
  if (all && f.resume !== "") {
    throw new PenguinError(
      "usage",
      "chat: --all goes with --resume and no id (it widens the picker)",
    );
  }
  const opts: ChatOptions = { flags: f, session, verbose: f.verbose, all };
  if (f.projectId !== undefined) opts.projectId = f.projectId;
  if (f.agentId !== undefined) opts.agentId = f.agentId;
  if (f.thinking !== undefined) opts.thinking = f.thinking;
  if (f.resume !== undefined) opts.resume = f.resume;
  if (f.resumeWorkspace !== undefined) opts.resumeWorkspace = f.resumeWorkspace;
  return opts;
}
