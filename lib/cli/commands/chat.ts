/**
 * `penguin chat`: an interactive conversation with an agent. Each message is
 * one task; typing while a task runs steers it; slash commands control the
 * session; Ctrl-C acts by state. With stdin not a terminal, each line is one
 * task until EOF.
 *
 * @module
 */
import { effectivePolicy } from "./_workspace_policy.ts";
import { errorMessage, PenguinError } from "../../protocol/errors.ts";
import type { OmniMessage } from "../../protocol/types.ts";
import type { ThinkingLevel } from "../../models/wire.ts";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../state/ids.ts";
import {
  type Agent,
  approverForMode,
  createAgent,
  type Session,
  withCommandPolicy,
} from "../../agent/mod.ts";
import { VERSION } from "../../version.ts";
import type { Command, CommandContext } from "../command.ts";
import {
  CHAT_HELP,
  CHAT_THINKING_LEVELS,
  type ChatOptions,
  parseChatFlags,
} from "./_chat_flags.ts";
import { createRenderer, type Renderer, terminalMarkdown } from "../render/mod.ts";
import { safeText } from "../../inspect/terminal_text.ts";
import { type ChatInput, createLineInput } from "../_chat_input.ts";
import { createTtyInput } from "../_chat_tty.ts";

/** Where penguin.jsonc notes go, and the data root it must not open up. */
interface PolicyContext {
  root?: string;
  warn(line: string): void;
}

/** Apply `<workspace>/penguin.jsonc` to the chat's options (it may only narrow them). */
async function applyPolicy(opts: ChatOptions, workspace: string, pc: PolicyContext): Promise<void> {
  const eff = await effectivePolicy(workspace, {
    sandbox: opts.session.sandbox ?? "workspace-write",
    network: opts.session.network ?? false,
    approve: opts.approve,
    grantWritableRoots: opts.grantWritableRoots,
    gitWritable: opts.session.git === "writable",
  }, { ...(pc.root !== undefined ? { root: pc.root } : {}), warn: pc.warn });
  opts.session.sandbox = eff.sandbox;
  opts.session.network = eff.network;
  if (eff.extraWritable.length > 0) opts.session.extraWritable = eff.extraWritable;
  opts.session.git = eff.git;
  if (eff.approve !== undefined) opts.approve = eff.approve;
  if (eff.commandRules.length > 0) opts.commandRules = eff.commandRules;
}

/** Resume `target` (an id or a trace path; "" = the latest session) with the chat's session options. */
async function resumeSession(
  agent: Agent,
  target: string,
  opts: ChatOptions,
  pc: PolicyContext,
): Promise<{ session: Session; history: readonly OmniMessage[] }> {
  let sessionTarget = target;
  if (sessionTarget === "") {
    const latest = await agent.latestSessionId();
    if (latest === null) {
      throw new PenguinError(
        "not_found",
        `No session to resume for agent ${agent.ref.agentId} in project ${agent.ref.projectId}: ` +
          `start one with "penguin chat" or "penguin run"`,
      );
    }
    sessionTarget = latest;
  }
  const { workspaceDir: _w, provider: _p, modelId: _m, ...rest } = opts.session;
  const session = await agent.resumeSession({
    target: sessionTarget,
    ...(opts.resumeWorkspace !== undefined ? { workspace: opts.resumeWorkspace } : {}),
    ...rest,
    // The recorded workspace decides which penguin.jsonc applies.
    configure: async (meta) => {
      await applyPolicy(opts, meta.workspace, pc);
      return {
        ...(opts.session.sandbox !== undefined ? { sandbox: opts.session.sandbox } : {}),
        ...(opts.session.network !== undefined ? { network: opts.session.network } : {}),
        ...(opts.session.extraWritable?.length
          ? { extraWritable: opts.session.extraWritable }
          : {}),
        ...(opts.session.git !== undefined ? { git: opts.session.git } : {}),
      };
    },
  });
  return { session, history: session.resumedHistory ?? [] };
}

/** `To continue this conversation: penguin chat --resume <sid>[ --project-id …][ --agent-id …]`. */
export function resumeHint(
  sessionId: string,
  projectId: string,
  agentId: string,
  root?: string,
): string {
  let cmd = `penguin chat --resume ${sessionId}`;
  if (projectId !== DEFAULT_PROJECT_ID) cmd += ` --project-id ${projectId}`;
  if (agentId !== DEFAULT_AGENT_ID) cmd += ` --agent-id ${agentId}`;
  if (root !== undefined) cmd += ` --root ${root}`;
  return `To continue this conversation: ${cmd}`;
}

/** State of one chat. */
interface Chat {
  agent: Agent;
  session: Session;
  renderer: Renderer;
  input: ChatInput;
  opts: ChatOptions;
  thinking?: ThinkingLevel;
  collapse: boolean;
  /** Whether the current session ran a task. */
  ran: boolean;
  /** The last session that ran a task (for the resume hint). */
  lastActive?: string;
}

async function runTask(chat: Chat, text: string): Promise<void> {
  const { renderer, input, session } = chat;
  const ctl = new AbortController();
  renderer.beginTask();
  input.taskStarted({ abort: () => ctl.abort(), steer: (t) => session.steer(t) });
  chat.ran = true;
  chat.lastActive = session.sessionId;
  try {
    const stream = session.run(text, {
      signal: ctl.signal,
      approve: chat.opts.commandRules?.length
        ? withCommandPolicy(
          approverForMode(chat.opts.approve, {
            ask: (call) => input.askApproval(call),
            permissionOf: session.toolPermission,
          }),
          { enabled: true, rules: chat.opts.commandRules },
        )
        : chat.opts.approve,
      ask: (call) => input.askApproval(call),
      ...(chat.thinking !== undefined ? { thinkingLevel: chat.thinking } : {}),
    });
    for await (const msg of stream) renderer.push(msg);
  } catch (err) {
    // A trace that cannot be written ends the chat (exit 1): nothing may run unrecorded.
    if (session.traceFailure) throw err;
    renderer.flush();
    renderer.line(`[error] ${errorMessage(err)}`, "plain");
  } finally {
    input.taskEnded();
  }
  renderer.endTask();
  if (ctl.signal.aborted) renderer.line("[current conversation interrupted]");
}

/** `/compact`: compact the context now; Ctrl-C aborts it. */
async function compactNow(chat: Chat): Promise<void> {
  const { renderer, input, session } = chat;
  const ctl = new AbortController();
  input.taskStarted({ abort: () => ctl.abort(), steer: () => false });
  let streamed = false;
  try {
    const gen = session.compact({ signal: ctl.signal });
    for (let r = await gen.next(); !r.done; r = await gen.next()) {
      streamed = true;
      renderer.push(r.value);
    }
  } finally {
    input.taskEnded();
    renderer.flush();
  }
  if (!streamed) renderer.line("[compaction] nothing to compact yet");
}

/** Run a slash command; resolves to true when the chat should end. */
async function slashCommand(chat: Chat, text: string): Promise<boolean> {
  const [word, ...rest] = text.trim().split(/\s+/);
  const arg = rest.join(" ");
  const r = chat.renderer;
  switch (word) {
    case "/exit":
    case "/quit":
      return true;
    case "/verbose":
      chat.collapse = !chat.collapse;
      r.setCollapse(chat.collapse);
      r.line(
        chat.collapse
          ? "[verbose] off — long tool output from here on is collapsed (/verbose to toggle)"
          : "[verbose] on — tool output from here on shows in full",
      );
      return false;
    case "/thinking":
      if (arg === "") {
        r.line(
          `[thinking] level: ${chat.thinking ?? "agent default"} — change with /thinking <${
            CHAT_THINKING_LEVELS.join("|")
          }>`,
        );
      } else if ((CHAT_THINKING_LEVELS as readonly string[]).includes(arg.toLowerCase())) {
        chat.thinking = arg.toLowerCase() as ThinkingLevel;
        r.line(`[thinking] level set to ${chat.thinking}, effective from the next request`);
      } else {
        r.line(
          `[error] Invalid thinking level "${arg}". Use ${CHAT_THINKING_LEVELS.join(", ")}.`,
          "plain",
        );
      }
      return false;
    case "/compact":
      await compactNow(chat);
      return false;
    case "/clear": {
      const old = chat.session;
      const next = await chat.agent.createSession({
        ...chat.opts.session,
        workspaceDir: old.workspaceDir,
        provider: old.provider,
        modelId: old.modelId,
      });
      await old.dispose();
      chat.session = next;
      chat.ran = false;
      r.line("[clear] started a fresh session (the previous one is kept and resumable)");
      return false;
    }
    default:
      r.line(
        `[error] Unknown command ${word}. Commands: /compact, /clear, /thinking [level], /verbose, /exit, /quit`,
        "plain",
      );
      return false;
  }
}

/** A `/word` line (not a path such as `/etc/hosts …`). */
function isSlashCommand(text: string): boolean {
  return /^\/[a-z]+(\s|$)/i.test(text.trim());
}

async function chatMain(args: string[], ctx: CommandContext): Promise<number> {
  const opts = parseChatFlags(args);
  const io = ctx.io;
  // Diagnostics can quote the model (tool names, errors): terminal-safe like the rest.
  opts.session.warn = (line) => io.err(`${safeText(line)}\n`);
  const agent = await createAgent({
    ...(ctx.root !== undefined ? { root: ctx.root } : {}),
    ...(opts.projectId !== undefined ? { projectId: opts.projectId } : {}),
    ...(opts.agentId !== undefined ? { agentId: opts.agentId } : {}),
  });
  const policyContext: PolicyContext = {
    ...(ctx.root !== undefined ? { root: ctx.root } : {}),
    warn: (line) => io.err(line),
  };
  let history: readonly OmniMessage[] | undefined;
  let session: Session;
  if (opts.resume !== undefined) {
    const resumed = await resumeSession(agent, opts.resume, opts, policyContext);
    session = resumed.session;
    history = resumed.history;
  } else {
    await applyPolicy(opts, opts.session.workspaceDir ?? Deno.cwd(), policyContext);
    if (opts.session.sandbox === "off") {
      io.err(
        "[penguin] warning: --sandbox off: commands run WITHOUT an OS sandbox, with all of your user's permissions\n",
      );
    }
    try {
      session = await agent.createSession(opts.session);
    } catch (err) {
      // An unknown model pair is a configuration problem, as for `penguin run`.
      if (err instanceof PenguinError && err.kind === "not_found") {
        throw new PenguinError("config", err.message, { cause: err });
      }
      throw err;
    }
  }
  const interactive = io.isTty && Deno.stdin.isTerminal();
  const renderer = createRenderer({
    write: io.out,
    color: io.color,
    collapse: !opts.verbose,
    spinner: interactive,
    // Markdown only on a colour terminal; NO_COLOR or a pipe keeps the text raw.
    ...(io.color && io.isTty ? { markdown: terminalMarkdown() } : {}),
  });
  io.out(
    `penguin chat v${VERSION}\nAgent: ${agent.ref.agentId}\nWorkspace: ${session.workspaceDir}\n` +
      `Model: ${session.modelId} (${session.provider})\nSession: ${session.sessionId}\n`,
  );
  if (interactive) {
    renderer.line(
      "Type a message to start; end a line with \\ to continue it; typing while a task runs " +
        "steers the agent; /compact, /clear, /thinking, /verbose, /exit; Ctrl-C interrupts.",
    );
  }
  if (history !== undefined) {
    renderer.line(
      `[resumed] ${session.sessionId} · ${history.length} message(s) in the current context`,
    );
    renderer.history(history);
  }
  const input = interactive
    ? createTtyInput({ write: io.out, renderer })
    : createLineInput({ write: io.out, renderer, echo: !Deno.stdin.isTerminal() });
  const chat: Chat = {
    agent,
    session,
    renderer,
    input,
    opts,
    collapse: !opts.verbose,
    ran: history !== undefined && history.length > 0,
  };
  if (opts.thinking !== undefined) chat.thinking = opts.thinking;
  if (chat.ran) chat.lastActive = session.sessionId;
  try {
    while (true) {
      const text = await input.nextMessage();
      if (text === null) break;
      if (text.trim() === "") continue;
      if (isSlashCommand(text)) {
        try {
          if (await slashCommand(chat, text)) break;
        } catch (err) {
          if (chat.session.traceFailure) throw err;
          renderer.line(`[error] ${errorMessage(err)}`, "plain");
        }
        continue;
      }
      await runTask(chat, text);
    }
  } finally {
    input.close();
    renderer.flush();
    await chat.session.dispose();
  }
  if (chat.lastActive !== undefined) {
    io.out(`${resumeHint(chat.lastActive, agent.ref.projectId, agent.ref.agentId, ctx.root)}\n`);
  }
  return 0;
}

/** `penguin chat`. */
export const chatCommand: Command = {
  path: ["chat"],
  summary: "talk with an agent interactively (one task per message)",
  help: CHAT_HELP,
  run: chatMain,
};
