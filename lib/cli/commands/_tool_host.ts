/**
 * `penguin __tool-host` (hidden): serve the file tools over stdin/stdout
 * from inside the session's sandbox. Started only by penguin itself
 * (lib/tools/host/client.ts); not a user command.
 *
 * @module
 */
import { serveToolHost } from "../../tools/host/serve.ts";

/** Serve until stdin closes; exit code 0. */
export async function runToolHost(): Promise<number> {
  const enc = new TextEncoder();
  await serveToolHost({
    input: Deno.stdin.readable,
    write(line) {
      const data = enc.encode(line);
      let off = 0;
      while (off < data.length) off += Deno.stdout.writeSync(data.subarray(off));
    },
  });
  return 0;
}
