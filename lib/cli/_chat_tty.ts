/**
 * `penguin chat` input from a raw-mode terminal: line editing, multi-line
 * input, bracketed paste, Up/Down history (persisted by the caller), typing
 * while a task runs (steering), Escape to interrupt a running task, and
 * Ctrl-C by state — approving → stop the task (as Escape does there); a
 * `n` answer asks for a note to the model; task running → abort the
 * task, keeping the typed text (a second Ctrl-C clears it); buffer
 * non-empty → clear it; idle and empty → `Exit penguin? [y/N] `, where a
 * second Ctrl-C (or `y`) exits.
 *
 * @module
 */
import type { ToolCallMessage } from "../protocol/types.ts";
import type { ApprovalVerdict } from "../agent/approval.ts";
import type { ApprovalQuestion } from "./_approval_flow.ts";
import type { PromptAnswer } from "./_approval_prompt.ts";
import {
  ANSWER_AGAIN,
  approvalAnswer,
  APPROVE_PROMPT,
  type ChatInput,
  CONT_PROMPT,
  EXIT_PROMPT,
  type InputDeps,
  listen,
  listenEnding,
  NOTE_PROMPT,
  PROMPT,
  PROMPT_REASONS,
  steeringNotice,
  type TaskHandle,
} from "./_chat_input.ts";
import {
  createLineEditor,
  eraseInput,
  layoutInput,
  type LineEditor,
  redrawInput,
} from "./_line_editor.ts";
import { completeCommand } from "./_chat_commands.ts";

type Mode = "busy" | "idle" | "running" | "approving" | "noting" | "confirm";

/** The chat's input history: what it starts with, and where each change is kept. */
export interface InputHistory {
  /** Earlier messages, oldest first. */
  initial: readonly string[];
  /** Persist the whole history (called after each new message). */
  save(entries: readonly string[]): void;
}

/** A pending approval question. */
interface PendingApproval {
  resolve: (d: ApprovalVerdict) => void;
  call: ToolCallMessage;
  question: ApprovalQuestion;
  saved: string;
  prev: Mode;
}

/** The state the input's steps share: the editor, the raw-mode terminal, the steering state. */
interface TtyState {
  write: InputDeps["write"];
  renderer: InputDeps["renderer"];
  history: InputHistory | undefined;
  editor: LineEditor;
  queued: string[];
  mode: Mode;
  /** Cursor row within the drawn input area. */
  drawn: number | null;
  paused: boolean;
  closed: boolean;
  stdinEnded: boolean;
  waiter: ((text: string | null) => void) | null;
  task: TaskHandle | null;
  /** The running task was told to stop. */
  abortRequested: boolean;
  approval: PendingApproval | null;
  approvals: Promise<unknown>;
  /** While a picker runs: where typed chunks go instead of the editor. */
  tap: ((chunk: string | null) => void) | null;
}

function remember(s: TtyState, text: string) {
  const before = s.editor.history().length;
  s.editor.remember(text);
  if (s.editor.history().length !== before) s.history?.save(s.editor.history());
}

function columns() {
  try {
    return Deno.consoleSize().columns;
  } catch {
    return 80;
  }
}

const promptText = (s: TtyState) =>
  s.mode === "approving"
    ? APPROVE_PROMPT
    : s.mode === "noting"
    ? NOTE_PROMPT
    : s.mode === "confirm"
    ? EXIT_PROMPT
    : PROMPT;

function draw(s: TtyState) {
  const l = layoutInput(promptText(s), CONT_PROMPT, s.editor.text(), s.editor.cursor(), columns());
  s.write(redrawInput(s.drawn ?? 0, l));
  s.drawn = l.cursorRow;
}

function erase(s: TtyState) {
  if (s.drawn === null) return;
  s.write(eraseInput(s.drawn));
  s.drawn = null;
}

/** Leave `text` on screen after the prompt and move to a fresh line. */
function commit(s: TtyState, text: string, suffix = "") {
  const l = layoutInput(promptText(s), CONT_PROMPT, text, text.length, columns());
  s.write(redrawInput(s.drawn ?? 0, l) + suffix + "\r\n");
  s.drawn = null;
}

function setPaused(s: TtyState, on: boolean) {
  if (on === s.paused) return;
  s.paused = on;
  if (on) s.renderer.pause();
  else s.renderer.resume();
}

function resolveWaiter(s: TtyState, v: string | null) {
  const w = s.waiter;
  s.waiter = null;
  s.mode = "busy";
  w?.(v);
}

/** End the question with `d`; `shown` false: no decision line (the task was stopped). */
function finishApproval(s: TtyState, d: ApprovalVerdict, shown = true, said?: string) {
  const a = s.approval!;
  s.approval = null;
  if (said) s.write(`${said}\r\n`);
  if (shown) s.renderer.endPrompt(a.call, d.decision, undefined, d.reason);
  else s.renderer.endPrompt(a.call);
  s.mode = a.prev;
  s.editor.set(a.saved);
  a.resolve(d);
}

function settleApproval(s: TtyState, answer: PromptAnswer, note?: string) {
  const { verdict, said } = s.approval!.question.settle(answer, note);
  finishApproval(s, verdict, true, said);
}

/** Ctrl-C or Escape at the question: the task stops; nothing is recorded for the call. */
function stopAtQuestion(s: TtyState, typed: string | null) {
  if (typed !== null) commit(s, typed, "^C");
  s.editor.clear();
  s.abortRequested = true;
  s.task?.abort();
  finishApproval(s, { decision: "deny", reason: PROMPT_REASONS.interrupt }, false);
}

function onSubmit(s: TtyState, text: string) {
  switch (s.mode) {
    case "idle":
      commit(s, text);
      remember(s, text);
      resolveWaiter(s, text);
      return;
    case "busy":
      if (text.trim() !== "") s.queued.push(text);
      remember(s, text);
      return;
    case "running": {
      erase(s);
      setPaused(s, false);
      if (text.trim() === "") return;
      remember(s, text);
      if (s.task?.steer(text)) s.renderer.line(steeringNotice(text));
      else s.queued.push(text);
      return;
    }
    case "approving": {
      commit(s, text);
      const d = approvalAnswer(text);
      if (d === "stop") stopAtQuestion(s, null);
      else if (d === "deny") s.mode = "noting";
      else if (d !== null) settleApproval(s, d);
      else s.write(`${ANSWER_AGAIN}\r\n`); // asked again by the next draw
      return;
    }
    case "noting":
      commit(s, text);
      settleApproval(s, "deny", text);
      return;
    case "confirm":
      commit(s, text);
      if (/^y(es)?$/i.test(text.trim())) resolveWaiter(s, null);
      else s.mode = "idle";
      return;
  }
}

function onInterrupt(s: TtyState) {
  switch (s.mode) {
    case "approving":
    case "noting":
      stopAtQuestion(s, s.editor.text());
      return;
    case "running":
      // The first Ctrl-C stops the task and keeps the typed text; the next one clears it.
      if (s.abortRequested) {
        s.editor.clear();
        return;
      }
      abortTask(s);
      return;
    case "idle":
      if (s.editor.text() !== "") {
        s.editor.clear();
        return;
      }
      commit(s, "", "^C");
      s.mode = "confirm";
      return;
    case "confirm":
      commit(s, s.editor.text(), "^C");
      s.editor.clear();
      resolveWaiter(s, null);
      return;
    case "busy":
      s.editor.clear();
      return;
  }
}

/** Stop the running task; typed text stays in the input for the next prompt. */
function abortTask(s: TtyState) {
  s.abortRequested = true;
  erase(s);
  setPaused(s, false);
  s.task?.abort();
}

/** Escape: interrupts a running task, stops it at an approval question; elsewhere nothing. */
function onEscape(s: TtyState) {
  if (s.mode === "approving" || s.mode === "noting") stopAtQuestion(s, s.editor.text());
  else if (s.mode === "running" && !s.abortRequested) abortTask(s);
}

function onEof(s: TtyState) {
  if (s.mode === "approving" || s.mode === "noting") {
    commit(s, s.editor.text());
    finishApproval(s, { decision: "deny", reason: PROMPT_REASONS.eof });
  } else if (s.mode === "idle" || s.mode === "confirm") {
    commit(s, s.editor.text());
    resolveWaiter(s, null);
  }
}

/** After input: show the input area where the state wants one. */
function refresh(s: TtyState) {
  if (s.closed) return;
  const mode = s.mode;
  if (mode === "idle" || mode === "approving" || mode === "noting" || mode === "confirm") {
    return draw(s);
  }
  if (mode === "running") {
    if (s.editor.text() !== "") {
      setPaused(s, true);
      draw(s);
    } else {
      erase(s);
      setPaused(s, false);
    }
  }
}

function feed(s: TtyState, chunk: string) {
  if (s.tap !== null) return s.tap(chunk);
  for (const ev of s.editor.feed(chunk)) {
    if (ev.type === "submit") onSubmit(s, ev.text);
    else if (ev.type === "interrupt") onInterrupt(s);
    else if (ev.type === "escape") onEscape(s);
    else onEof(s);
  }
  refresh(s);
}

/** SIGTERM, or stdin closed: abort, deny, and end the chat at the next prompt. */
function terminate(s: TtyState) {
  s.stdinEnded = true;
  s.tap?.(null);
  s.task?.abort();
  if (s.mode === "approving" || s.mode === "noting") {
    finishApproval(s, { decision: "deny", reason: PROMPT_REASONS.eof });
  } else if (s.mode === "idle" || s.mode === "confirm") resolveWaiter(s, null);
}

/** Put the terminal in raw mode, listen to signals and read stdin; returns the signal removers. */
function startReading(s: TtyState): (() => void)[] {
  Deno.stdin.setRaw(true);
  s.write("\x1b[?2004h");
  const unlisten = [
    listen("SIGINT", () => {
      onInterrupt(s);
      refresh(s);
    }),
    ...listenEnding(() => terminate(s)),
  ];
  (async () => {
    const dec = new TextDecoder();
    const buf = new Uint8Array(4096);
    while (!s.closed) {
      let n: number | null;
      try {
        n = await Deno.stdin.read(buf);
      } catch {
        n = null;
      }
      if (s.closed) return;
      if (n === null) return terminate(s);
      feed(s, dec.decode(buf.subarray(0, n), { stream: true }));
    }
  })();
  return unlisten;
}

/** The next message: a queued one, else the prompt (see `ChatInput.nextMessage`). */
function nextMessage(s: TtyState): Promise<string | null> {
  const next = s.queued.shift();
  if (next !== undefined) {
    s.write(`${PROMPT}${next.split("\n").join(`\n${CONT_PROMPT}`)}\n`);
    return Promise.resolve(next);
  }
  if (s.stdinEnded) return Promise.resolve(null);
  s.mode = "idle";
  draw(s);
  return new Promise((resolve) => (s.waiter = resolve));
}

/** Ask about `call`, one question at a time (see `ChatInput.askApproval`). */
function askApproval(
  s: TtyState,
  call: ToolCallMessage,
  question: ApprovalQuestion,
): Promise<ApprovalVerdict> {
  const ask = () =>
    new Promise<ApprovalVerdict>((resolve) => {
      if (s.stdinEnded || s.closed) {
        return resolve({ decision: "deny", reason: PROMPT_REASONS.eof });
      }
      const saved = s.editor.text();
      s.editor.clear();
      erase(s);
      setPaused(s, false);
      s.renderer.beginPrompt(call);
      for (const line of question.lines) s.write(`${line}\r\n`);
      const prev = s.mode === "approving" || s.mode === "noting" ? "running" : s.mode;
      s.approval = { resolve, call, question, saved, prev };
      s.mode = "approving";
      draw(s);
    });
  const p = s.approvals.then(ask);
  s.approvals = p.catch(() => {});
  return p.then((d) => {
    refresh(s);
    return d;
  });
}

/** Hand typed chunks to a picker while it runs (see `ChatInput.pick`). */
function pick<T>(
  s: TtyState,
  run: (read: () => Promise<string | null>) => Promise<T>,
): Promise<T> | null {
  if (s.stdinEnded || s.closed) return null;
  const pending: (string | null)[] = [];
  let wake: ((chunk: string | null) => void) | null = null;
  s.tap = (chunk) => {
    const w = wake;
    wake = null;
    if (w !== null) w(chunk);
    else pending.push(chunk);
  };
  const read = () =>
    pending.length > 0
      ? Promise.resolve(pending.shift()!)
      : s.stdinEnded
      ? Promise.resolve(null)
      : new Promise<string | null>((resolve) => (wake = resolve));
  erase(s);
  return run(read).finally(() => (s.tap = null));
}

/** Input from a raw-mode terminal on stdin (stdout must be a terminal too). */
export function createTtyInput(deps: InputDeps & { history?: InputHistory }): ChatInput {
  const s: TtyState = {
    write: deps.write,
    renderer: deps.renderer,
    history: deps.history,
    // Tab completes slash commands at the message prompt only.
    editor: createLineEditor(
      deps.history?.initial ?? [],
      (text) => (s.mode === "idle" ? completeCommand(text) : null),
    ),
    queued: [],
    mode: "busy",
    drawn: null,
    paused: false,
    closed: false,
    stdinEnded: false,
    waiter: null,
    task: null,
    abortRequested: false,
    approval: null,
    approvals: Promise.resolve(),
    tap: null,
  };
  const unlisten = startReading(s);
  return {
    nextMessage: () => nextMessage(s),
    askApproval: (call, question) => askApproval(s, call, question),
    taskStarted(t) {
      s.task = t;
      s.abortRequested = false;
      s.mode = "running";
      refresh(s);
    },
    taskEnded() {
      s.task = null;
      erase(s);
      setPaused(s, false);
      s.mode = "busy";
    },
    pick: (run) => pick(s, run),
    close() {
      if (s.closed) return;
      s.closed = true;
      for (const off of unlisten) off();
      s.write("\x1b[?2004l");
      try {
        Deno.stdin.setRaw(false);
      } catch {
        // stdin is gone
      }
    },
  };
}
