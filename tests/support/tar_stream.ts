/**
 * Writing `.tar.gz` files for tests, streamed (an entry's bytes may be far
 * larger than memory should hold) and raw (names of any length, GNU long
 * names, any type flag), to give penguin's archive readers what other tools
 * refuse to make.
 *
 * @module
 */

const enc = new TextEncoder();

/** One ustar header block. */
export function tarHeader(name: string, size: number, type = "0"): Uint8Array {
  const h = new Uint8Array(512);
  const put = (s: string, at: number, len: number) => h.set(enc.encode(s).subarray(0, len), at);
  put(name, 0, 100);
  put("0000644\0", 100, 8);
  put("0000000\0", 108, 8);
  put("0000000\0", 116, 8);
  put(size.toString(8).padStart(11, "0") + "\0", 124, 12);
  put("00000000000\0", 136, 12);
  put("        ", 148, 8);
  put(type, 156, 1);
  put("ustar\0" + "00", 257, 8);
  let sum = 0;
  for (const b of h) sum += b;
  put(sum.toString(8).padStart(6, "0") + "\0 ", 148, 8);
  return h;
}

/** What goes into the archive: header blocks and data, in order. */
export type TarPart =
  | { name: string; data: string | Uint8Array; type?: string }
  | { name: string; zeros: number }
  | { longName: string; data: string };

function padding(size: number): Uint8Array {
  return new Uint8Array((512 - size % 512) % 512);
}

async function* blocks(parts: TarPart[]): AsyncGenerator<Uint8Array> {
  const zero = new Uint8Array(1024 * 1024);
  for (const p of parts) {
    if ("longName" in p) {
      const name = enc.encode(p.longName + "\0");
      yield tarHeader("././@LongLink", name.length, "L");
      yield name;
      yield padding(name.length);
      const data = enc.encode(p.data);
      yield tarHeader("placeholder", data.length);
      yield data;
      yield padding(data.length);
    } else if ("zeros" in p) {
      yield tarHeader(p.name, p.zeros);
      for (let left = p.zeros; left > 0; left -= zero.length) {
        yield zero.subarray(0, Math.min(left, zero.length));
      }
      yield padding(p.zeros);
    } else {
      const data = typeof p.data === "string" ? enc.encode(p.data) : p.data;
      yield tarHeader(p.name, data.length, p.type ?? "0");
      yield data;
      yield padding(data.length);
    }
  }
  yield new Uint8Array(1024);
}

/** Write `parts` as a gzip-compressed tar at `path`, streaming. */
export async function writeTarGz(path: string, parts: TarPart[]): Promise<void> {
  const it = blocks(parts);
  const source = new ReadableStream<Uint8Array<ArrayBuffer>>({
    async pull(c) {
      const next = await it.next();
      if (next.done) c.close();
      else c.enqueue(next.value as Uint8Array<ArrayBuffer>);
    },
  });
  const file = await Deno.open(path, { write: true, createNew: true });
  await source.pipeThrough(new CompressionStream("gzip")).pipeTo(file.writable);
}
