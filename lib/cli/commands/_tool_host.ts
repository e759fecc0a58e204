/**
 * `penguin __tool-host` (hidden): serve the file tools over stdin/stdout
 * from inside the session's sandbox. Started only by penguin itself
 * (lib/tools/host/client.ts); not a user command.
 *
 * @module
 */
import { serveToolHost } from "../../tools/host/serve.ts";

/** Characters gathered from a reply's pieces before they are encoded and written. */
const WRITE_CHARS = 64 * 1024;

/** Serve until stdin closes; exit code 0. */
export async function runToolHost(): Promise<number> {
  // One buffer refilled: a reply holding an image goes out a piece at a time, its bytes never whole.
  const enc = new TextEncoder();
  const buffer = new Uint8Array(4 * WRITE_CHARS);
  const writeText = (text: string) => {
    for (let rest = text; rest !== "";) {
      const { read, written } = enc.encodeInto(rest, buffer);
      let off = 0;
      while (off < written) off += Deno.stdout.writeSync(buffer.subarray(off, written));
      rest = rest.slice(read);
    }
  };
  await serveToolHost({
    input: Deno.stdin.readable,
    write(line) {
      let text = "";
      for (const piece of line) {
        text += piece;
        if (text.length >= WRITE_CHARS) {
          writeText(text);
          text = "";
        }
      }
      writeText(text);
    },
  });
  return 0;
}
