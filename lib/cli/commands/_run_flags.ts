/**
 * The flags of `penguin run`: help text, parsing and validation.
 *
 * @module
 */
import { PenguinError } from "../../protocol/errors.ts";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../state/ids.ts";
import { AGENT_THINKING_LEVELS } from "../../state/system_config.ts";
import type { CommandPolicyRule } from "../../state/command_policy_defaults.ts";
import type { ThinkingLevel } from "../../models/wire.ts";
import { parseSandboxMode, SANDBOX_MODES } from "../../sandbox/policy.ts";
import { type ApprovalMode, parseApprovalMode } from "../../agent/approval.ts";
import { bool, type FlagSpec, parseFlags, str } from "../args.ts";
import { GIT_WRITABLE_HELP, GRANT_ROOTS_HELP, POLICY_FILE_HELP } from "./_workspace_policy.ts";

/** The help text of `penguin run`. */
export const HELP = `Usage: penguin run -m <message> [flags]
       penguin run --resume <session> -m <message> [flags]

Run one agent task in a workspace: the model works with the tools until a
turn calls no tool, max turns, or an abort (Ctrl-C / SIGTERM). Every step is
recorded in the session's trace.

With --resume, the task continues a recorded session (an id, a unique part of
one, the path of one of its trace files, or "latest"): same workspace, model and system prompt,
the committed history as context, appending to the same trace. Its model
pair must still be configured; --provider and --model-id are refused.
--workspace continues a session whose recorded workspace no longer exists in
another directory (the move is recorded in the trace and told to the model);
while the recorded workspace exists, only that directory is accepted.

Flags:
  -m, --message <text>      the task; "-" reads it from stdin (required)
  --resume <session>        continue a session: id, unique part of an id, trace path, or latest
  --provider <group>        model provider group (always together with --model-id)
  --model-id <id>           model id (always together with --provider;
                            neither: the project's default model)
  --project-id <id>         project (default: ${DEFAULT_PROJECT_ID})
  --agent-id <id>           agent (default: ${DEFAULT_AGENT_ID})
  --workspace <dir>         working directory; must exist (default: the current directory)
  --approve <mode>          allow-all (default), deny-all, read-only (read tools run,
                            others are asked), always-ask
  --thinking <level>        ${AGENT_THINKING_LEVELS.join(", ")}
  --max-turns <n>           stop after n model requests (default: the agent's max_turns)
  --sandbox <mode>          ${SANDBOX_MODES.join(", ")} (default: workspace-write)
  --network on|off          let commands use the network (default: off)
${GRANT_ROOTS_HELP}
${GIT_WRITABLE_HELP}
  --verbose                 show tool output in full (default: long outputs show their
                            first and last lines around "… N more lines")
  --json                    print the OmniMessage stream as JSONL on stdout, nothing else;
                            the first record is the session_meta (the session id)

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

const SPEC: FlagSpec = {
  "message": { type: "string", short: "m" },
  "resume": { type: "string" },
  "provider": { type: "string" },
  "model-id": { type: "string" },
  "project-id": { type: "string" },
  "agent-id": { type: "string" },
  "workspace": { type: "string" },
  "approve": { type: "string" },
  "thinking": { type: "string" },
  "max-turns": { type: "string" },
  "sandbox": { type: "string" },
  "network": { type: "string" },
  "json": { type: "boolean" },
  "verbose": { type: "boolean" },
  "grant-writable-roots": { type: "boolean" },
  "git-writable": { type: "boolean" },
};

/** The validated flags of one `penguin run`. */
export interface RunFlags {
  message: string;
  /** The message was read from stdin (`-m -`), so prompts find it at its end. */
  messageFromStdin: boolean;
  provider?: string;
  modelId?: string;
  projectId?: string;
  agentId?: string;
  workspace: string;
  /** `--resume`: the session to continue. */
  resume?: string;
  /** `--workspace` with `--resume`: where to continue when the recorded workspace is gone. */
  resumeWorkspace?: string;
  approve: ApprovalMode;
  thinking?: ThinkingLevel;
  maxTurns?: number;
  sandbox: ReturnType<typeof parseSandboxMode>;
  network: boolean;
  json: boolean;
  /** `--verbose`: tool output in full. */
  verbose: boolean;
  grantWritableRoots: boolean;
  /** `--git-writable` (or penguin.jsonc `"git"`, once applied): commands may commit. */
  gitWritable: boolean;
  /** Extra writable roots and command rules from penguin.jsonc. */
  extraWritable?: string[];
  /** MCP servers `penguin.jsonc` turns off (all, or these names). */
  mcpDeny?: "all" | string[];
  commandRules?: CommandPolicyRule[];
}

async function readAllStdin(): Promise<string> {
  return (await new Response(Deno.stdin.readable).text()).replace(/\r?\n$/, "");
}

/** Parse and validate the flags of `penguin run` (`-m -` reads the message from stdin). */
export async function parse(args: string[]): Promise<RunFlags> {
  const p = parseFlags("run", args, SPEC, 0);
  let message = str(p, "message");
  if (message === undefined) throw new PenguinError("usage", "run: -m/--message is required");
  if (message === "-") message = await readAllStdin();
  if (message.trim() === "") throw new PenguinError("usage", "run: the message is empty");
  const provider = str(p, "provider");
  const modelId = str(p, "model-id");
  if ((provider === undefined) !== (modelId === undefined)) {
    throw new PenguinError(
      "usage",
      `run: --model-id and --provider must be given together; got ${
        provider !== undefined ? "--provider" : "--model-id"
      } alone`,
    );
  }
  const thinkingRaw = str(p, "thinking");
  let thinking: ThinkingLevel | undefined;
  if (thinkingRaw !== undefined) {
    const t = thinkingRaw.toLowerCase();
    if (!(AGENT_THINKING_LEVELS as readonly string[]).includes(t)) {
      throw new PenguinError(
        "usage",
        `run: --thinking must be one of ${AGENT_THINKING_LEVELS.join(", ")}, got ${
          JSON.stringify(thinkingRaw)
        }`,
      );
    }
    thinking = t as ThinkingLevel;
  }
  const maxRaw = str(p, "max-turns");
  if (maxRaw !== undefined && !/^-?\d+$/.test(maxRaw)) {
    throw new PenguinError(
      "usage",
      `run: --max-turns must be an integer (0 or less: unlimited), got ${JSON.stringify(maxRaw)}`,
    );
  }
  const network = str(p, "network") ?? "off";
  if (network !== "on" && network !== "off") {
    throw new PenguinError(
      "usage",
      `run: --network must be on or off, got ${JSON.stringify(network)}`,
    );
  }
  const resume = str(p, "resume");
  if (resume !== undefined) {
    const clash = ["provider", "model-id"].filter((k) => str(p, k) !== undefined);
    if (clash.length > 0) {
      throw new PenguinError(
        "usage",
        `run: --resume continues a session with its recorded model; drop ${
          clash.map((k) => `--${k}`).join(", ")
        }`,
      );
    }
    if (resume.trim() === "") {
      throw new PenguinError("usage", "run: --resume needs a session id, a trace path or latest");
    }
  }
  const workspace = str(p, "workspace") ?? Deno.cwd();
  if (resume === undefined || str(p, "workspace") !== undefined) {
    try {
      if (!(await Deno.stat(workspace)).isDirectory) {
        throw new PenguinError("usage", `run: the workspace is not a directory: ${workspace}`);
      }
    } catch (err) {
      if (err instanceof PenguinError) throw err;
      throw new PenguinError("usage", `run: the workspace does not exist: ${workspace}`);
    }
  }
  return {
    ...(resume !== undefined ? { resume } : {}),
    ...(resume !== undefined && str(p, "workspace") !== undefined
      ? { resumeWorkspace: workspace }
      : {}),
    message,
    messageFromStdin: str(p, "message") === "-",
    ...(provider !== undefined ? { provider, modelId } : {}),
    projectId: str(p, "project-id"),
    agentId: str(p, "agent-id"),
    workspace,
    approve: parseApprovalMode(str(p, "approve") ?? "allow-all", "run: --approve"),
    ...(thinking ? { thinking } : {}),
    ...(maxRaw !== undefined ? { maxTurns: Number(maxRaw) } : {}),
    sandbox: parseSandboxMode(str(p, "sandbox") ?? "workspace-write", "run: --sandbox"),
    network: network === "on",
    json: bool(p, "json"),
    verbose: bool(p, "verbose"),
    grantWritableRoots: bool(p, "grant-writable-roots"),
    gitWritable: bool(p, "git-writable"),
  };
}
