/**
 * Reading a secret without putting it on the command line: from standard
 * input when it is not a terminal (one trailing newline dropped), else from a
 * prompt on the terminal that does not echo what is typed.
 *
 * The prompt reads in raw mode: Enter ends the value, Backspace removes the
 * last character, Ctrl-C or Ctrl-D on an empty line cancels (a usage error:
 * nothing is stored). The terminal mode is restored on every path.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";

const CTRL_C = 0x03;
const CTRL_D = 0x04;
const BACKSPACE = [0x08, 0x7f];

/** Remove the last UTF-8 character from `bytes` (what the prompt collected so far). */
function dropLastChar(bytes: number[]): void {
  // Continuation bytes are 10xxxxxx; the character starts at the first byte that is not one.
  while (bytes.length > 0 && (bytes[bytes.length - 1]! & 0xc0) === 0x80) bytes.pop();
  bytes.pop();
}

/** Read one line from the terminal on stdin without echo, after writing `prompt` to stderr. */
async function promptNoEcho(prompt: string, what: string): Promise<string> {
  const enc = new TextEncoder();
  const bytes: number[] = [];
  const buf = new Uint8Array(256);
  // Raw before the prompt shows: a Ctrl-C typed at the prompt is then a byte read here (a
  // cancel), never the terminal's SIGINT to the whole foreground group.
  Deno.stdin.setRaw(true);
  try {
    Deno.stderr.writeSync(enc.encode(prompt));
    for (;;) {
      const n = await Deno.stdin.read(buf);
      if (n === null) break;
      for (const b of buf.subarray(0, n)) {
        if (b === 0x0d || b === 0x0a) return new TextDecoder().decode(new Uint8Array(bytes));
        if (b === CTRL_C || (b === CTRL_D && bytes.length === 0)) {
          throw new PenguinError("usage", `Cancelled: no ${what} was entered; nothing was stored`);
        }
        if (b === CTRL_D) return new TextDecoder().decode(new Uint8Array(bytes));
        if (BACKSPACE.includes(b)) dropLastChar(bytes);
        else if (b >= 0x20 || b === 0x09) bytes.push(b);
      }
    }
    return new TextDecoder().decode(new Uint8Array(bytes));
  } finally {
    Deno.stdin.setRaw(false);
    Deno.stderr.writeSync(enc.encode("\n"));
  }
}

/** All of standard input, one trailing newline (`\n` or `\r\n`) dropped. */
async function readAllStdin(): Promise<string> {
  return (await new Response(Deno.stdin.readable).text()).replace(/\r?\n$/, "");
}

/**
 * A secret from standard input: prompted for without echo (`prompt`) when
 * stdin is a terminal, else read whole. `what` names it in errors. An empty
 * value is a usage error.
 */
export async function readSecret(prompt: string, what: string): Promise<string> {
  const value = Deno.stdin.isTerminal() ? await promptNoEcho(prompt, what) : await readAllStdin();
  if (value === "") {
    throw new PenguinError(
      "usage",
      Deno.stdin.isTerminal()
        ? `The ${what} is empty; nothing was stored`
        : `The ${what} read from standard input is empty; nothing was stored`,
    );
  }
  return value;
}
