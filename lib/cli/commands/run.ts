/**
 * `penguin run -m <message>`: one agent task in a workspace, start to end.
 *
 * The header goes to stderr, the rendered stream (or, with `--json`, the raw
 * OmniMessage stream as JSONL and nothing else) to stdout. SIGINT and SIGTERM
 * abort the task, at an approval question too (as Escape there does).
 * Exit 0 when the task completed, 1 when it was aborted, failed or stopped
 * at max turns, 2 for usage and config errors. With `--goal` the task is a
 * goal (`agent/goal.ts`): exit 0 only when its outcome is `complete`.
 *
 * @module
 */
import type { OmniMessage, ToolCallMessage } from "../../protocol/types.ts";
import { VERSION } from "../../version.ts";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../state/ids.ts";
import type { ApprovalVerdict } from "../../agent/approval.ts";
import {
  ANSWER_AGAIN,
  approvalAnswer,
  APPROVE_PROMPT,
  NOTE_PROMPT,
  openTerminal,
  PROMPT_REASONS,
  type Terminal,
} from "../_approval_prompt.ts";
import { type ApprovalFlow, type AskPerson, createApprovalFlow } from "../_approval_flow.ts";
import type { Session } from "../../agent/session.ts";
import { type GoalStart, runTask } from "../../agent/run_task.ts";
import { goalStartLabel } from "../../display/labels.ts";
import type { Command, CommandContext } from "../command.ts";
import { createRenderer, type Renderer, terminalMarkdown } from "../render/mod.ts";
import { builtinToolPreviews } from "../../agent/tool_previews.ts";
import { createPriceBook, type Price } from "../../inspect/pricing.ts";
import { projectConfigPathOf } from "../../trace/layout.ts";
import { addSignals } from "./_signals.ts";
import { holdEnding } from "../_ending_hold.ts";
import { offerFirstModel } from "./_first_model.ts";
import { startTelemetry } from "./_telemetry.ts";
import { HELP, parse, type RunFlags } from "./_run_flags.ts";

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
  const renderer = createRenderer({
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
    ...(io.color && io.isTty
      ? { markdown: { ...await terminalMarkdown(), mask: (t: string) => session.maskSecrets(t) } }
      : {}),
  });
  // A resumed session's calls go on numbering after the ones it recorded (all its files).
  // (The trace reader and its schemas load only then: a new session has nothing recorded.)
  if (session.resumedHistory !== undefined) {
    const { recordedCallIds, sessionFilesThrough } = await import(
      "../../inspect/recorded_calls.ts"
    );
    renderer.startSession(await recordedCallIds(await sessionFilesThrough(session.tracePath)));
  }
  return renderer;
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

/** Asking on the terminal; `cancel()` stops a pending question (false: none pending). */
interface TerminalAsker {
  ask(call: ToolCallMessage): Promise<ApprovalVerdict>;
  cancel(): boolean;
}

function terminalAsker(
  io: CommandContext["io"],
  terminal: Terminal,
  renderer: Renderer | undefined,
  flow: ApprovalFlow,
  stop: () => void,
): TerminalAsker {
  let cancelPrompt: (() => void) | undefined;
  // The prompt goes to stderr; a redirected stderr gets a transcript and the terminal the prompt.
  const stderrIsTerminal = Deno.stderr.isTerminal();
  const say = (text: string) => {
    io.err(text);
    if (!stderrIsTerminal) terminal.write(text);
  };
  /** One answer, typed key by key on the terminal; a redirected stderr gets a transcript. */
  const read = async (prompt: string): Promise<string | "eof" | "interrupt" | "stop"> => {
    const ac = new AbortController();
    cancelPrompt = () => ac.abort();
    const got = await terminal.keys.answer(prompt, ac.signal).finally(() =>
      cancelPrompt = undefined
    );
    const typed = got === "eof" || got === "interrupt" || got === "stop" ? "" : got;
    if (!stderrIsTerminal) io.err(`${prompt}${typed}\n`);
    return got;
  };
  const person: AskPerson = async (call, q) => {
    renderer?.beginPrompt(call);
    for (const line of q.lines) say(`${line}\n`);
    for (let again = false;; again = true) {
      if (again) say(`${ANSWER_AGAIN}\n`);
      const got = await read(APPROVE_PROMPT);
      if (got === "eof") return denied(renderer, call, PROMPT_REASONS.eof);
      if (got === "interrupt" || got === "stop") return stopped(renderer, call, stop);
      const d = approvalAnswer(got);
      if (d === "stop") return stopped(renderer, call, stop);
      if (d === null) continue;
      let note: string | undefined;
      if (d === "deny") {
        const n = await read(NOTE_PROMPT);
        if (n === "interrupt" || n === "stop") return stopped(renderer, call, stop);
        if (n !== "eof") note = n;
      }
      const settled = q.settle(d, note);
      if (settled.said) say(`${settled.said}\n`);
      renderer?.endPrompt(call, settled.verdict.decision, undefined, settled.verdict.reason);
      return settled.verdict;
    }
  };
  return {
    cancel() {
      if (!cancelPrompt) return false;
      cancelPrompt();
      return true;
    },
    ask: (call) =>
      flow.ask(call, person, (c, line) => {
        renderer?.beginPrompt(c);
        say(`${line}\n`);
        renderer?.endPrompt(c);
      }),
  };
}

/** A question the terminal closed on: denied. */
function denied(
  renderer: Renderer | undefined,
  call: ToolCallMessage,
  reason: string,
): ApprovalVerdict {
  renderer?.endPrompt(call, "deny", undefined, reason);
  return { decision: "deny", reason };
}

/** Ctrl-C or Escape at the question: the whole task stops (nothing is recorded for the call). */
function stopped(
  renderer: Renderer | undefined,
  call: ToolCallMessage,
  stop: () => void,
): ApprovalVerdict {
  stop();
  renderer?.endPrompt(call);
  return { decision: "deny", reason: PROMPT_REASONS.interrupt };
}

/** The `[goal] …` line a goal starts with. */
function goalLine(start: GoalStart): string {
  return goalStartLabel({ ...start, hint: "raise with --max-rounds / --budget" });
}

async function run(args: string[], ctx: CommandContext): Promise<number> {
  const f = await parse(args);
  const { io } = ctx;
  // Approvals are answered on the terminal, never by piped input.
  const terminal = openTerminal();
  const ctl = new AbortController();
  const stop = () => ctl.abort(new DOMException("stopped at the approval question", "AbortError"));
  let renderer: Renderer | undefined;
  let asker: TerminalAsker | undefined;
  let removeSignals = () => {};
  const show = (msg: OmniMessage) => {
    if (f.json) io.out(JSON.stringify(msg) + "\n");
    else renderer!.push(msg);
  };
  // penguin.jsonc narrows the options (applied once the workspace is known).
  const ended = await runTask({ ...f, ...(ctx.root !== undefined ? { root: ctx.root } : {}) }, {
    signal: ctl.signal,
    warn: io.err,
    // Without a terminal nobody is asked: the mode's own denial reasons apply.
    ...(terminal !== null ? { ask: (call: ToolCallMessage) => asker!.ask(call) } : {}),
    // A first run on a terminal is offered the recommended model of the provider whose key is set.
    ...(f.resume === undefined && f.provider === undefined && terminal !== null
      ? {
        beforeOpen: async () => {
          await offerFirstModel(ctx, f.projectId);
        },
      }
      : {}),
    telemetry: (agent) => startTelemetry(ctx, agent),
    opened: async (session) => {
      renderer = await runRenderer(ctx, f, session);
      announce(io, f, session);
      const flow = createApprovalFlow(session, io.color);
      asker = terminal !== null ? terminalAsker(io, terminal, renderer, flow, stop) : undefined;
      removeSignals = addSignals(() => {
        // At the approval question the stop is the question's own; elsewhere the signal's.
        if (!asker?.cancel()) ctl.abort(new DOMException("interrupted by a signal", "AbortError"));
      });
      renderer?.beginTask();
    },
    onMessage: show,
    onWaiting: (running) => {
      if (!f.json) {
        io.err(`[background] waiting for ${running} background subagent(s) to finish…\n`);
      }
    },
    onGoalStart: (start) => renderer?.line(goalLine(start), "plain"),
    ending: () => {
      // Until main() has told the end: a signal now must not cut the last walk short.
      holdEnding(io.err);
      removeSignals();
      renderer?.endTask();
    },
  });
  io.err(resumeHint(ctx, f, ended.sessionId));
  return ended.completed ? 0 : 1;
}

/** The `run` command. */
export const runCommand: Command = {
  path: ["run"],
  summary: "run one agent task in a workspace until it is done",
  help: HELP,
  run,
};
