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
import { onAbort } from "../../protocol/abort.ts";
import type { CompleteMessage, ToolCallMessage } from "../../protocol/types.ts";
import { userText } from "../../protocol/builders.ts";
import { VERSION } from "../../version.ts";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../state/ids.ts";
import { createAgent } from "../../agent/agent.ts";
import { type ApprovalVerdict, approverForMode, withCommandPolicy } from "../../agent/approval.ts";
import {
  ANSWER_AGAIN,
  answerVerdict,
  approvalAnswer,
  APPROVE_PROMPT,
  openTerminal,
  PROMPT_REASONS,
  type Terminal,
} from "../_approval_prompt.ts";
import type { Session } from "../../agent/session.ts";
import { type RunOutcome, trackOutcome } from "../../agent/outcome.ts";
import type { Command, CommandContext } from "../command.ts";
import { createRenderer, type Renderer, terminalMarkdown } from "../render/mod.ts";
import { safeText } from "../../display/terminal_text.ts";
import { markerBlock } from "../../agent/markers.ts";
import { builtinToolPreviews } from "../../agent/toolset.ts";
import { listSkills } from "../../state/skills.ts";
import { createPriceBook, type Price } from "../../inspect/pricing.ts";
import { projectConfigPathOf } from "../../trace/layout.ts";
import { applyPolicyFile, confinement } from "./_session_flags.ts";
import { HELP, parse, type RunFlags } from "./_run_flags.ts";

/** Refuse `--skill` names the agent does not have, before anything is recorded. */
async function checkSkills(names: string[], skillsDir: string, agentId: string): Promise<void> {
  if (names.length === 0) return;
  const installed = new Set((await listSkills(skillsDir)).map((s) => s.name));
  const missing = names.filter((n) => !installed.has(n));
  if (missing.length > 0) {
    throw new PenguinError(
      "usage",
      `run: --skill ${missing.join(", ")}: agent ${agentId} has no such skill ` +
        `(installed: ${[...installed].join(", ") || "none"}; see penguin skills list)`,
    );
  }
}

/** The task text, opened by a `[use_skills]` block when skills were named. */
function withSkills(message: string, skills: string[]): string {
  if (skills.length === 0) return message;
  return `${markerBlock("use_skills", `skills: ${skills.join(", ")}`)}\n\n${message}`;
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

async function openSession(
  ctx: CommandContext,
  f: RunFlags,
  terminal: Terminal | null,
): Promise<Session> {
  // penguin.jsonc narrows the flags; the recorded workspace's one when resuming.
  const pc = {
    ...(ctx.root !== undefined ? { root: ctx.root } : {}),
    warn: ctx.io.err,
    canAsk: terminal !== null,
  };
  if (f.resume === undefined) await applyPolicyFile("run", f, f.workspace, pc);
  const agent = await createAgent({
    ...(ctx.root !== undefined ? { root: ctx.root } : {}),
    ...(f.projectId !== undefined ? { projectId: f.projectId } : {}),
    ...(f.agentId !== undefined ? { agentId: f.agentId } : {}),
  });
  await checkSkills(f.skills, agent.paths.skills, agent.ref.agentId);
  const limits = {
    ...(f.thinking ? { thinkingLevel: f.thinking } : {}),
    ...(f.maxTurns !== undefined ? { maxTurns: f.maxTurns } : {}),
    // Diagnostics can quote the model (tool names, errors): terminal-safe like the rest.
    warn: (line: string) => ctx.io.err(`${safeText(line)}\n`),
  };
  if (f.resume !== undefined) {
    // The recorded workspace decides which penguin.jsonc applies.
    return await agent.resumeSession({
      target: f.resume,
      ...(f.resumeWorkspace !== undefined ? { workspace: f.resumeWorkspace } : {}),
      ...limits,
      configure: async (meta) => {
        await applyPolicyFile("run", f, meta.workspace, pc);
        return confinement(f);
      },
    });
  }
  try {
    return await agent.createSession({
      workspaceDir: f.workspace,
      ...(f.provider !== undefined ? { provider: f.provider, modelId: f.modelId } : {}),
      ...limits,
      ...confinement(f),
    });
  } catch (err) {
    // An unknown model pair is a configuration problem here, not a failed task.
    if (err instanceof PenguinError && err.kind === "not_found") {
      throw new PenguinError("config", err.message, { cause: err });
    }
    throw err;
  }
}

/** The price of the session's model (configured, else the catalog's), or null when unknown. */
async function priceOf(ctx: CommandContext, session: Session): Promise<Price | null> {
  const book = createPriceBook((m) => ctx.io.err(`[penguin] warning: ${m}\n`));
  return await book.priceFor(
    session.provider,
    session.modelId,
    projectConfigPathOf(session.tracePath),
  );
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

/** The live renderer of a run (none under `--json`). */
async function runRenderer(
  ctx: CommandContext,
  f: RunFlags,
  session: Session,
): Promise<Renderer | undefined> {
  const { io } = ctx;
  if (f.json) return undefined;
  return createRenderer({
    write: io.out,
    color: io.color,
    collapse: !f.verbose,
    fullOutputHint: "--verbose",
    spinner: io.isTty,
    spinnerLabel: `waiting for ${session.provider}/${session.modelId}…`,
    // Only a human's answer or a policy's verdict is worth a line.
    autoApprovals: false,
    stats: { kind: "totals", price: await priceOf(ctx, session) },
    toolPreviews: builtinToolPreviews,
    // Markdown only on a colour terminal; NO_COLOR or a pipe keeps the text raw.
    ...(io.color && io.isTty ? { markdown: terminalMarkdown() } : {}),
  });
}

/** The session id first: as the stream's own record (its session_meta), or in the header. */
function announce(io: CommandContext["io"], f: RunFlags, session: Session): void {
  if (f.json) {
    io.out(JSON.stringify(session.metaMessage) + "\n");
    return;
  }
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

/** Asking on the terminal; `cancel()` answers a pending prompt as interrupted (false: none pending). */
interface TerminalAsker {
  ask(call: ToolCallMessage): Promise<ApprovalVerdict>;
  cancel(): boolean;
}

function terminalAsker(
  io: CommandContext["io"],
  terminal: Terminal,
  renderer: Renderer | undefined,
): TerminalAsker {
  let cancelPrompt: (() => void) | undefined;
  // The prompt goes to stderr; a redirected stderr gets a transcript and the terminal the prompt.
  const stderrIsTerminal = Deno.stderr.isTerminal();
  const say = (text: string) => {
    io.err(text);
    if (!stderrIsTerminal) terminal.write(text);
  };
  const answer = () =>
    new Promise<string | "eof" | "interrupt">((resolve) => {
      cancelPrompt = () => resolve("interrupt");
      terminal.lines.next().then((l) => resolve(l ?? "eof"), () => resolve("eof"));
    }).finally(() => cancelPrompt = undefined);
  return {
    cancel() {
      if (!cancelPrompt) return false;
      cancelPrompt();
      return true;
    },
    async ask(call) {
      renderer?.beginPrompt(call);
      let verdict: ApprovalVerdict | null = null;
      let prompt = APPROVE_PROMPT;
      while (verdict === null) {
        say(prompt);
        const got = await answer();
        if (got === "eof" || got === "interrupt") {
          io.err("\n");
          verdict = { decision: "deny", reason: PROMPT_REASONS[got] };
          break;
        }
        if (!stderrIsTerminal) io.err(`${got}\n`);
        const d = approvalAnswer(got);
        if (d !== null) verdict = answerVerdict(d);
        else prompt = `${ANSWER_AGAIN}\n${APPROVE_PROMPT}`;
      }
      renderer?.endPrompt(call, verdict.decision, undefined, verdict.reason);
      return verdict;
    },
  };
}

async function run(args: string[], ctx: CommandContext): Promise<number> {
  const f = await parse(args);
  const { io } = ctx;
  // Approvals are answered on the terminal, never by piped input.
  const terminal = openTerminal();
  // penguin.jsonc narrows the flags (applied once the workspace is known).
  const session = await openSession(ctx, f, terminal);
  const renderer = await runRenderer(ctx, f, session);
  announce(io, f, session);

  const ctl = new AbortController();
  const asker = terminal !== null ? terminalAsker(io, terminal, renderer) : undefined;
  const removeSignals = addSignals(() => {
    if (!asker?.cancel()) ctl.abort(new DOMException("interrupted by a signal", "AbortError"));
  });

  let outcome: RunOutcome | undefined;
  // Without a terminal nobody is asked: the mode's own denial reasons apply.
  const asking = asker ? { ask: asker.ask } : {};
  const runOptions = {
    signal: ctl.signal,
    approve: f.commandRules?.length
      ? withCommandPolicy(
        approverForMode(f.approve, { ...asking, permissionOf: session.toolPermission }),
        { enabled: true, rules: f.commandRules },
      )
      : f.approve,
    ...asking,
  };
  renderer?.beginTask();
  try {
    let input: string | CompleteMessage[] | null = withSkills(f.message, f.skills);
    while (input !== null) {
      const task = trackOutcome(session.run(input, runOptions));
      for await (const msg of task) {
        if (f.json) io.out(JSON.stringify(msg) + "\n");
        else renderer!.push(msg);
      }
      outcome = task.outcome;
      if (outcome?.kind !== "completed" || ctl.signal.aborted) break;
      // Subagents started with run_in_background report when they finish: wait
      // for them and let the model read each report (one more round per batch).
      input = await nextBackgroundReports(io, f, session, ctl.signal);
    }
  } finally {
    removeSignals();
    renderer?.endTask();
    await session.dispose();
  }
  io.err(resumeHint(ctx, f, session.sessionId));
  return outcome?.kind === "completed" ? 0 : 1;
}

/** The reports of finished background work as harness messages; null when nothing is left to wait for. */
async function nextBackgroundReports(
  io: CommandContext["io"],
  f: RunFlags,
  session: Session,
  signal: AbortSignal,
): Promise<CompleteMessage[] | null> {
  let notices = session.takeBackgroundNotices();
  while (notices.length === 0 && session.hasRunningBackgroundSubagents() && !signal.aborted) {
    const running = session.backgroundTasks().filter((t) =>
      t.kind === "subagent" && t.state === "running"
    );
    if (!f.json) {
      io.err(`[background] waiting for ${running.length} background subagent(s) to finish…\n`);
    }
    let unsubscribe: (() => void)[] = [];
    await new Promise<void>((resolve) => {
      unsubscribe = [session.onBackgroundNotice(() => resolve()), onAbort(signal, resolve)];
    });
    for (const off of unsubscribe) off();
    notices = session.takeBackgroundNotices();
  }
  if (notices.length === 0 || signal.aborted) return null;
  return notices.map((n) => userText(n.text, "harness"));
}

/** The `run` command. */
export const runCommand: Command = {
  path: ["run"],
  summary: "run one agent task in a workspace until it is done",
  help: HELP,
  run,
};
