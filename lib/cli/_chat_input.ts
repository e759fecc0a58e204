/**
 * Where `penguin chat` gets its input: the {@linkcode ChatInput} contract,
 * and its plain-lines implementation (a pipe, a file, a cooked terminal).
 * The raw-mode terminal implementation is in `_chat_tty.ts`.
 *
 * @module
 */
import { ENDING_SIGNALS } from "./_ending_signals.ts";
import type { ToolCallMessage } from "../protocol/types.ts";
import { type ApprovalVerdict, DENIAL_REASONS } from "../agent/approval.ts";
import type { Renderer } from "./render/mod.ts";
import {
  ANSWER_AGAIN,
  approvalAnswer,
  APPROVE_PROMPT,
  NOTE_PROMPT,
  PROMPT_REASONS,
  type PromptAnswer,
  type Terminal,
} from "./_approval_prompt.ts";
import type { ApprovalQuestion } from "./_approval_flow.ts";
import { lineReader } from "./line_reader.ts";

export { ANSWER_AGAIN, approvalAnswer, APPROVE_PROMPT, NOTE_PROMPT, PROMPT_REASONS };

/** The exit confirmation question. */
export const EXIT_PROMPT = "Exit penguin? [y/N] ";
/** The input prompt and its continuation-line prefix. */
export const PROMPT = "> ";
/** Continuation-line prefix. */
export const CONT_PROMPT = "… ";

/** The running task, as the input side sees it. */
export interface TaskHandle {
  /** Abort the task. */
  abort(): void;
  /** Queue steering text; false when the task no longer takes it. */
  steer(text: string): boolean;
}

/** An input source of the chat loop. */
export interface ChatInput {
  /** The next message typed at the idle prompt, or null to exit. */
  nextMessage(): Promise<string | null>;
  /**
   * Put one tool call to the person: show `question.lines`, then read `y`
   * (or Enter), `a` or `n` and a note (anything else asks again), settled by
   * `question`. Ctrl-C or Escape stops the running task instead.
   */
  askApproval(call: ToolCallMessage, question: ApprovalQuestion): Promise<ApprovalVerdict>;
  /** A task started: typing now steers, Ctrl-C aborts. */
  taskStarted(task: TaskHandle): void;
  /** The task ended (called before its stats are printed). */
  taskEnded(): void;
  /**
   * Hand the raw keys to `run` (a picker) until it resolves: `read` gives
   * the next typed chunk, or null when input ended. Null when there is no
   * raw-mode terminal to pick on.
   */
  pick<T>(run: (read: () => Promise<string | null>) => Promise<T>): Promise<T> | null;
  /** Restore the terminal and stop listening. */
  close(): void;
}

/** What both inputs need. */
export interface InputDeps {
  /** Write to stdout. */
  write(text: string): void;
  /** The renderer (locked while the input area is on screen). */
  renderer: Renderer;
}

/** Listen to `sig` where the platform allows it; returns the remover. */
export function listen(sig: Deno.Signal, fn: () => void): () => void {
  try {
    Deno.addSignalListener(sig, fn);
    return () => Deno.removeSignalListener(sig, fn);
  } catch {
    return () => {}; // e.g. SIGTERM on Windows
  }
}

/**
 * Call `fn` on every signal of `_ending_signals.ts` (SIGTERM, SIGHUP when the terminal closed,
 * SIGQUIT, SIGALRM…), which end a chat alike: the session's end (its last look for armed
 * repositories) still runs. Returns the removers.
 */
export function listenEnding(fn: () => void): (() => void)[] {
  return ENDING_SIGNALS.map((sig) => listen(sig, fn));
}

/** The line confirming queued steering. */
export function steeringNotice(text: string): string {
  return `» steering queued (delivered with the next turn): ${text}`;
}

/**
 * Input from plain lines (a pipe, a file, or a terminal in cooked mode):
 * each line is one message (a trailing `\` joins the next line), EOF ends
 * the chat. Approvals are asked on `terminal` — never answered by the
 * piped lines — and without one they are denied. Ctrl-C (SIGINT) aborts a
 * running task (at an approval question too), or ends the chat when idle.
 * `echo` writes each message after the prompt, for transcripts of piped input.
 */
export function createLineInput(
  deps: InputDeps & { echo: boolean; terminal: Terminal | null },
): ChatInput {
  // Long because: one closure-based input whose methods share the line reader and the pending
  // interrupt; each method is short.
  const { write, renderer, echo, terminal } = deps;
  const lines = lineReader(() => Deno.stdin.readable);
  let interrupt: (() => void) | null = null;
  let task: TaskHandle | null = null;
  let terminated = false;
  const unlisten = [
    listen("SIGINT", () => {
      if (interrupt) interrupt();
      else task?.abort();
    }),
    ...listenEnding(() => {
      terminated = true;
      task?.abort();
      interrupt?.();
    }),
  ];
  /** The next line of `from`, "eof" at its end, "interrupt" on Ctrl-C. */
  const readFrom = (from: { next(): Promise<string | null> }) =>
    new Promise<string | "eof" | "interrupt">((resolve) => {
      interrupt = () => resolve("interrupt");
      from.next().then((l) => resolve(l ?? "eof"), () => resolve("eof"));
    }).finally(() => (interrupt = null));
  const readLine = async () => {
    const l = await readFrom(lines);
    return l === "eof" || l === "interrupt" ? null : l;
  };
  // Prompts go to stdout (the transcript); the terminal sees them there or directly.
  const stdoutIsTerminal = Deno.stdout.isTerminal();
  const say = (text: string) => {
    write(text);
    if (!stdoutIsTerminal) terminal?.write(text);
  };

  return {
    async nextMessage() {
      while (!terminated) {
        if (!echo) write(PROMPT);
        let text = await readLine();
        if (text === null) {
          if (!echo) write("\n");
          return null;
        }
        while (text.endsWith("\\")) {
          if (!echo) write(CONT_PROMPT);
          const more = await readLine();
          if (more === null) break;
          text = `${text.slice(0, -1)}\n${more}`;
        }
        if (echo) write(`${PROMPT}${text.split("\n").join(`\n${CONT_PROMPT}`)}\n`);
        if (text.trim() !== "") return text;
      }
      return null;
    },
    async askApproval(call, question) {
      renderer.beginPrompt(call);
      if (terminal === null || terminated) {
        const reason = DENIAL_REASONS.noAsker;
        renderer.endPrompt(call, "deny", undefined, reason);
        return { decision: "deny", reason };
      }
      for (const line of question.lines) say(`${line}\n`);
      /** One answer line; null when the question ends without one (terminal closed, or stopped). */
      const read = async (prompt: string): Promise<string | "eof" | "stop"> => {
        say(prompt);
        const answer = await readFrom(terminal.lines);
        if (answer === "eof" || answer === "interrupt") write("\n");
        if (answer === "interrupt") return "stop";
        if (answer === "eof") return "eof";
        // The terminal echoed the answer; a redirected stdout gets it for the transcript.
        if (!stdoutIsTerminal) write(`${answer}\n`);
        return approvalAnswer(answer) === "stop" ? "stop" : answer;
      };
      let prompt = APPROVE_PROMPT;
      for (;;) {
        const got = await read(prompt);
        if (got === "stop") {
          task?.abort();
          renderer.endPrompt(call);
          return { decision: "deny", reason: PROMPT_REASONS.interrupt };
        }
        if (got === "eof") {
          renderer.endPrompt(call, "deny", undefined, PROMPT_REASONS.eof);
          return { decision: "deny", reason: PROMPT_REASONS.eof };
        }
        const d = approvalAnswer(got) as PromptAnswer | null;
        if (d === null) {
          prompt = `${ANSWER_AGAIN}\n${APPROVE_PROMPT}`;
          continue;
        }
        const note = d === "deny" ? await read(NOTE_PROMPT) : undefined;
        if (note === "stop") {
          task?.abort();
          renderer.endPrompt(call);
          return { decision: "deny", reason: PROMPT_REASONS.interrupt };
        }
        const settled = question.settle(d, note === "eof" ? undefined : note);
        if (settled.said) say(`${settled.said}\n`);
        renderer.endPrompt(call, settled.verdict.decision, undefined, settled.verdict.reason);
        return settled.verdict;
      }
    },
    taskStarted(t) {
      task = t;
    },
    taskEnded() {
      task = null;
    },
    // Lines are not keys: nothing to pick with.
    pick: () => null,
    close() {
      for (const off of unlisten) off();
    },
  };
}
