/**
 * gzip and gunzip with the platform's `CompressionStream` /
 * `DecompressionStream`, gunzip measured while it decompresses so a small
 * archive cannot expand without bound.
 *
 * The decompressor turns each input chunk into output in one step, whole:
 * 2 MB of gzip given at once became 2 GB of zeros before the first output
 * chunk could be counted. So the input is fed in slices of
 * {@linkcode GZIP_INPUT_SLICE} bytes (deflate expands at most about 1032:1,
 * so one step yields at most about 8 MiB), and gunzip goes over the data
 * twice: first counting the output and dropping it, refusing past the
 * limit, then, when it fits, writing it into one buffer of the counted
 * size. Each output piece is freed as soon as it is counted or copied
 * (`ArrayBuffer.prototype.transfer(0)`): left to the garbage collector,
 * pieces made outside the JavaScript heap piled up to hundreds of MB. A bomb
 * is refused holding a few MiB; an archive that fits is held once.
 * {@linkcode gunzipFileStream} goes over a file once and holds no more than
 * one piece: the archives penguin unpacks are streamed to disk with it.
 *
 * @module
 */

import { concatBytes } from "../protocol/bytes.ts";

/** Compressed bytes given to the decompressor per step. */
export const GZIP_INPUT_SLICE = 8 * 1024;

/** Gzip data, read as many times as gunzip needs it. */
type Source = () => Promise<ReadableStream<Uint8Array>>;

/** Cut every chunk into pieces of at most {@linkcode GZIP_INPUT_SLICE} bytes. */
function slicer(): TransformStream<Uint8Array, Uint8Array<ArrayBuffer>> {
  return new TransformStream({
    transform(chunk, out) {
      for (let at = 0; at < chunk.length; at += GZIP_INPUT_SLICE) {
        out.enqueue(chunk.subarray(at, at + GZIP_INPUT_SLICE) as Uint8Array<ArrayBuffer>);
      }
    },
  });
}

/**
 * Decompress `input`, handing each piece of output to `take` (with its
 * offset); returns the output size, or undefined as soon as it passes
 * `limit`. Throws the decompressor's error when the data is not gzip.
 */
async function inflate(
  input: ReadableStream<Uint8Array>,
  limit: number,
  take?: (chunk: Uint8Array, at: number) => void | Promise<void>,
): Promise<number | undefined> {
  const reader = input.pipeThrough(slicer()).pipeThrough(new DecompressionStream("gzip"))
    .getReader();
  let total = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return total;
      if (total + value.length > limit) return undefined;
      await take?.(value, total);
      total += value.length;
      // Freed now rather than at the next garbage collection, which large
      // buffers made outside the JavaScript heap do not bring on soon enough.
      if (value.buffer instanceof ArrayBuffer) value.buffer.transfer(0);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

async function gunzipSource(source: Source, limit: number): Promise<Uint8Array | undefined> {
  const size = await inflate(await source(), limit);
  if (size === undefined) return undefined;
  const out = new Uint8Array(size);
  const again = await inflate(await source(), size, (chunk, at) => out.set(chunk, at));
  if (again !== size) throw new Error("the data changed while it was read");
  return out;
}

async function drain(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return concatBytes(chunks);
}

/** `bytes`, gzip-compressed. */
export function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  return drain(new Blob([bytes as BlobPart]).stream().pipeThrough(new CompressionStream("gzip")));
}

/**
 * `bytes` decompressed; undefined when the result would pass `limit`
 * bytes. Throws (the stream's own error) when `bytes` are not gzip data.
 */
export function gunzip(bytes: Uint8Array, limit: number): Promise<Uint8Array | undefined> {
  return gunzipSource(() => Promise.resolve(new Blob([bytes as BlobPart]).stream()), limit);
}

/**
 * The file at `path` decompressed, read in chunks (it is never held whole);
 * undefined when the result would pass `limit` bytes. Throws when the file
 * cannot be read, or (the stream's own error) when it is not gzip data.
 */
export function gunzipFile(path: string, limit: number): Promise<Uint8Array | undefined> {
  return gunzipSource(async () => (await Deno.open(path, { read: true })).readable, limit);
}

/**
 * Decompress the file at `path` once, handing each piece of output to `take`
 * as it comes (the piece is freed when `take` has finished with it), so
 * nothing is held but one piece; returns the output size, or undefined as
 * soon as it would pass `limit` (what `take` was given by then stays given:
 * a caller that writes the pieces somewhere removes them on refusal).
 * Throws when the file cannot be read, or when it is not gzip data.
 */
export async function gunzipFileStream(
  path: string,
  limit: number,
  take: (chunk: Uint8Array) => Promise<void>,
): Promise<number | undefined> {
  return await inflate((await Deno.open(path, { read: true })).readable, limit, (c) => take(c));
}
