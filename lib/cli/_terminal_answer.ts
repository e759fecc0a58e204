/**
 * One answer typed on the user's terminal, read key by key: the terminal is
 * in raw mode for the question only, so Escape and Ctrl-C act at once (as
 * in chat's own input) while the answer itself is typed, edited and settled
 * with Enter, drawn after its prompt by penguin.
 *
 * Raw mode is stdin's own (`Deno.stdin.setRaw`) when stdin is the terminal.
 * When it is not (input piped in), `/dev/tty` is set raw with `stty`, since
 * Deno sets only its own stdin raw: its settings are saved with `stty -g`
 * and put back when the answer settles or is cancelled, and at exit. Keys
 * are decoded by the chat's line editor, which tells a lone Escape from an
 * arrow key's `ESC [ A` by the bytes read with it, never by a timer.
 *
 * Bytes typed while no question is open are dropped, so nothing typed
 * during the task answers a question the person has not seen.
 *
 * @module
 */
import { ttyMode } from "../sandbox/tty_mode.ts";
import { createLineEditor, layoutInput, redrawInput } from "./_line_editor.ts";

/** How one answer ended: the typed line, or Escape, Ctrl-C, end of input. */
export type TypedAnswer = string | "stop" | "interrupt" | "eof";

/** A terminal that answers questions key by key. */
export interface AnswerTerminal {
  /**
   * Show `prompt` and read one answer: the line on Enter, "stop" on
   * Escape, "interrupt" on Ctrl-C or when `signal` aborts, "eof" when the
   * terminal closes or on Ctrl-D with nothing typed.
   */
  answer(prompt: string, signal?: AbortSignal): Promise<TypedAnswer>;
}

/** Where keys come from, and how the terminal is put in and out of raw mode. */
export interface KeySource {
  /** Read bytes into `buf`; null at end of input. */
  read(buf: Uint8Array): Promise<number | null>;
  /** Raw mode on (false when it could not be set) or back to what it was. */
  setRaw(on: boolean): boolean;
}

/** Stdin, when it is the terminal. */
export function stdinKeys(): KeySource {
  return {
    read: (buf) => Deno.stdin.read(buf),
    setRaw(on) {
      try {
        Deno.stdin.setRaw(on);
        return true;
      } catch {
        return false;
      }
    },
  };
}

/** `/dev/tty` opened for reading (input is piped), set raw with `stty`. */
export function ttyKeys(file: Deno.FsFile): KeySource {
  const mode = ttyMode();
  return {
    read: (buf) => file.read(buf),
    setRaw(on) {
      if (on) return mode.enter();
      mode.leave();
      return true;
    },
  };
}

/** The terminal's width (80 when it has none). */
function columns(): number {
  try {
    return Deno.consoleSize().columns;
  } catch {
    return 80;
  }
}

/** Chunks of typed text, read only while a question is open. */
interface Chunks {
  /** The next chunk, null at end of input, "aborted" when `signal` aborts first. */
  next(signal?: AbortSignal): Promise<string | null | "aborted">;
  /** A question opens (true) or closes (false): what arrives while none is open is dropped. */
  open(on: boolean): void;
}

function chunksOf(keys: KeySource): Chunks {
  const buf = new Uint8Array(4096);
  const dec = new TextDecoder();
  const got: (string | null)[] = [];
  let reading = false;
  let asking = false;
  let wake: (() => void) | null = null;
  /** Keep one read in flight (it outlives a cancelled question). */
  const pump = () => {
    if (reading) return;
    reading = true;
    keys.read(buf).then((n) => n, () => null).then((n) => {
      reading = false;
      if (!asking) return;
      got.push(n === null ? null : dec.decode(buf.subarray(0, n), { stream: true }));
      wake?.();
    });
  };
  return {
    next(signal) {
      if (got.length > 0) return Promise.resolve(got.shift()!);
      if (signal?.aborted) return Promise.resolve("aborted");
      pump();
      return new Promise((resolve) => {
        const onAbort = () => {
          wake = null;
          resolve("aborted");
        };
        wake = () => {
          wake = null;
          signal?.removeEventListener("abort", onAbort);
          resolve(got.shift()!);
        };
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    },
    open(on) {
      asking = on;
      got.length = 0;
    },
  };
}

/**
 * Answers read from `keys`; `display` draws on the terminal (the prompt,
 * the typed text) and is a no-op when no output is a terminal.
 */
export function createAnswerTerminal(
  keys: KeySource,
  display: (text: string) => void,
): AnswerTerminal {
  const chunks = chunksOf(keys);
  return {
    async answer(prompt, signal) {
      const editor = createLineEditor();
      const raw = keys.setRaw(true);
      const restore = () => keys.setRaw(false);
      if (raw) globalThis.addEventListener("unload", restore);
      let drawn = 0;
      const draw = () => {
        const l = layoutInput(prompt, "", editor.text(), editor.cursor(), columns());
        display(redrawInput(drawn, l));
        drawn = l.cursorRow;
      };
      /** Leave `shown` on screen after the prompt (with `mark`) and go to the next line. */
      const settle = <T extends TypedAnswer>(result: T, shown: string, mark = ""): T => {
        if (raw) {
          const l = layoutInput(prompt, "", shown, shown.length, columns());
          display(redrawInput(drawn, l) + mark + "\r\n");
        } else if (mark !== "") display("\n"); // a cooked terminal echoed the line and its end
        return result;
      };
      chunks.open(true);
      if (raw) draw();
      else display(prompt);
      try {
        for (;;) {
          const chunk = await chunks.next(signal);
          if (chunk === "aborted") return settle("interrupt", editor.text(), "^C");
          if (chunk === null) return settle("eof", editor.text(), raw ? "" : " ");
          // Without raw mode the terminal sends whole lines: a line end is Enter.
          for (const ev of editor.feed(raw ? chunk : chunk.replace(/\r?\n/g, "\r"))) {
            if (ev.type === "submit") return settle(ev.text, ev.text);
            if (ev.type === "interrupt") return settle("interrupt", editor.text(), "^C");
            if (ev.type === "escape") return settle("stop", editor.text(), "^C");
            if (ev.type === "eof") return settle("eof", editor.text());
          }
          if (raw) draw();
        }
      } finally {
        chunks.open(false);
        if (raw) {
          globalThis.removeEventListener("unload", restore);
          restore();
        }
      }
    },
  };
}
