/**
 * gzip and gunzip of whole byte arrays with the platform's
 * `CompressionStream` / `DecompressionStream`; gunzip stops at a size limit
 * so a small archive cannot expand without bound.
 *
 * @module
 */

import { concatBytes } from "../protocol/bytes.ts";

async function drain(
  stream: ReadableStream<Uint8Array>,
  limit = Number.POSITIVE_INFINITY,
): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of stream) {
    total += chunk.length;
    if (total > limit) return undefined;
    chunks.push(chunk);
  }
  return concatBytes(chunks);
}

/** `bytes`, gzip-compressed. */
export async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(
    new CompressionStream("gzip"),
  );
  return (await drain(stream))!;
}

/**
 * `bytes` decompressed; undefined when the result would pass `limit`
 * bytes. Throws (the stream's own error) when `bytes` are not gzip data.
 */
export function gunzip(bytes: Uint8Array, limit: number): Promise<Uint8Array | undefined> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(
    new DecompressionStream("gzip"),
  );
  return drain(stream, limit);
}
