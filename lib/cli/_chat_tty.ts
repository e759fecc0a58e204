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
  NOTE_PROMPT,
  PROMPT,
  PROMPT_REASONS,
  steeringNotice,
  type TaskHandle,
} from "./_chat_input.ts";
import { createLineEditor, eraseInput, layoutInput, redrawInput } from "./_line_editor.ts";
import { completeCommand } from "./_chat_commands.ts";

type Mode = "busy" | "idle" | "running" | "approving" | "noting" | "confirm";

/** The chat's input history: what it starts with, and where each change is kept. */
export interface InputHistory {
  /** Earlier messages, oldest first. */
  initial: readonly string[];
  /** Persist the whole history (called after each new message). */
  save(entries: readonly string[]): void;
}

/** Input from a raw-mode terminal on stdin (stdout must be a terminal too). */
export function createTtyInput(deps: InputDeps & { history?: InputHistory }): ChatInput {
  // Long because: one closure-based input whose methods share the editor, the raw-mode terminal and
  // the steering state; each method is short.
  const { write, renderer, history } = deps;
  // Tab completes slash commands at the message prompt only.
  const editor = createLineEditor(
    history?.initial ?? [],
    (text) => (mode === "idle" ? completeCommand(text) : null),
  );
  const remember = (text: string) => {
    const before = editor.history().length;
    editor.remember(text);
    if (editor.history().length !== before) history?.save(editor.history());
  };
  const queued: string[] = [];
  let mode = "busy" as Mode;
  let drawn: number | null = null; // cursor row within the drawn input area
  let paused = false;
  let closed = false;
  let stdinEnded = false;
  let waiter: ((text: string | null) => void) | null = null;
  let task: TaskHandle | null = null;
  let abortRequested = false; // the running task was told to stop
  let approval: {
    resolve: (d: ApprovalVerdict) => void;
    call: ToolCallMessage;
    question: ApprovalQuestion;
    saved: string;
    prev: Mode;
  } | null = null;
  let approvals: Promise<unknown> = Promise.resolve();
  /** While a picker runs: where typed chunks go instead of the editor. */
  let tap: ((chunk: string | null) => void) | null = null;

  const columns = () => {
    try {
      return Deno.consoleSize().columns;
    } catch {
      return 80;
    }
  };
  const promptText = () =>
    mode === "approving"
      ? APPROVE_PROMPT
      : mode === "noting"
      ? NOTE_PROMPT
      : mode === "confirm"
      ? EXIT_PROMPT
      : PROMPT;
  const draw = () => {
    const l = layoutInput(promptText(), CONT_PROMPT, editor.text(), editor.cursor(), columns());
    write(redrawInput(drawn ?? 0, l));
    drawn = l.cursorRow;
  };
  const erase = () => {
    if (drawn === null) return;
    write(eraseInput(drawn));
    drawn = null;
  };
  /** Leave `text` on screen after the prompt and move to a fresh line. */
  const commit = (text: string, suffix = "") => {
    const l = layoutInput(promptText(), CONT_PROMPT, text, text.length, columns());
    write(redrawInput(drawn ?? 0, l) + suffix + "\r\n");
    drawn = null;
  };
  const setPaused = (on: boolean) => {
    if (on === paused) return;
    paused = on;
    if (on) renderer.pause();
    else renderer.resume();
  };
  const resolveWaiter = (v: string | null) => {
    const w = waiter;
    waiter = null;
    mode = "busy";
    w?.(v);
  };
  /** End the question with `d`; `shown` false: no decision line (the task was stopped). */
  const finishApproval = (d: ApprovalVerdict, shown = true, said?: string) => {
    const a = approval!;
    approval = null;
    if (said) write(`${said}\r\n`);
    if (shown) renderer.endPrompt(a.call, d.decision, undefined, d.reason);
    else renderer.endPrompt(a.call);
    mode = a.prev;
    editor.set(a.saved);
    a.resolve(d);
  };
  const settleApproval = (answer: PromptAnswer, note?: string) => {
    const { verdict, said } = approval!.question.settle(answer, note);
    finishApproval(verdict, true, said);
  };
  /** Ctrl-C or Escape at the question: the task stops; nothing is recorded for the call. */
  const stopAtQuestion = (typed: string | null) => {
    if (typed !== null) commit(typed, "^C");
    editor.clear();
    abortRequested = true;
    task?.abort();
    finishApproval({ decision: "deny", reason: PROMPT_REASONS.interrupt }, false);
  };

  const onSubmit = (text: string) => {
    switch (mode) {
      case "idle":
        commit(text);
        remember(text);
        resolveWaiter(text);
        return;
      case "busy":
        if (text.trim() !== "") queued.push(text);
        remember(text);
        return;
      case "running": {
        erase();
        setPaused(false);
        if (text.trim() === "") return;
        remember(text);
        if (task?.steer(text)) renderer.line(steeringNotice(text));
        else queued.push(text);
        return;
      }
      case "approving": {
        commit(text);
        const d = approvalAnswer(text);
        if (d === "stop") stopAtQuestion(null);
        else if (d === "deny") mode = "noting";
        else if (d !== null) settleApproval(d);
        else write(`${ANSWER_AGAIN}\r\n`); // asked again by the next draw
        return;
      }
      case "noting":
        commit(text);
        settleApproval("deny", text);
        return;
      case "confirm":
        commit(text);
        if (/^y(es)?$/i.test(text.trim())) resolveWaiter(null);
        else mode = "idle";
        return;
    }
  };

  const onInterrupt = () => {
    switch (mode) {
      case "approving":
      case "noting":
        stopAtQuestion(editor.text());
        return;
      case "running":
        // The first Ctrl-C stops the task and keeps the typed text; the next one clears it.
        if (abortRequested) {
          editor.clear();
          return;
        }
        abortTask();
        return;
      case "idle":
        if (editor.text() !== "") {
          editor.clear();
          return;
        }
        commit("", "^C");
        mode = "confirm";
        return;
      case "confirm":
        commit(editor.text(), "^C");
        editor.clear();
        resolveWaiter(null);
        return;
      case "busy":
        editor.clear();
        return;
    }
  };

  /** Stop the running task; typed text stays in the input for the next prompt. */
  const abortTask = () => {
    abortRequested = true;
    erase();
    setPaused(false);
    task?.abort();
  };

  /** Escape: interrupts a running task, stops it at an approval question; elsewhere nothing. */
  const onEscape = () => {
    if (mode === "approving" || mode === "noting") stopAtQuestion(editor.text());
    else if (mode === "running" && !abortRequested) abortTask();
  };

  const onEof = () => {
    if (mode === "approving" || mode === "noting") {
      commit(editor.text());
      finishApproval({ decision: "deny", reason: PROMPT_REASONS.eof });
    } else if (mode === "idle" || mode === "confirm") {
      commit(editor.text());
      resolveWaiter(null);
    }
  };

  /** After input: show the input area where the state wants one. */
  const refresh = () => {
    if (closed) return;
    if (mode === "idle" || mode === "approving" || mode === "noting" || mode === "confirm") {
      return draw();
    }
    if (mode === "running") {
      if (editor.text() !== "") {
        setPaused(true);
        draw();
      } else {
        erase();
        setPaused(false);
      }
    }
  };

  const feed = (chunk: string) => {
    if (tap !== null) return tap(chunk);
    for (const ev of editor.feed(chunk)) {
      if (ev.type === "submit") onSubmit(ev.text);
      else if (ev.type === "interrupt") onInterrupt();
      else if (ev.type === "escape") onEscape();
      else onEof();
    }
    refresh();
  };

  /** SIGTERM, or stdin closed: abort, deny, and end the chat at the next prompt. */
  const terminate = () => {
    stdinEnded = true;
    tap?.(null);
    task?.abort();
    if (mode === "approving" || mode === "noting") {
      finishApproval({ decision: "deny", reason: PROMPT_REASONS.eof });
    } else if (mode === "idle" || mode === "confirm") resolveWaiter(null);
  };

  Deno.stdin.setRaw(true);
  write("\x1b[?2004h");
  const unlisten = [
    listen("SIGINT", () => {
      onInterrupt();
      refresh();
    }),
    listen("SIGTERM", terminate),
  ];
  (async () => {
    const dec = new TextDecoder();
    const buf = new Uint8Array(4096);
    while (!closed) {
      let n: number | null;
      try {
        n = await Deno.stdin.read(buf);
      } catch {
        n = null;
      }
      if (closed) return;
      if (n === null) return terminate();
      feed(dec.decode(buf.subarray(0, n), { stream: true }));
    }
  })();

  return {
    nextMessage() {
      const next = queued.shift();
      if (next !== undefined) {
        write(`${PROMPT}${next.split("\n").join(`\n${CONT_PROMPT}`)}\n`);
        return Promise.resolve(next);
      }
      if (stdinEnded) return Promise.resolve(null);
      mode = "idle";
      draw();
      return new Promise((resolve) => (waiter = resolve));
    },
    askApproval(call, question) {
      const ask = () =>
        new Promise<ApprovalVerdict>((resolve) => {
          if (stdinEnded || closed) {
            return resolve({ decision: "deny", reason: PROMPT_REASONS.eof });
          }
          const saved = editor.text();
          editor.clear();
          erase();
          setPaused(false);
          renderer.beginPrompt(call);
          for (const line of question.lines) write(`${line}\r\n`);
          const prev = mode === "approving" || mode === "noting" ? "running" : mode;
          approval = { resolve, call, question, saved, prev };
          mode = "approving";
          draw();
        });
      const p = approvals.then(ask);
      approvals = p.catch(() => {});
      return p.then((d) => {
        refresh();
        return d;
      });
    },
    taskStarted(t) {
      task = t;
      abortRequested = false;
      mode = "running";
      refresh();
    },
    taskEnded() {
      task = null;
      erase();
      setPaused(false);
      mode = "busy";
    },
    pick(run) {
      if (stdinEnded || closed) return null;
      const pending: (string | null)[] = [];
      let wake: ((chunk: string | null) => void) | null = null;
      tap = (chunk) => {
        const w = wake;
        wake = null;
        if (w !== null) w(chunk);
        else pending.push(chunk);
      };
      const read = () =>
        pending.length > 0
          ? Promise.resolve(pending.shift()!)
          : stdinEnded
          ? Promise.resolve(null)
          : new Promise<string | null>((resolve) => (wake = resolve));
      erase();
      return run(read).finally(() => (tap = null));
    },
    close() {
      if (closed) return;
      closed = true;
      for (const off of unlisten) off();
      write("\x1b[?2004l");
      try {
        Deno.stdin.setRaw(false);
      } catch {
        // stdin is gone
      }
    },
  };
}
