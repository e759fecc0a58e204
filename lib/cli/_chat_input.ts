/**
 * Where `penguin chat` gets its input: the {@linkcode ChatInput} contract,
 * and its plain-lines implementation (a pipe, a file, a cooked terminal).
 * The raw-mode terminal implementation is in `_chat_tty.ts`.
 *
 * @module
 */
import type { ApprovalDecision, ToolCallMessage } from "../protocol/types.ts";
import type { Renderer } from "./render/mod.ts";

/** The approval question. */
export const APPROVE_PROMPT = "? Approve this tool call? [Y/n] ";
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
  /** Ask about one tool call (`y`/`yes` or Enter allow, `n`/`no` deny, EOF deny). */
  askApproval(call: ToolCallMessage): Promise<ApprovalDecision>;
  /** A task started: typing now steers, Ctrl-C aborts. */
  taskStarted(task: TaskHandle): void;
  /** The task ended (called before its stats are printed). */
  taskEnded(): void;
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

/** `y`/`yes`/anything → allow, `n`/`no` → deny. */
export function approvalAnswer(text: string): ApprovalDecision {
  return /^(n|no)$/i.test(text.trim()) ? "deny" : "allow";
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

/** The line confirming queued steering. */
export function steeringNotice(text: string): string {
  return `» steering queued (delivered with the next turn): ${text}`;
}

/** Lines of stdin, read lazily; a read in flight survives an interrupted wait. */
function lineSource(): { next(): Promise<string | null> } {
  const reader = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let done = false;
  let inflight: Promise<string | null> | null = null;
  const read = async (): Promise<string | null> => {
    while (true) {
      const nl = buf.indexOf("\n");
      if (nl !== -1) {
        const line = buf.slice(0, nl).replace(/\r$/, "");
        buf = buf.slice(nl + 1);
        return line;
      }
      if (done) {
        if (buf === "") return null;
        const line = buf;
        buf = "";
        return line;
      }
      const r = await reader.read();
      if (r.done) done = true;
      else buf += r.value;
    }
  };
  return {
    next() {
      inflight ??= read().finally(() => (inflight = null));
      return inflight;
    },
  };
}

/**
 * Input from plain lines (a pipe, a file, or a terminal in cooked mode):
 * each line is one message (a trailing `\` joins the next line), approvals
 * read the next line, EOF ends the chat. Ctrl-C (SIGINT) aborts a running
 * task, denies a pending approval, or ends the chat when idle. `echo` writes
 * each message after the prompt, for transcripts of piped input.
 */
export function createLineInput(deps: InputDeps & { echo: boolean }): ChatInput {
  const { write, renderer, echo } = deps;
  const lines = lineSource();
  let interrupt: (() => void) | null = null;
  let task: TaskHandle | null = null;
  let terminated = false;
  const unlisten = [
    listen("SIGINT", () => {
      if (interrupt) interrupt();
      else task?.abort();
    }),
    listen("SIGTERM", () => {
      terminated = true;
      task?.abort();
      interrupt?.();
    }),
  ];
  /** The next line, or null at EOF or on Ctrl-C. */
  const readLine = () =>
    new Promise<string | null>((resolve) => {
      interrupt = () => resolve(null);
      lines.next().then(resolve, () => resolve(null));
    }).finally(() => (interrupt = null));

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
    async askApproval(call) {
      renderer.beginPrompt(call);
      write(APPROVE_PROMPT);
      const answer = await readLine();
      if (echo || answer === null) write(`${answer ?? ""}\n`);
      const d = answer === null ? "deny" : approvalAnswer(answer);
      renderer.endPrompt(call, d);
      return d;
    },
    taskStarted(t) {
      task = t;
    },
    taskEnded() {
      task = null;
    },
    close() {
      for (const off of unlisten) off();
    },
  };
}
