/**
 * The approval question as `penguin run` and a piped `penguin chat` ask it:
 * the answer is read from the terminal (`/dev/tty`, or stdin when stdin is
 * that terminal), never from piped input, and only `y`/`yes`/Enter, `a`
 * (yes, and for the rest of the session) or `n`/`no` settle it — anything
 * else asks again. A `n` is followed by an optional note to the model.
 * Escape or Ctrl-C stops the task at once: the answer is read key by key
 * (`_terminal_answer.ts`), Enter settles it.
 *
 * @module
 */
import type { ApprovalVerdict } from "../agent/approval.ts";
import { DENIAL_REASONS } from "../agent/approval.ts";
import { type LineReader, lineReader } from "./line_reader.ts";
import { escapeC1 } from "./json.ts";
import {
  type AnswerTerminal,
  createAnswerTerminal,
  stdinKeys,
  ttyKeys,
} from "./_terminal_answer.ts";

/** The approval question. */
export const APPROVE_PROMPT = "? Approve this tool call? [Y/a/n] ";
/** Said when an answer is neither yes nor no. */
export const ANSWER_AGAIN =
  "Please answer y (yes, or Enter), a (yes, for the rest of this session) or n (no); Esc or Ctrl-C stops the task.";
/** Asked after `n`. */
export const NOTE_PROMPT = "  Note to the model (Enter for none): ";

/** Reasons of the denials a prompt produces. */
export const PROMPT_REASONS = {
  /** `n` / `no`. */
  no: DENIAL_REASONS.user,
  /** Ctrl-C or Escape at the prompt: the task stops. */
  interrupt: "the user stopped the task at the approval prompt",
  /** The terminal closed before an answer. */
  eof: "the terminal closed before the approval prompt was answered",
} as const;

/** A settled answer: yes, yes for the session, no. */
export type PromptAnswer = "allow" | "session" | "deny";

/**
 * `y`/`yes`/empty → allow, `a`/`always` → session, `n`/`no` → deny, a line
 * holding Escape → stop, anything else → null (ask again).
 */
export function approvalAnswer(text: string): PromptAnswer | "stop" | null {
  if (text.includes("\x1b")) return "stop";
  const t = text.trim().toLowerCase();
  if (t === "" || t === "y" || t === "yes") return "allow";
  if (t === "a" || t === "always") return "session";
  if (t === "n" || t === "no") return "deny";
  return null;
}

/** The verdict of a settled answer (a person answered); `rule` is what `session` remembers. */
export function answerVerdict(d: PromptAnswer, rule?: string, note?: string): ApprovalVerdict {
  if (d === "deny") {
    return {
      decision: "deny",
      reason: PROMPT_REASONS.no,
      by: "user",
      scope: "call",
      ...(note?.trim() ? { note: note.trim() } : {}),
    };
  }
  return d === "session" && rule !== undefined
    ? { decision: "allow", by: "user", scope: "session", rule }
    : { decision: "allow", by: "user", scope: "call" };
}

/** The user's terminal, for questions that piped input must never answer. */
export interface Terminal {
  /** Lines typed on the terminal (cooked mode: the terminal echoes them). */
  lines: LineReader;
  /** Answers read key by key (raw mode for the question only): Escape and Ctrl-C act at once. */
  keys: AnswerTerminal;
  /**
   * Show text on the terminal when stdout/stderr are redirected: written to
   * whichever of stderr or stdout is a terminal (nothing when neither is;
   * writing `/dev/tty` itself would need more than penguin's permissions).
   */
  write(text: string): void;
}

const enc = new TextEncoder();

/** Write to stderr or stdout, whichever is a terminal. */
function toTerminal(text: string): void {
  if (Deno.stderr.isTerminal()) Deno.stderr.writeSync(enc.encode(escapeC1(text)));
  else if (Deno.stdout.isTerminal()) Deno.stdout.writeSync(enc.encode(escapeC1(text)));
}

/**
 * Open the controlling terminal for reading, `/dev/tty` (or stdin where it
 * is a terminal and there is no `/dev/tty`); null when the process has none
 * (a pipe under cron or CI).
 */
export function openTerminal(): Terminal | null {
  if (Deno.build.os !== "windows") {
    try {
      const file = Deno.openSync("/dev/tty", { read: true });
      // Stdin, when it is the terminal, is set raw by Deno itself; else /dev/tty through stty.
      const keys = Deno.stdin.isTerminal() ? stdinKeys() : ttyKeys(file);
      return {
        lines: lineReader(() => file.readable),
        keys: createAnswerTerminal(keys, toTerminal),
        write: toTerminal,
      };
    } catch {
      // no controlling terminal
    }
  }
  if (!Deno.stdin.isTerminal()) return null;
  return {
    lines: lineReader(() => Deno.stdin.readable),
    keys: createAnswerTerminal(stdinKeys(), toTerminal),
    write: toTerminal,
  };
}
