/**
 * Reading many trace files a few at a time, each reader with a read buffer
 * of its own that it reuses from one file to the next (`sessions list`
 * reads the ends of every session's files, `sessions tree` scans them for
 * subagent events): no buffer per file, and at most `limit` files open.
 *
 * @module
 */

/**
 * `fn` over `items` with at most `limit` in flight, results in the items'
 * order; each worker passes `fn` its own buffer of `bufferBytes`.
 */
export async function pooled<T, R>(
  items: readonly T[],
  limit: number,
  bufferBytes: number,
  fn: (t: T, buf: Uint8Array) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    const buf = new Uint8Array(bufferBytes);
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, buf);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
