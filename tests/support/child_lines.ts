/**
 * Reading a child process's output up to its first line (or a marker), for tests that
 * wait on a helper's "ready" line instead of on a clock.
 *
 * @module
 */

/**
 * Read from `reader` until the text holds `needle` (a newline unless told)
 * or the stream ends; returns all text read, including anything after the
 * needle that came in the same chunk.
 */
export async function readUntil(
  reader: ReadableStreamDefaultReader<string>,
  needle = "\n",
): Promise<string> {
  let text = "";
  while (!text.includes(needle)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  return text;
}
