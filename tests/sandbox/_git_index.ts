// Builds git index files byte by byte, as git writes them (versions 2-4, extended flags, prefix
// compression, extensions), for the tests of lib/sandbox/git_index.ts and of the attacks that
// plant an index naming `.git/hooks/…`.

/** One index entry. */
export interface Entry {
  name: string | Uint8Array;
  /** Default a regular file, 0o100644. */
  mode?: number;
  /** Hex object id; default zeros. */
  oid?: string;
  /** Set the extended flag (skip-worktree). */
  extended?: boolean;
}

/** One extension: its 4-character signature and data. */
export interface Extension {
  sig: string;
  data: Uint8Array;
}

const enc = new TextEncoder();

function be32(n: number): number[] {
  return [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
}

function bytesOf(name: string | Uint8Array): Uint8Array {
  return typeof name === "string" ? enc.encode(name) : name;
}

function varint(n: number): number[] {
  // git's encode_varint: big-endian groups of 7 bits, each but the last with the high bit, the
  // value of each earlier group one less.
  const out = [n & 127];
  while ((n >>= 7) > 0) {
    n -= 1;
    out.unshift(128 | (n & 127));
  }
  return out;
}

/** The bytes of `entries` for an index of `version` with hashes of `hash` bytes. */
export function entryBytes(entries: Entry[], version: number, hash = 20): number[] {
  const out: number[] = [];
  let prev: Uint8Array = new Uint8Array(0);
  for (const e of entries) {
    const name = bytesOf(e.name);
    const start = out.length;
    for (let i = 0; i < 6; i++) out.push(...be32(0));
    out.push(...be32(e.mode ?? 0o100644), ...be32(0), ...be32(0), ...be32(0));
    const oid = e.oid ?? "00".repeat(hash);
    for (let i = 0; i < hash; i++) out.push(parseInt(oid.slice(2 * i, 2 * i + 2), 16));
    const flags = (e.extended ? 0x4000 : 0) | Math.min(name.length, 0xfff);
    out.push(flags >> 8, flags & 255);
    if (e.extended) out.push(0x40, 0);
    if (version === 4) {
      let common = 0;
      while (common < prev.length && common < name.length && prev[common] === name[common]) {
        common++;
      }
      out.push(...varint(prev.length - common), ...name.subarray(common), 0);
    } else {
      out.push(...name);
      const size = (out.length - start + 8) & ~7;
      while (out.length - start < size) out.push(0);
    }
    prev = name;
  }
  return out;
}

/** An extension's bytes. */
export function extensionBytes(x: Extension): number[] {
  return [...enc.encode(x.sig), ...be32(x.data.length), ...x.data];
}

/** A whole index file: header, entries, extensions, a (zero) trailing hash. */
export function indexBytes(
  entries: Entry[],
  opts: { version?: number; hash?: number; extensions?: Extension[] } = {},
): Uint8Array {
  const version = opts.version ?? 2;
  const hash = opts.hash ?? 20;
  const out = [...enc.encode("DIRC"), ...be32(version), ...be32(entries.length)];
  out.push(...entryBytes(entries, version, hash));
  for (const x of opts.extensions ?? []) out.push(...extensionBytes(x));
  for (let i = 0; i < hash; i++) out.push(0);
  return Uint8Array.from(out);
}

/** The `link` extension naming the shared index `hex` (no deleted or replaced entries). */
export function linkExtension(hex: string): Extension {
  const oid = hex.match(/../g)!.map((h) => parseInt(h, 16));
  // Two empty EWAH bitmaps: bit count, word count, (no words), run pointer.
  const ewah = [...be32(0), ...be32(0), ...be32(0)];
  return { sig: "link", data: Uint8Array.from([...oid, ...ewah, ...ewah]) };
}

/** The hex SHA-1 git gives a blob of `content`. */
export async function blobId(content: string): Promise<string> {
  const body = enc.encode(content);
  const data = Uint8Array.from([...enc.encode(`blob ${body.length}\0`), ...body]);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-1", data));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** `bytes` as base64, for a shell command that writes them. */
export function base64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}
