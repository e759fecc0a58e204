/**
 * `penguin chat`: an interactive conversation with an agent. Each message is
 * one task; typing while a task runs steers it; slash commands control the
 * session; Ctrl-C acts by state. With stdin not a terminal, each line is one
 * task until EOF.
 *
 * @module
 */
import { checkWorkspace } from "./_session_flags.ts";
import { applyPolicyFile, confinement, type PolicyContext } from "../../agent/workspace_policy.ts";
import { taskRunOptions } from "../../agent/task_session.ts";
import { errorMessage, PenguinError } from "../../protocol/errors.ts";
import type { CompleteMessage, OmniMessage, ToolCallMessage } from "../../protocol/types.ts";
import type { ThinkingLevel } from "../../models/wire.ts";
import { didYouMeanText } from "../suggest.ts";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../state/ids.ts";
import { type Agent, createAgent, type RunOptions, type Session } from "../../agent/mod.ts";
import {
  continueGoal,
  type GoalPlan,
  type GoalResult,
  resolveGoalLimits,
  runGoal,
  startGoal,
} from "../../agent/goal.ts";
import { goalStartLabel } from "../../display/labels.ts";
import { listSkills } from "../../state/skills.ts";
import { withSkills } from "../../agent/skills_block.ts";
import { parseTokenBudget } from "./_goal_flags.ts";
import { VERSION } from "../../version.ts";
import { userText } from "../../protocol/builders.ts";
import { markerBlock } from "../../agent/markers.ts";
import { builtinToolPreviews } from "../../agent/tool_previews.ts";
import type { RunOutcome } from "../../agent/outcome.ts";
import type { Command, CommandContext } from "../command.ts";
import { offerFirstModel } from "./_first_model.ts";
import {
  CHAT_HELP,
  CHAT_THINKING_LEVELS,
  type ChatOptions,
  parseChatFlags,
} from "./_chat_flags.ts";
import { createRenderer, type Renderer, terminalMarkdown } from "../render/mod.ts";
import { recordedCallIds, sessionFilesThrough } from "../../inspect/recorded_calls.ts";
import { safeText } from "../../display/terminal_text.ts";
import { type ChatInput, createLineInput } from "../_chat_input.ts";
import { createTtyInput, type InputHistory } from "../_chat_tty.ts";
import { chatHistoryPath } from "../../state/paths.ts";
import { loadChatHistory, saveChatHistory } from "../../state/chat_history.ts";
import { openTerminal, type Terminal } from "../_approval_prompt.ts";
import { type ApprovalFlow, createApprovalFlow } from "../_approval_flow.ts";
import { CHAT_COMMANDS, helpLines } from "../_chat_commands.ts";
import { createSessionRules, type SessionRules } from "../_approval_rules.ts";
import {
  configuredModelLines,
  contextText,
  contextWindowOf,
  costText,
  sessionFigures,
} from "./_chat_info.ts";
import { projectConfigPathOf } from "../../trace/layout.ts";
import { findModel, loadProjectConfig, unknownPairError } from "../../state/project_config.ts";
import { formatTokens } from "../../display/numbers.ts";
import { startTelemetry } from "./_telemetry.ts";
import { resumeTarget } from "../../agent/resume_target.ts";
import { NO_PICKER_TERMINAL, pickResume, resumeCandidates } from "./_resume_pick.ts";
import { runPicker, stdinKeys } from "../_session_picker.ts";
import { holdEnding } from "../_ending_hold.ts";

/** Apply `<workspace>/penguin.jsonc` to the chat's flags (it may only narrow them) and its session options. */
async function applyPolicy(opts: ChatOptions, workspace: string, pc: PolicyContext): Promise<void> {
  await applyPolicyFile("chat", opts.flags, workspace, pc);
  Object.assign(opts.session, confinement(opts.flags));
}

/** Resume `target` (an id or a trace path; "" = the latest session) with the chat's session options. */
async function resumeSession(
  agent: Agent,
  target: string,
  opts: ChatOptions,
  pc: PolicyContext,
): Promise<{ session: Session; history: readonly OmniMessage[] }> {
  const sessionTarget = await resumeTarget("chat", agent, target);
  const { workspaceDir, provider, modelId, ...rest } = opts.session;
  const session = await agent.resumeSession({
    target: sessionTarget,
    // An explicit pair switches the resumed session to it (recorded in the trace).
    ...(provider !== undefined && modelId !== undefined ? { provider, modelId } : {}),
    ...(opts.resumeWorkspace !== undefined ? { workspace: opts.resumeWorkspace } : {}),
    // The first resume of an imported session works in the chat's directory.
    ...(workspaceDir !== undefined ? { currentDirectory: workspaceDir } : {}),
    ...rest,
    // The recorded workspace decides which penguin.jsonc applies.
    configure: async (meta) => {
      await applyPolicy(opts, meta.workspace, pc);
      return confinement(opts.flags);
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

/** The agent's persisted input history; a failed save is noted once and the chat goes on. */
async function chatHistory(
  agent: Agent,
  warn: (line: string) => void,
): Promise<InputHistory & { settled(): Promise<void> }> {
  const path = chatHistoryPath(agent.ref);
  let saving: Promise<void> = Promise.resolve();
  let warned = false;
  return {
    initial: await loadChatHistory(path),
    save(entries) {
      const snapshot = [...entries];
      saving = saving.then(() => saveChatHistory(path, snapshot)).catch((err) => {
        if (warned) return;
        warned = true;
        warn(`[penguin] could not save the chat history to ${path}: ${errorMessage(err)}\n`);
      });
    },
    settled: () => saving,
  };
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
  /** Colour on (diffs in approval questions). */
  color: boolean;
  /** Whether approval prompts can be answered (a terminal is there). */
  canAsk: boolean;
  /** How a resumed session's penguin.jsonc is applied (`/resume`). */
  policy: PolicyContext;
  /** Write to stdout (the `/resume` picker). */
  write: (text: string) => void;
  /** After `/model`: the `[model_switch_from]` block the next task's input starts with. */
  switchedFrom?: string | undefined;
  /** After `/skill <name>`: the skills the next task's `[use_skills]` block names. */
  skills?: string[] | undefined;
  /**
   * The approvals of the current session: its remembered "a" answers (kept
   * while the session id stays, across /model) and the flow over them.
   */
  approvals?: { session: Session; rules: SessionRules; flow: ApprovalFlow } | undefined;
}

/** The approval flow of the chat's current session (a new session starts with no remembered answers). */
function approvalsOf(chat: Chat): ApprovalFlow {
  const { session } = chat;
  const was = chat.approvals;
  if (was?.session !== session) {
    const rules = was?.session.sessionId === session.sessionId ? was.rules : createSessionRules();
    chat.approvals = { session, rules, flow: createApprovalFlow(session, chat.color, rules) };
  }
  return chat.approvals!.flow;
}

/** The options of a chat task's run: approvals, the chat's thinking level, the abort signal. */
function runOptionsOf(chat: Chat, signal: AbortSignal): RunOptions {
  const { input, session } = chat;
  // Without a terminal nobody is asked: the mode's own denial reasons apply.
  const flow = approvalsOf(chat);
  const ask = chat.canAsk
    ? (call: ToolCallMessage) =>
      flow.ask(call, (c, q) => input.askApproval(c, q), (c, line) => {
        chat.renderer.beginPrompt(c);
        chat.renderer.endPrompt(c);
        chat.renderer.line(line);
      })
    : undefined;
  return {
    ...taskRunOptions(chat.opts.flags, session, signal, ask),
    ...(chat.thinking !== undefined ? { thinkingLevel: chat.thinking } : {}),
  };
}

/**
 * Run one task (or, for `/goal`, one goal) on the chat's session: steering
 * and Ctrl-C go to it; the messages it yields are rendered, and an
 * interruption is said.
 */
async function runRendered(
  chat: Chat,
  start: (opts: RunOptions) => AsyncGenerator<OmniMessage, RunOutcome | GoalResult>,
): Promise<void> {
  const { renderer, input, session } = chat;
  const ctl = new AbortController();
  renderer.beginTask();
  input.taskStarted({ abort: () => ctl.abort(), steer: (t) => session.steer(t) });
  chat.ran = true;
  chat.lastActive = session.sessionId;
  let ended: RunOutcome | GoalResult | undefined;
  try {
    const gen = start(runOptionsOf(chat, ctl.signal));
    for (let r = await gen.next();; r = await gen.next()) {
      if (r.done) {
        ended = r.value;
        break;
      }
      renderer.push(r.value);
    }
  } catch (err) {
    // A trace that cannot be written ends the chat (exit 1): nothing may run unrecorded.
    if (session.traceFailure) throw err;
    renderer.flush();
    renderer.line(`[error] ${errorMessage(err)}`, "plain");
  } finally {
    input.taskEnded();
  }
  renderer.endTask();
  // A run that threw has no outcome: Ctrl-C still says what happened.
  const interrupted = ended === undefined
    ? ctl.signal.aborted
    : "kind" in ended
    ? ended.kind === "aborted"
    : ended.outcome === "aborted" && ctl.signal.aborted;
  if (interrupted) renderer.line("[current conversation interrupted]");
}

/** The text of the next task: opened by a pending `[model_switch_from]` or `[use_skills]` block. */
function taskInputOf(chat: Chat, text: string): string | CompleteMessage[] {
  const skills = chat.skills;
  chat.skills = undefined;
  const body = skills === undefined ? text : withSkills(text, skills);
  const block = chat.switchedFrom;
  chat.switchedFrom = undefined;
  return block === undefined ? body : [userText(block), userText(body)];
}

async function runTask(chat: Chat, text: string): Promise<void> {
  const input = taskInputOf(chat, text);
  await runRendered(chat, (opts) => chat.session.run(input, opts));
}

/** `/goal[:<budget>] [objective]`: run a goal on the chat's session; without an objective, continue its goal. */
async function goalCommand(chat: Chat, word: string, arg: string): Promise<void> {
  const r = chat.renderer;
  const spec = word.slice("/goal".length);
  let budget: number | null | undefined;
  if (spec !== "") {
    const n = !spec.startsWith(":")
      ? undefined
      : spec.slice(1).toLowerCase() === "none"
      ? null
      : parseTokenBudget(spec.slice(1)) ?? undefined;
    if (n === undefined) {
      r.line(
        `[error] Usage: /goal[:<budget>] <objective>, the budget a number of tokens such as 50000, 200k or 1.5m, or none`,
        "plain",
      );
      return;
    }
    budget = n;
  }
  if (chat.opts.flags.sandbox === "read-only") {
    r.line(
      "[error] /goal needs a writable sandbox: the model marks the goal complete in GOAL.yaml, " +
        "which --sandbox read-only makes read-only",
      "plain",
    );
    return;
  }
  const session = chat.session;
  let plan: GoalPlan;
  if (arg === "") plan = await continueGoal(session);
  else {
    const first = taskInputOf(chat, arg);
    // A pending [model_switch_from] block opens the first round as its own message.
    const text = typeof first === "string"
      ? first
      : first.map((m) => (m.type === "text" ? m.text : "")).join("\n\n");
    plan = await startGoal(session, text);
  }
  const limits = budget !== undefined ? { budget } : {};
  r.line(
    goalStartLabel({
      ...resolveGoalLimits(limits),
      used: plan.tokensUsed,
      hint: "/goal:<budget> to change the budget",
    }),
    "plain",
  );
  await runRendered(
    chat,
    (opts) =>
      runGoal(session, plan, limits, opts, {
        onWaiting: (running) =>
          chat.renderer.line(
            `[background] waiting for ${running} background subagent(s) to finish…`,
          ),
      }),
  );
}

/** `/skill <name>[,<name>…] [message]`: ask the model to use installed skills, with this message or the next. */
async function skillCommand(chat: Chat, raw: string): Promise<void> {
  const r = chat.renderer;
  const list = /^\S+/.exec(raw)?.[0];
  const message = list === undefined ? "" : raw.slice(list.length).trim();
  if (list === undefined) {
    r.line("[error] Usage: /skill <name>[,<name>…] [message]", "plain");
    return;
  }
  const names = [...new Set(list.split(",").map((n) => n.trim()).filter((n) => n !== ""))];
  const installed = new Set((await listSkills(chat.agent.paths.skills)).map((s) => s.name));
  const missing = names.filter((n) => !installed.has(n));
  if (names.length === 0 || missing.length > 0) {
    r.line(
      `[error] No such skill: ${missing.join(", ") || list} (installed: ${
        [...installed].join(", ") || "none"
      }; see penguin skills list)`,
      "plain",
    );
    return;
  }
  chat.skills = [...(chat.skills ?? []), ...names.filter((n) => !chat.skills?.includes(n))];
  if (message !== "") {
    await runTask(chat, message);
    return;
  }
  r.line(`[skill] ${chat.skills.join(", ")}: sent with your next message`);
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

/** `/thinking [level]`: show the level, or set it from the next request. */
function thinkingCommand(chat: Chat, arg: string): void {
  const r = chat.renderer;
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
}

/** `/clear`: a new session, same workspace and model. */
async function clearCommand(chat: Chat): Promise<void> {
  const old = chat.session;
  const next = await chat.agent.createSession({
    ...chat.opts.session,
    workspaceDir: old.workspaceDir,
    provider: old.provider,
    modelId: old.modelId,
  });
  await old.dispose();
  chat.session = next;
  chat.renderer.startSession();
  chat.ran = false;
  chat.switchedFrom = undefined;
  chat.skills = undefined;
  chat.renderer.line(
    `[clear] new session ${next.sessionId} (the previous one, ${old.sessionId}, is kept and resumable)`,
  );
}

/**
 * `/model <provider> <model-id>`: the session goes on with another
 * configured model, keeping its conversation (reopened on the new pair, as
 * `run --resume --provider … --model-id …` does: a `model_switched` record);
 * alone: the configured models. A session that ran nothing yet has nothing
 * to keep: a new one starts on the pair.
 */
async function modelCommand(chat: Chat, rest: string[]): Promise<void> {
  const r = chat.renderer;
  if (rest.length === 0) {
    for (const line of await configuredModelLines(chat.session)) r.line(line, "plain");
    return;
  }
  if (rest.length !== 2) {
    r.line(`[error] Usage: /model <provider> <model-id> (or /model to list the models)`, "plain");
    return;
  }
  const [provider, modelId] = rest as [string, string];
  const old = chat.session;
  if (provider === old.provider && modelId === old.modelId) {
    r.line(`[model] already on ${modelId} (${provider})`);
    return;
  }
  const problem = await unknownPair(old, provider, modelId);
  if (problem !== null) {
    r.line(`[error] ${problem}`, "plain");
    return;
  }
  if (!chat.ran) {
    chat.session = await chat.agent.createSession({
      ...chat.opts.session,
      workspaceDir: old.workspaceDir,
      provider,
      modelId,
    });
    await old.dispose();
    r.startSession();
    r.line(`[model] ${modelId} (${provider}): session ${chat.session.sessionId}`);
    return;
  }
  await old.dispose();
  try {
    chat.session = await reopen(chat, old.sessionId, { provider, modelId });
  } catch (err) {
    // The session goes on where it was.
    chat.session = await reopen(chat, old.sessionId);
    r.line(`[error] ${errorMessage(err)}`, "plain");
    return;
  }
  r.line(
    `[model] ${modelId} (${provider}): session ${old.sessionId} goes on with its conversation ` +
      `(recorded as model_switched)`,
  );
}

/** Why `provider`/`modelId` cannot be switched to (not configured), or null. */
async function unknownPair(
  old: Session,
  provider: string,
  modelId: string,
): Promise<string | null> {
  const path = projectConfigPathOf(old.tracePath);
  if (path === null) return null;
  const cfg = await loadProjectConfig(path);
  if (findModel(cfg, { provider, model_id: modelId })) return null;
  return unknownPairError(cfg, { provider, model_id: modelId }, path).message;
}

/** Reopen the chat's session `id` (on `pair` when given), with the chat's session options. */
async function reopen(
  chat: Chat,
  id: string,
  pair?: { provider: string; modelId: string },
): Promise<Session> {
  const { workspaceDir: _w, provider: _p, modelId: _m, ...rest } = chat.opts.session;
  return await chat.agent.resumeSession({
    target: id,
    ...(pair ?? {}),
    // An imported session whose first resume has not run yet stays where this chat placed it.
    currentDirectory: chat.session.workspaceDir,
    ...rest,
    // penguin.jsonc was applied to the flags when the chat started.
    configure: () => Promise.resolve(confinement(chat.opts.flags)),
  });
}

/**
 * `/resume [<session>|--all]`: the chat goes on in another session (its
 * history re-rendered): the one named, or one picked from the sessions of
 * the current session's workspace (`--all`: every workspace's).
 */
async function resumeCommand(chat: Chat, rest: string[]): Promise<void> {
  const r = chat.renderer;
  const all = rest.length === 1 && rest[0] === "--all";
  if (rest.length > 1 || (rest.length === 1 && rest[0]!.startsWith("-") && !all)) {
    r.line("[error] Usage: /resume [<session>|--all]", "plain");
    return;
  }
  let target: string | null = !all && rest.length === 1 ? rest[0]! : null;
  if (target === null) {
    const rows = await resumeCandidates(
      chat.agent,
      all,
      chat.session.workspaceDir,
      (line) => r.line(`[warn] ${line}`, "plain"),
    );
    const title = all
      ? "Resume a session (every workspace):"
      : `Resume a session of ${chat.session.workspaceDir}:`;
    const look = { title, columns: terminalColumns(), color: chat.color, workspaces: all };
    r.flush();
    const picking = chat.input.pick((read) => runPicker(rows, look, { write: chat.write, read }));
    if (picking === null) {
      r.line(
        "[error] /resume without an id needs a terminal to pick on: /resume <session>",
        "plain",
      );
      return;
    }
    target = await picking;
    if (target === null) {
      r.line("[resume] nothing picked; the chat goes on in this session");
      return;
    }
  }
  const old = chat.session;
  const id = await resumeTarget("chat", chat.agent, target, old.workspaceDir);
  if (id === old.sessionId) {
    r.line(`[resume] already in session ${old.sessionId}`);
    return;
  }
  const { session, history } = await resumeSession(chat.agent, id, chat.opts, chat.policy);
  await old.dispose();
  chat.session = session;
  chat.switchedFrom = undefined;
  chat.skills = undefined;
  chat.ran = history.length > 0;
  if (chat.ran) chat.lastActive = session.sessionId;
  // Short call ids go on from the resumed session's own count, as in every other view.
  r.startSession(await recordedCallIds(await sessionFilesThrough(session.tracePath)));
  r.line(
    `[resumed] ${session.sessionId} · ${history.length} message(s) in the current context ` +
      `(the previous session, ${old.sessionId}, is kept)`,
  );
  r.history(history);
}

/** `/status`: model, workspace, session, tokens, cost and context use. */
async function statusCommand(chat: Chat): Promise<void> {
  const { session, renderer: r } = chat;
  const figures = await sessionFigures(session, chat.agent.paths.traces);
  const window = await contextWindowOf(session);
  for (
    const line of [
      `[status] model ${session.modelId} (${session.provider})`,
      `  workspace ${session.workspaceDir}`,
      `  session ${session.sessionId}`,
      `  tokens ${formatTokens(figures.tokens)} · cost ${costText(figures)}`,
      `  context ${contextText(r.contextTokens(), window)}`,
    ]
  ) r.line(line, "plain");
}

/** `/cost`: the session's cost so far. */
async function costCommand(chat: Chat): Promise<void> {
  const figures = await sessionFigures(chat.session, chat.agent.paths.traces);
  chat.renderer.line(
    `[cost] ${costText(figures)} so far · tokens ${formatTokens(figures.tokens)}`,
    "plain",
  );
}

/** Run a slash command; resolves to true when the chat should end. */
async function slashCommand(chat: Chat, text: string): Promise<boolean> {
  const [word, ...rest] = text.trim().split(/\s+/);
  // What follows the command word as typed (a message keeps its lines and spacing).
  const raw = text.trim().slice(word!.length).trim();
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
      thinkingCommand(chat, rest.join(" "));
      return false;
    case "/compact":
      await compactNow(chat);
      return false;
    case "/skill":
      await skillCommand(chat, raw);
      return false;
    case "/clear":
      await clearCommand(chat);
      return false;
    case "/resume":
      await resumeCommand(chat, rest);
      return false;
    case "/model":
      await modelCommand(chat, rest);
      return false;
    case "/expand":
      if (!r.expand(rest[0])) {
        r.line(
          rest[0] === undefined
            ? "[expand] no collapsed output to expand yet"
            : `[expand] no collapsed output of call ${rest[0]} (give the number of its [#n] tag)`,
        );
      }
      return false;
    case "/help":
      for (const line of helpLines()) r.line(line, "plain");
      return false;
    case "/status":
      await statusCommand(chat);
      return false;
    case "/cost":
      await costCommand(chat);
      return false;
    default:
      if (word === "/goal" || word?.startsWith("/goal:")) {
        await goalCommand(chat, word, raw);
        return false;
      }
      r.line(
        `[error] Unknown command ${word}${
          didYouMeanText(word ?? "", CHAT_COMMANDS) || "."
        } /help lists the commands.`,
        "plain",
      );
      return false;
  }
}

/** The `[model_switch_from]` block that opens a session switched away from `old`. */
export function modelSwitchBlock(
  old: Pick<Session, "sessionId" | "tracePath" | "workspaceDir" | "modelId" | "provider">,
): string {
  return markerBlock(
    "model_switch_from",
    [
      `session: ${old.sessionId}`,
      `trace: ${old.tracePath}`,
      `workspace: ${old.workspaceDir}`,
      `previous_model: ${old.modelId}`,
      `previous_provider: ${old.provider}`,
    ].join("\n"),
  );
}

/** A `/word` line (not a path such as `/etc/hosts …`). */
function isSlashCommand(text: string): boolean {
  return /^\/[a-z]+(:\S*)?(\s|$)/i.test(text.trim());
}

/** The chat's first session: resumed (with its history to re-render) or new. */
async function openChatSession(
  agent: Agent,
  opts: ChatOptions,
  policyContext: PolicyContext,
): Promise<{ session: Session; history?: readonly OmniMessage[] }> {
  if (opts.resume !== undefined) {
    return await resumeSession(agent, opts.resume, opts, policyContext);
  }
  await applyPolicy(opts, opts.flags.workspace, policyContext);
  try {
    return { session: await agent.createSession(opts.session) };
  } catch (err) {
    // An unknown model pair is a configuration problem, as for `penguin run`.
    if (err instanceof PenguinError && err.kind === "not_found") {
      throw new PenguinError("config", err.message, { cause: err });
    }
    throw err;
  }
}

/** The header, the key help (interactive), and a resumed session's history. */
function greet(
  { agent, session, renderer }: Pick<Chat, "agent" | "session" | "renderer">,
  io: CommandContext["io"],
  interactive: boolean,
  history: readonly OmniMessage[] | undefined,
): void {
  io.out(
    `penguin chat v${VERSION}\nAgent: ${agent.ref.agentId}\nWorkspace: ${session.workspaceDir}\n` +
      `Model: ${session.modelId} (${session.provider})\nSession: ${session.sessionId}\n`,
  );
  if (interactive) {
    renderer.line(
      "Type a message to start; Enter sends, Alt-Enter, Ctrl-J or a trailing \\ adds a line; " +
        "Up/Down recall earlier messages; typing while a task runs steers it; Escape or Ctrl-C " +
        "interrupts; /help lists the commands (Tab completes them).",
    );
  }
  if (history !== undefined) {
    renderer.line(
      `[resumed] ${session.sessionId} · ${history.length} message(s) in the current context`,
    );
    renderer.history(history);
  }
}

/** Read messages until the input ends or a command ends the chat. */
async function converse(chat: Chat): Promise<void> {
  while (true) {
    const text = await chat.input.nextMessage();
    if (text === null) return;
    if (text.trim() === "") continue;
    if (!isSlashCommand(text)) {
      await runTask(chat, text);
      continue;
    }
    try {
      if (await slashCommand(chat, text)) return;
    } catch (err) {
      if (chat.session.traceFailure) throw err;
      chat.renderer.line(`[error] ${errorMessage(err)}`, "plain");
    }
  }
}

/** The terminal's width (80 when it has none). */
function terminalColumns(): number {
  try {
    return Deno.consoleSize().columns;
  } catch {
    return 80;
  }
}

/**
 * `--resume` without an id: the person picks the session on the terminal
 * (null: they cancelled). Called before the chat's own input takes stdin.
 */
async function pickAtStart(agent: Agent, opts: ChatOptions, io: CommandContext["io"]) {
  const keys = stdinKeys();
  try {
    return await pickResume(
      agent,
      {
        all: opts.all,
        columns: terminalColumns(),
        color: io.color,
        warn: (line) => io.err(`${line}\n`),
      },
      { write: io.out, read: keys },
    );
  } finally {
    keys.close();
  }
}

async function chatMain(args: string[], ctx: CommandContext): Promise<number> {
  const opts = parseChatFlags(args);
  await checkWorkspace("chat", opts.flags);
  const io = ctx.io;
  if (opts.resume === "" && !(io.isTty && Deno.stdin.isTerminal())) {
    // Nothing to pick with: one line, nothing written.
    io.err(`penguin: ${NO_PICKER_TERMINAL}\n`);
    return 2;
  }
  // Diagnostics can quote the model (tool names, errors): terminal-safe like the rest.
  opts.session.warn = (line) => io.err(`${safeText(line)}\n`);
  // A first chat on a terminal is offered the recommended model of the provider whose key is set.
  if (opts.resume === undefined && opts.session.provider === undefined) {
    await offerFirstModel(ctx, opts.projectId);
  }
  const agent = await createAgent({
    ...(ctx.root !== undefined ? { root: ctx.root } : {}),
    ...(opts.projectId !== undefined ? { projectId: opts.projectId } : {}),
    ...(opts.agentId !== undefined ? { agentId: opts.agentId } : {}),
  });
  // Spans of every session this chat opens (after /clear and /model too) go to a collector when one is configured.
  if (opts.resume === "") {
    const picked = await pickAtStart(agent, opts, io);
    if (picked === null) {
      io.err("penguin: chat: no session picked; nothing resumed\n");
      return 1;
    }
    opts.resume = picked;
  }
  const telemetry = await startTelemetry(ctx, agent);
  if (telemetry) opts.session.observeTrace = telemetry.observeTrace;
  try {
    return await chatWith(ctx, opts, agent);
  } finally {
    await telemetry?.shutdown();
  }
}

async function chatWith(ctx: CommandContext, opts: ChatOptions, agent: Agent): Promise<number> {
  const io = ctx.io;
  // Approvals are answered on the terminal: the chat's own keys, or /dev/tty
  // when the messages are piped in (piped lines never answer a prompt).
  const interactive = io.isTty && Deno.stdin.isTerminal();
  const terminal: Terminal | null = interactive ? null : openTerminal();
  const policyContext: PolicyContext = {
    ...(ctx.root !== undefined ? { root: ctx.root } : {}),
    warn: (line) => io.err(line),
    canAsk: interactive || terminal !== null,
  };
  const { session, history } = await openChatSession(agent, opts, policyContext);
  const renderer = createRenderer({
    write: io.out,
    color: io.color,
    collapse: !opts.verbose,
    spinner: interactive,
    // A collapsed output says how to see it whole afterwards: /expand <id>.
    fullOutputHint: "/expand",
    // Only a person's answer, a denial or a policy's verdict is worth a line.
    autoApprovals: false,
    toolPreviews: builtinToolPreviews,
    // Markdown only on a colour terminal; NO_COLOR or a pipe keeps the text raw.
    ...(io.color && io.isTty
      ? {
        markdown: { ...await terminalMarkdown(), mask: (t: string) => chat.session.maskSecrets(t) },
      }
      : {}),
  });
  // A resumed session's calls go on numbering after the ones it recorded (all its files).
  if (history !== undefined) {
    renderer.startSession(await recordedCallIds(await sessionFilesThrough(session.tracePath)));
  }
  greet({ agent, session, renderer }, io, interactive, history);
  const recall = interactive ? await chatHistory(agent, io.err) : undefined;
  const input = interactive
    ? createTtyInput({ write: io.out, renderer, ...(recall ? { history: recall } : {}) })
    : createLineInput({ write: io.out, renderer, echo: !Deno.stdin.isTerminal(), terminal });
  const chat: Chat = {
    agent,
    session,
    renderer,
    input,
    opts,
    collapse: !opts.verbose,
    ran: history !== undefined && history.length > 0,
    canAsk: policyContext.canAsk,
    policy: policyContext,
    write: io.out,
    color: io.color,
  };
  if (opts.thinking !== undefined) chat.thinking = opts.thinking;
  if (chat.ran) chat.lastActive = session.sessionId;
  try {
    await converse(chat);
  } finally {
    // Until main() has told the end: a signal now must not cut the last walk short.
    holdEnding(io.err);
    input.close();
    renderer.flush();
    await chat.session.dispose();
    await recall?.settled();
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
