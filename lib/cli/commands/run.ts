/**
 * `penguin run -m <message>`: one agent task in a workspace, start to end.
 *
 * The header goes to stderr, the rendered stream (or, with `--json`, the raw
 * OmniMessage stream as JSONL and nothing else) to stdout. SIGINT and SIGTERM
 * abort the task; during an approval prompt SIGINT denies that call instead.
 * Exit 0 when the task completed, 1 when it was aborted, failed or stopped
 * at max turns, 2 for usage and config errors.
 *
 * @module
 */
import { PenguinError } from "../../protocol/errors.ts";
import type {
  ApprovalDecision,
  CompleteMessage,
  OmniMessage,
  ToolCallMessage,
} from "../../protocol/types.ts";
import { userText } from "../../protocol/builders.ts";
import { VERSION } from "../../version.ts";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../state/ids.ts";
import { AGENT_THINKING_LEVELS } from "../../state/system_config.ts";
import type { CommandPolicyRule } from "../../state/command_policy_defaults.ts";
import type { ThinkingLevel } from "../../models/wire.ts";
import { parseSandboxMode, SANDBOX_MODES } from "../../sandbox/policy.ts";
import { createAgent } from "../../agent/agent.ts";
import {
  type ApprovalMode,
  approverForMode,
  parseApprovalMode,
  withCommandPolicy,
} from "../../agent/approval.ts";
import type { Session } from "../../agent/session.ts";
import { bool, type FlagSpec, parseFlags, str } from "../args.ts";
import type { Command, CommandContext } from "../command.ts";
import { createRenderer } from "../render/mod.ts";
import { effectivePolicy, GRANT_ROOTS_HELP, POLICY_FILE_HELP } from "./_workspace_policy.ts";

const HELP = `Usage: penguin run -m <message> [flags]
       penguin run --resume <session> -m <message> [flags]

Run one agent task in a workspace: the model works with the tools until a
turn calls no tool, max turns, or an abort (Ctrl-C / SIGTERM). Every step is
recorded in the session's trace.

With --resume, the task continues a recorded session (an id, the path of one
of its trace files, or "latest"): same workspace, model and system prompt,
the committed history as context, appending to the same trace. Its model
pair must still be configured; --workspace, --provider and --model-id are
refused.

Flags:
  -m, --message <text>      the task; "-" reads it from stdin (required)
  --resume <session>        continue a session: id, trace file path, or latest
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
  --json                    print the OmniMessage stream as JSONL on stdout, nothing else

${POLICY_FILE_HELP}

Approval prompts ("? Approve this tool call? [Y/n] ") read a line from stdin;
end of input denies. Destructive commands are refused by the project's
command policy under every mode.

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
  "grant-writable-roots": { type: "boolean" },
};

/** The validated flags of one `penguin run`. */
interface RunFlags {
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
  approve: ApprovalMode;
  thinking?: ThinkingLevel;
  maxTurns?: number;
  sandbox: ReturnType<typeof parseSandboxMode>;
  network: boolean;
  json: boolean;
  grantWritableRoots: boolean;
  /** Extra writable roots and command rules from penguin.jsonc. */
  extraWritable?: string[];
  commandRules?: CommandPolicyRule[];
}

/** A line reader over stdin, shared by every approval prompt of the run. */
function stdinLines(): { next(): Promise<string | null>; cancel(): void } {
  const reader = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let ended = false;
  return {
    async next() {
      for (;;) {
        const nl = buf.indexOf("\n");
        if (nl >= 0) {
          const line = buf.slice(0, nl).replace(/\r$/, "");
          buf = buf.slice(nl + 1);
          return line;
        }
        if (ended) {
          if (buf === "") return null;
          const rest = buf;
          buf = "";
          return rest;
        }
        const r = await reader.read();
        if (r.done) ended = true;
        else buf += r.value;
      }
    },
    cancel() {
      reader.cancel().catch(() => {});
    },
  };
}

async function readAllStdin(): Promise<string> {
  return (await new Response(Deno.stdin.readable).text()).replace(/\r?\n$/, "");
}

async function parse(args: string[]): Promise<RunFlags> {
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
    const clash = ["workspace", "provider", "model-id"].filter((k) => str(p, k) !== undefined);
    if (clash.length > 0) {
      throw new PenguinError(
        "usage",
        `run: --resume continues a session with its recorded workspace and model; drop ${
          clash.map((k) => `--${k}`).join(", ")
        }`,
      );
    }
    if (resume.trim() === "") {
      throw new PenguinError("usage", "run: --resume needs a session id, a trace path or latest");
    }
  }
  const workspace = str(p, "workspace") ?? Deno.cwd();
  if (resume === undefined) {
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
    grantWritableRoots: bool(p, "grant-writable-roots"),
  };
}

function addSignals(handler: () => void): () => void {
  const added: Deno.Signal[] = [];
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    try {
      Deno.addSignalListener(sig, handler);
      added.push(sig);
    } catch {
      // SIGTERM cannot be listened to on Windows
    }
  }
  return () => added.forEach((sig) => Deno.removeSignalListener(sig, handler));
}

/** Apply penguin.jsonc of `workspace` to the flags (lib/sandbox/workspace_policy.ts). */
async function applyWorkspacePolicy(
  ctx: CommandContext,
  f: RunFlags,
  workspace: string,
): Promise<void> {
  const eff = await effectivePolicy(workspace, {
    sandbox: f.sandbox,
    network: f.network,
    approve: f.approve,
    grantWritableRoots: f.grantWritableRoots,
  }, { ...(ctx.root !== undefined ? { root: ctx.root } : {}), warn: ctx.io.err });
  Object.assign(f, {
    sandbox: eff.sandbox,
    network: eff.network,
    approve: eff.approve ?? f.approve,
    extraWritable: eff.extraWritable,
    commandRules: eff.commandRules,
  });
  if (f.sandbox === "off") {
    ctx.io.err(
      "[penguin] warning: --sandbox off: commands run WITHOUT an OS sandbox, with all of your user's permissions\n",
    );
  }
}

async function openRunSession(ctx: CommandContext, f: RunFlags): Promise<Session> {
  if (f.resume === undefined) await applyWorkspacePolicy(ctx, f, f.workspace);
  const agent = await createAgent({
    ...(ctx.root !== undefined ? { root: ctx.root } : {}),
    ...(f.projectId !== undefined ? { projectId: f.projectId } : {}),
    ...(f.agentId !== undefined ? { agentId: f.agentId } : {}),
  });
  const limits = {
    ...(f.thinking ? { thinkingLevel: f.thinking } : {}),
    ...(f.maxTurns !== undefined ? { maxTurns: f.maxTurns } : {}),
  };
  if (f.resume !== undefined) {
    // The recorded workspace decides which penguin.jsonc applies.
    return await agent.resumeSession({
      target: f.resume,
      ...limits,
      configure: async (meta) => {
        await applyWorkspacePolicy(ctx, f, meta.workspace);
        return {
          sandbox: f.sandbox,
          network: f.network,
          ...(f.extraWritable?.length ? { extraWritable: f.extraWritable } : {}),
        };
      },
    });
  }
  try {
    return await agent.createSession({
      workspaceDir: f.workspace,
      ...(f.provider !== undefined ? { provider: f.provider, modelId: f.modelId } : {}),
      ...limits,
      sandbox: f.sandbox,
      network: f.network,
      ...(f.extraWritable?.length ? { extraWritable: f.extraWritable } : {}),
    });
  } catch (err) {
    // An unknown model pair is a configuration problem here, not a failed task.
    if (err instanceof PenguinError && err.kind === "not_found") {
      throw new PenguinError("config", err.message, { cause: err });
    }
    throw err;
  }
}

function resumeHint(ctx: CommandContext, f: RunFlags, sessionId: string): string {
  let cmd = `penguin chat --resume ${sessionId}`;
  if (f.projectId !== undefined && f.projectId !== DEFAULT_PROJECT_ID) {
    cmd += ` --project-id ${f.projectId}`;
  }
  if (f.agentId !== undefined && f.agentId !== DEFAULT_AGENT_ID) cmd += ` --agent-id ${f.agentId}`;
  if (ctx.root !== undefined) cmd += ` --root ${ctx.root}`;
  return `To continue this conversation: ${cmd}\n`;
}

async function run(args: string[], ctx: CommandContext): Promise<number> {
  const f = await parse(args);
  const { io } = ctx;
  // penguin.jsonc narrows the flags (applied once the workspace is known).
  const session = await openRunSession(ctx, f);
  const renderer = f.json ? undefined : createRenderer({
    write: io.out,
    color: io.color,
    collapse: false,
    spinner: io.isTty,
  });
  if (!f.json) {
    io.err(
      `penguin run v${VERSION}\nAgent: ${
        f.agentId ?? DEFAULT_AGENT_ID
      }\nWorkspace: ${session.workspaceDir}\n` +
        `Model: ${session.modelId} (${session.provider})\nSession: ${session.sessionId}\n`,
    );
    if (session.resumedHistory !== undefined) {
      io.err(
        `[resumed] ${session.sessionId} · ${session.resumedHistory.length} message(s) in the current context\n`,
      );
    }
  }

  const ctl = new AbortController();
  let stdin: ReturnType<typeof stdinLines> | undefined;
  let cancelPrompt: (() => void) | undefined;
  const removeSignals = addSignals(() => {
    if (cancelPrompt) cancelPrompt();
    else ctl.abort(new DOMException("interrupted by a signal", "AbortError"));
  });

  const ask = async (call: ToolCallMessage): Promise<ApprovalDecision> => {
    renderer?.beginPrompt(call);
    io.err("? Approve this tool call? [Y/n] ");
    stdin ??= f.messageFromStdin
      ? { next: () => Promise.resolve(null), cancel() {} }
      : stdinLines();
    const answer = await new Promise<string | null>((resolve) => {
      cancelPrompt = () => resolve(null);
      stdin!.next().then(resolve, () => resolve(null));
    });
    cancelPrompt = undefined;
    if (answer === null) io.err("\n");
    const a = answer?.trim().toLowerCase();
    const decision: ApprovalDecision = answer === null || a === "n" || a === "no"
      ? "deny"
      : "allow";
    renderer?.endPrompt(call, decision);
    return decision;
  };

  let aborted = false;
  let stoppedAtMaxTurns = false;
  const runOptions = {
    signal: ctl.signal,
    approve: f.commandRules?.length
      ? withCommandPolicy(
        approverForMode(f.approve, { ask, permissionOf: session.toolPermission }),
        { enabled: true, rules: f.commandRules },
      )
      : f.approve,
    ask,
  };
  renderer?.beginTask();
  try {
    let input: string | CompleteMessage[] | null = f.message;
    while (input !== null) {
      for await (const msg of session.run(input, runOptions)) {
        if (f.json) io.out(JSON.stringify(msg) + "\n");
        else renderer!.push(msg);
        noteOutcome(msg);
      }
      if (aborted || stoppedAtMaxTurns || ctl.signal.aborted) break;
      // Subagents started with run_in_background report when they finish: wait
      // for them and let the model read each report (one more round per batch).
      input = await nextBackgroundReports();
    }
  } finally {
    removeSignals();
    stdin?.cancel();
    renderer?.endTask();
    await session.dispose();
  }
  io.err(resumeHint(ctx, f, session.sessionId));
  return aborted || stoppedAtMaxTurns ? 1 : 0;

  /** The reports of finished background work as harness messages; null when nothing is left to wait for. */
  async function nextBackgroundReports(): Promise<CompleteMessage[] | null> {
    let notices = session.takeBackgroundNotices();
    while (notices.length === 0 && session.hasRunningBackgroundSubagents() && !ctl.signal.aborted) {
      const running = session.backgroundTasks().filter((t) =>
        t.kind === "subagent" && t.state === "running"
      );
      if (!f.json) {
        io.err(`[background] waiting for ${running.length} background subagent(s) to finish…\n`);
      }
      await new Promise<void>((resolve) => {
        const off = session.onBackgroundNotice(() => done());
        const onAbort = () => done();
        ctl.signal.addEventListener("abort", onAbort, { once: true });
        function done() {
          off();
          ctl.signal.removeEventListener("abort", onAbort);
          resolve();
        }
      });
      notices = session.takeBackgroundNotices();
    }
    if (notices.length === 0 || ctl.signal.aborted) return null;
    return notices.map((n) => userText(n.text, "harness"));
  }

  function noteOutcome(msg: OmniMessage): void {
    if (msg.origin && msg.origin.length > 0) return;
    if (msg.type === "event_msg" && msg.payload.type === "abort") aborted = true;
    if (
      msg.type === "model_msg" && msg.payload.type === "text" && msg.payload.role === "assistant" &&
      msg.payload.stop_reason === "failed" &&
      /^\[reached max turns \(\d+\); stopping\]$/.test(msg.payload.text)
    ) stoppedAtMaxTurns = true;
  }
}

/** The `run` command. */
export const runCommand: Command = {
  path: ["run"],
  summary: "run one agent task in a workspace until it is done",
  help: HELP,
  run,
};
