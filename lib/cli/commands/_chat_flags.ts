/**
 * The flags and help of `penguin chat`.
 *
 * @module
 */
import type { CommandPolicyRule } from "../../state/command_policy_defaults.ts";
import { PenguinError } from "../../protocol/errors.ts";
import type { ThinkingLevel } from "../../models/wire.ts";
import { AGENT_THINKING_LEVELS } from "../../state/system_config.ts";
import { parseSandboxMode, type SandboxMode } from "../../sandbox/policy.ts";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../state/ids.ts";
import { type ApprovalMode, parseApprovalMode, type SessionOptions } from "../../agent/mod.ts";
import { bool, type FlagSpec, parseFlags, str } from "../args.ts";

/** The help text of `penguin chat`. */
export const CHAT_HELP = `Usage: penguin chat [flags]

Talk with an agent. Each message you enter is one task: the agent works on it
(streaming its thinking, tool calls and their output) until it answers.
End a line with \\ to continue the message on the next line; a multi-line
paste is one message. Typing while a task runs steers it (delivered with the
next turn). With stdin not a terminal, each line is one task until EOF.

Commands: /compact, /clear (fresh session, same workspace and model; prints
the old and the new session id), /model <provider> <model-id> (fresh session
on another model; its first message tells the model where the previous
session is), /thinking [level], /verbose (toggle full tool output), /exit,
/quit.

Keys: Enter sends; Alt-Enter or Ctrl-J inserts a newline, and so does Enter
after a trailing \\; Up/Down recall earlier messages (kept per agent in its
agent_state/chat_history); Escape interrupts a running task.
Ctrl-C: denies a pending approval, interrupts a running task, clears the
input, or asks whether to exit (a second Ctrl-C exits).

Approvals ("? Approve this tool call? [Y/n] "): y, yes or Enter allows, n or
no denies, anything else asks again. They are answered on the terminal, also
when the messages are piped in (piped lines are always tasks). Without a
terminal, always-ask is a usage error and read-only denies the tools that may
change things. Every denial says why, on screen and to the model.

Flags:
  --provider <group>    provider group; always with --model-id
  --model-id <id>       model id; always with --provider (default: the
                        project's default model)
  --project-id <id>     project (default: ${DEFAULT_PROJECT_ID})
  --agent-id <id>       agent (default: ${DEFAULT_AGENT_ID})
  --workspace <path>    workspace directory; must exist (default: the current
                        directory)
  --approve <mode>      allow-all (default), deny-all, read-only, always-ask
  --thinking <level>    none, low, medium, high, xhigh or max (as for run)
  --sandbox <mode>      workspace-write (default), read-only, off
  --network on|off      let commands use the network (default: off)
  --grant-writable-roots
                        let penguin.jsonc add writable roots outside the workspace
  --git-writable        let commands commit: open the workspace's .git object and
                        ref stores (config, hooks and redirections stay
                        read-only; default: .git is read-only)
  --max-turns <n>       stop a task after n model requests (default: the
                        agent's max_turns; 0 or less: unlimited)
  --verbose             show long tool outputs in full (default: collapsed)
  --resume [session]    continue a session: id, unique part of an id, trace path,
                        or latest (the latest one without a value); with
                        --workspace, continue one whose recorded workspace is
                        gone in that directory (recorded in the trace)

Workspace policy: a penguin.jsonc at the workspace root can narrow these
flags (sandbox read-only, network off, stricter approval, extra command
rules) but never widen them; writable roots outside the workspace need
--grant-writable-roots. Its "git" setting decides over --git-writable.

On exit it prints the command that continues the conversation.
`;

const FLAGS: FlagSpec = {
  "provider": { type: "string" },
  "model-id": { type: "string" },
  "project-id": { type: "string" },
  "agent-id": { type: "string" },
  "workspace": { type: "string" },
  "approve": { type: "string" },
  "grant-writable-roots": { type: "boolean" },
  "git-writable": { type: "boolean" },
  "thinking": { type: "string" },
  "sandbox": { type: "string" },
  "network": { type: "string" },
  "max-turns": { type: "string" },
  "verbose": { type: "boolean" },
  "resume": { type: "string" },
};

/** Thinking levels a user may choose: the same as `penguin run` (and an agent's config). */
export const CHAT_THINKING_LEVELS: readonly ThinkingLevel[] = AGENT_THINKING_LEVELS;

/** Parse a thinking level or throw a usage error naming `flag`. */
export function parseThinking(value: string, flag: string): ThinkingLevel {
  const v = value.trim().toLowerCase();
  if ((CHAT_THINKING_LEVELS as readonly string[]).includes(v)) return v as ThinkingLevel;
  throw new PenguinError(
    "usage",
    `${flag} must be one of ${CHAT_THINKING_LEVELS.join(", ")}, got ${JSON.stringify(value)}`,
  );
}

/** Parsed `penguin chat` flags. */
export interface ChatOptions {
  /** `--project-id`. */
  projectId?: string;
  /** `--agent-id`. */
  agentId?: string;
  /** Options of every session the chat creates (workspace, model pair, sandbox…). */
  session: SessionOptions;
  /** `--approve`. */
  approve: ApprovalMode;
  /** `--thinking`: the initial per-run level. */
  thinking?: ThinkingLevel;
  /** `--verbose`: start with collapsing off. */
  verbose: boolean;
  /** Session id to resume; "" = the latest. */
  resume?: string;
  /** `--workspace` with `--resume`: where to continue when the recorded workspace is gone. */
  resumeWorkspace?: string;
  /** `--grant-writable-roots`: let penguin.jsonc add writable roots outside the workspace. */
  grantWritableRoots: boolean;
  /** Command rules added by the workspace's penguin.jsonc (filled in once it is read). */
  commandRules?: CommandPolicyRule[];
}

/** `--resume` takes an optional value: give the bare flag an empty one. */
function normalizeResume(args: string[]): string[] {
  return args.map((a, i) => {
    if (a !== "--resume") return a;
    const next = args[i + 1];
    return next === undefined || next.startsWith("-") ? "--resume=" : a;
  });
}

/** Parse and validate the arguments of `penguin chat`. */
export function parseChatFlags(args: string[]): ChatOptions {
  const p = parseFlags("chat", normalizeResume(args), FLAGS, 0);
  const provider = str(p, "provider");
  const modelId = str(p, "model-id");
  if ((provider === undefined) !== (modelId === undefined)) {
    throw new PenguinError(
      "usage",
      "chat: --model-id and --provider must be given together: a model is always named by the pair",
    );
  }
  const resume = str(p, "resume");
  const workspace = str(p, "workspace");
  if (resume !== undefined && provider !== undefined) {
    throw new PenguinError(
      "usage",
      "chat: --resume continues a session with its recorded model; drop --model-id and --provider",
    );
  }
  const thinkingFlag = str(p, "thinking");
  const thinking = thinkingFlag === undefined
    ? undefined
    : parseThinking(thinkingFlag, "chat: --thinking");
  const sandboxFlag = str(p, "sandbox");
  const sandbox: SandboxMode | undefined = sandboxFlag === undefined
    ? undefined
    : parseSandboxMode(sandboxFlag, "chat: --sandbox");
  const maxRaw = str(p, "max-turns");
  if (maxRaw !== undefined && !/^-?\d+$/.test(maxRaw)) {
    throw new PenguinError(
      "usage",
      `chat: --max-turns must be an integer (0 or less: unlimited), got ${JSON.stringify(maxRaw)}`,
    );
  }
  const network = str(p, "network") ?? "off";
  if (network !== "on" && network !== "off") {
    throw new PenguinError(
      "usage",
      `chat: --network must be on or off, got ${JSON.stringify(network)}`,
    );
  }
  const session: SessionOptions = { workspaceDir: workspace ?? Deno.cwd() };
  if (provider !== undefined && modelId !== undefined) {
    session.provider = provider;
    session.modelId = modelId;
  }
  if (thinking !== undefined) session.thinkingLevel = thinking;
  if (sandbox !== undefined) session.sandbox = sandbox;
  if (network === "on") session.network = true;
  if (bool(p, "git-writable")) session.git = "writable";
  if (maxRaw !== undefined) session.maxTurns = Number(maxRaw);
  const opts: ChatOptions = {
    session,
    approve: parseApprovalMode(str(p, "approve") ?? "allow-all", "chat: --approve"),
    verbose: bool(p, "verbose"),
    grantWritableRoots: bool(p, "grant-writable-roots"),
  };
  const projectId = str(p, "project-id");
  const agentId = str(p, "agent-id");
  if (projectId !== undefined) opts.projectId = projectId;
  if (agentId !== undefined) opts.agentId = agentId;
  if (thinking !== undefined) opts.thinking = thinking;
  if (resume !== undefined) opts.resume = resume;
  if (resume !== undefined && workspace !== undefined) opts.resumeWorkspace = workspace;
  return opts;
}
