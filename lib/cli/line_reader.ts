/**
 * The one line reader of the CLI: lines of stdin or of the terminal, read
 * lazily, for approval prompts, piped chat input and confirmations.
 *
 * @module
 */

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

/** One line typed on stdin (without its end; "" at end of input). */
export async function readStdinLine(): Promise<string> {
  return (await lineReader(() => Deno.stdin.readable).next()) ?? "";
}
