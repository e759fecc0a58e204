/**
 * Reading a model response's body one network read at a time, into one
 * refilled buffer when the body is a byte stream (as fetch's is).
 *
 * A default reader of a byte stream gets a fresh 64 KiB buffer for every
 * read, however few bytes the read brings. A server that writes every
 * event on its own (16 characters of text, under 200 bytes) makes every
 * event a read: four such responses left hundreds of dead 64 KiB backing
 * stores waiting for a collection at any time and took penguin past 300 MB.
 * A bring-your-own-buffer reader hands the same buffer back and forth.
 *
 * @module
 */

/** Bytes of the buffer a response body is read into. */
export const READ_BUFFER_BYTES = 64 * 1024;

/** A response body's reader. */
export interface BodyReader {
  /** The next read. Its bytes are the reader's own buffer: use them before the next read. */
  read(): Promise<ReadableStreamReadResult<Uint8Array>>;
  /** Stop reading the body. */
  cancel(reason?: unknown): Promise<void>;
}

/** A reader of `body`: one refilled buffer for a byte stream, else its default reader. */
export function bodyReader(body: ReadableStream<Uint8Array>): BodyReader {
  let byob: ReadableStreamBYOBReader;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    const reader = body.getReader(); // not a byte stream
    return { read: () => reader.read(), cancel: (reason) => reader.cancel(reason) };
  }
  /** The buffer, while no read has it. */
  let spare: ArrayBuffer | undefined = new ArrayBuffer(READ_BUFFER_BYTES);
  return {
    async read() {
      const buffer = spare ?? new ArrayBuffer(READ_BUFFER_BYTES);
      spare = undefined;
      const r = await byob.read(new Uint8Array(buffer));
      if (r.value !== undefined) spare = r.value.buffer;
      return r.done ? { done: true } : { done: false, value: r.value };
    },
    cancel: (reason) => byob.cancel(reason),
  };
}
