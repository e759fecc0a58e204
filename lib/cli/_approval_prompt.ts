/**
 * The approval question as `penguin run` and a piped `penguin chat` ask it:
 * the answer is read from the terminal (`/dev/tty`, or stdin when stdin is
 * that terminal), never from piped input, and only `y`/`yes`/Enter or
 * `n`/`no` settle it — anything else asks again.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";
import type { ApprovalMode, ApprovalVerdict } from "../agent/approval.ts";
import { DENIAL_REASONS } from "../agent/approval.ts";

/** The approval question. */
export const APPROVE_PROMPT = "? Approve this tool call? [Y/n] ";
/** Said when an answer is neither yes nor no. */
export const ANSWER_AGAIN = "Please answer y (yes, or Enter) or n (no).";

/** Reasons of the denials a prompt produces. */
export const PROMPT_REASONS = {
  /** `n` / `no`. */
  no: DENIAL_REASONS.user,
  /** Ctrl-C at the prompt. */
  interrupt: "the user pressed Ctrl-C at the approval prompt",
  /** The terminal closed before an answer. */
  eof: "the terminal closed before the approval prompt was answered",
} as const;

/** `y`/`yes`/empty → allow, `n`/`no` → deny, anything else → null (ask again). */
export function approvalAnswer(text: string): "allow" | "deny" | null {
  const t = text.trim().toLowerCase();
  if (t === "" || t === "y" || t === "yes") return "allow";
  if (t === "n" || t === "no") return "deny";
  return null;
}

/** The verdict of a settled answer. */
export function answerVerdict(d: "allow" | "deny"): ApprovalVerdict {
  return d === "allow" ? { decision: "allow" } : { decision: "deny", reason: PROMPT_REASONS.no };
}

/** Lines read from one readable; a read in flight survives an interrupted wait. */
export interface LineReader {
  /** The next line without its end, or null at end of input. */
  next(): Promise<string | null>;
}

/**
 * Lines of `readable`, read lazily: nothing is read before the first
 * {@linkcode LineReader.next}, so keys typed ahead on a terminal that is
 * never asked stay for the shell.
 */
export function lineReader(readable: () => ReadableStream<Uint8Array>): LineReader {
  let reader: ReadableStreamDefaultReader<string> | undefined;
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
      reader ??= readable().pipeThrough(new TextDecoderStream()).getReader();
      const r = await reader.read().catch(() => ({ done: true as const, value: undefined }));
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

/** The user's terminal, for questions that piped input must never answer. */
export interface Terminal {
  /** Lines typed on the terminal (cooked mode: the terminal echoes them). */
  lines: LineReader;
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
  if (Deno.stderr.isTerminal()) Deno.stderr.writeSync(enc.encode(text));
  else if (Deno.stdout.isTerminal()) Deno.stdout.writeSync(enc.encode(text));
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
      return { lines: lineReader(() => file.readable), write: toTerminal };
    } catch {
      // no controlling terminal
    }
  }
  if (!Deno.stdin.isTerminal()) return null;
  return { lines: lineReader(() => Deno.stdin.readable), write: toTerminal };
}

/**
 * The usage error for a mode that must ask when no terminal can answer:
 * `always-ask` would deny everything without one. Other modes pass.
 * `source` names the policy file that chose the mode, when one did.
 */
export function requireTerminalFor(
  mode: ApprovalMode,
  command: string,
  terminal: boolean,
  source?: string,
): void {
  if (mode !== "always-ask" || terminal) return;
  const fix = source === undefined
    ? "pass --approve read-only, deny-all or allow-all"
    : `${source} sets it; run from a terminal, or change "approval" there`;
  throw new PenguinError(
    "usage",
    `${command}: approval mode always-ask needs a terminal to answer its prompts, and there is none ` +
      `(input is piped and /dev/tty is unavailable): ${fix}`,
  );
}
