// The records of a foreign session being imported, kept on disk while the
// file is converted instead of in memory: a parser hands each record to the
// spool's sink as it makes it (masked there, as the import masks every
// record), and the trace is then written from the spool a record at a time.
// The spool lives in a private temporary directory and holds only what the
// trace will hold. Subagent pointers are spooled as they are: they name a
// child by its foreign id until the child's penguin id is known, so they are
// rewritten and masked when read back.
import { join } from "node:path";
import { concatBytes } from "../protocol/bytes.ts";
import type { EventMsgEnvelope, ModelMsgEnvelope } from "../protocol/types.ts";
import type { RecordSink } from "./foreign_session.ts";
import type { RecordMask } from "./import.ts";
import { makePrivateTempDir } from "../sandbox/private_temp_dir.ts";

type Rec = ModelMsgEnvelope | EventMsgEnvelope;

/** What a spool counted of the records it took. */
export interface SpoolCounts {
  /** Records. */
  records: number;
  /** Tool calls. */
  toolCalls: number;
  /** Texts (prompts and answers). */
  messages: number;
  /** Records the mask changed. */
  masked: number;
}

/** A spool: its sink, its counts, and its records read back. */
export interface Spool {
  /** Takes each record (synchronously: parsers are). */
  sink: RecordSink;
  /** Counts so far. */
  counts: SpoolCounts;
  /** The records in order, each subagent pointer through `pointer` (then masked). */
  read(pointer: (r: Rec) => Rec): AsyncGenerator<Rec>;
  /** Write out what is buffered and close the file (a subagent's, once parsed). */
  close(): void;
  /** Remove the spool (the first one: its children's too). */
  remove(): Promise<void>;
  /**
   * A spool beside this one for a subagent's records (opened at once: parsers are synchronous),
   * masked the same way, removed with this one.
   */
  child(): Spool;
  /** The spool {@linkcode child} made that `taken` is (what a parser kept of it), if any. */
  childOf(taken: unknown): Spool | undefined;
}

/** Written in pieces of about this many characters. */
const FLUSH_AT = 1 << 20;

const isPointer = (r: Rec) => r.type === "event_msg" && r.payload.type === "subagent";

/** A new spool in a private temporary directory; `mask` is applied to every record. */
export async function openSpool(mask?: RecordMask): Promise<Spool> {
  // Out of every sandbox's view: a session working in /tmp could rewrite a spooled record.
  const dir = await makePrivateTempDir("import-");
  const children = new Set<Spool>();
  const kin: Kin = {
    child() {
      const s = spoolFile(join(dir, `child-${children.size + 1}.jsonl`), mask, kin, () => {
        return Promise.resolve();
      });
      children.add(s);
      return s;
    },
    childOf: (taken) => [...children].find((c) => c === taken),
  };
  const removeAll = () => Deno.remove(dir, { recursive: true }).catch(() => {});
  return spoolFile(join(dir, "records.jsonl"), mask, kin, removeAll);
}

/** What every spool of one import shares: making and finding the subagents' spools. */
type Kin = Pick<Spool, "child" | "childOf">;

/** The spool writing `path`; `removed` runs once it is closed, to remove it. */
function spoolFile(
  path: string,
  mask: RecordMask | undefined,
  kin: Kin,
  removed: () => Promise<void>,
): Spool {
  const file = Deno.openSync(path, { write: true, create: true, truncate: true, mode: 0o600 });
  const enc = new TextEncoder();
  const counts: SpoolCounts = { records: 0, toolCalls: 0, messages: 0, masked: 0 };
  let buf = "";
  let open = true;
  const flush = () => {
    const bytes = enc.encode(buf);
    buf = "";
    for (let off = 0; off < bytes.length;) off += file.writeSync(bytes.subarray(off));
  };
  const close = () => {
    if (!open) return;
    open = false;
    try {
      flush();
    } finally {
      file.close();
    }
  };
  const masked = (r: Rec): Rec => {
    if (!mask) return r;
    const m = mask(r) as Rec;
    if (m !== r) counts.masked++;
    return m;
  };
  return {
    counts,
    sink(r) {
      counts.records++;
      if (r.type === "model_msg" && r.payload.type === "tool_call") counts.toolCalls++;
      if (r.type === "model_msg" && r.payload.type === "text") counts.messages++;
      buf += JSON.stringify(isPointer(r) ? r : masked(r)) + "\n";
      if (buf.length >= FLUSH_AT) flush();
    },
    async *read(pointer) {
      close();
      for await (const line of jsonlLines(path)) {
        const r = JSON.parse(line) as Rec;
        yield isPointer(r) ? masked(pointer(r)) : r;
      }
    },
    close,
    async remove() {
      try {
        close();
      } finally {
        await removed();
      }
    },
    ...kin,
  };
}

/** The lines of a file penguin wrote (UTF-8, each ended by a newline), one at a time. */
async function* jsonlLines(path: string): AsyncGenerator<string> {
  const dec = new TextDecoder();
  const file = await Deno.open(path);
  try {
    const chunk = new Uint8Array(1 << 20);
    let pieces: Uint8Array[] = [];
    for (;;) {
      const n = await file.read(chunk);
      if (n === null) break;
      let start = 0;
      for (let nl = chunk.indexOf(10, start); nl !== -1 && nl < n; nl = chunk.indexOf(10, start)) {
        pieces.push(chunk.slice(start, nl));
        yield dec.decode(concat(pieces));
        pieces = [];
        start = nl + 1;
      }
      if (start < n) pieces.push(chunk.slice(start, n));
    }
  } finally {
    file.close();
  }
}

function concat(pieces: Uint8Array[]): Uint8Array {
  return pieces.length === 1 ? pieces[0]! : concatBytes(pieces);
}
