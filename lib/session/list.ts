/**
 * Listing sessions from the trace files themselves (no index). For each
 * session only two places are read: the head of its first file (the
 * session_meta and the first human prompt) and the tail of its latest file
 * (the last ~64 KiB, by seeking: the last record's timestamp and the last
 * token_usage). A file of at most 128 KiB is read whole instead (one read
 * covers both ends).
 *
 * Turns (completed requests outside compaction spans, across all files) are
 * counted only when that is cheap: when every file of the session is small
 * enough to have been read whole. Otherwise `turns` is null (the tail's
 * token_usage carries token counts, not a request count); `sessions show`
 * counts them exactly by reading every file.
 *
 * @module
 */
import type { Lineage, TokenCounts } from "../protocol/types.ts";
import { openRegularFile } from "../state/_fs.ts";
import { shortText } from "../protocol/short_text.ts";
import { tracesDir as agentTracesDir } from "../state/paths.ts";
import { agentsWithTraces, sessionFilesIn } from "../trace/layout.ts";
import type { TraceFileRef } from "../trace/paths.ts";
import { forEachLine } from "../trace/lines.ts";
import { collectorEvery, garbageCollector } from "../state/_gc.ts";
import { pooled } from "./_pooled.ts";
import {
  compactHead,
  type Head,
  headOf,
  payloadOf,
  readHead,
  readTail,
  type Tail,
  tailOf,
  WINDOW,
} from "./_head_tail.ts";

/** One row of a session listing. */
export interface SessionSummary {
  /** Session id. */
  sessionId: string;
  /** Project it belongs to. */
  projectId: string;
  /** Agent it belongs to. */
  agentId: string;
  /** Number of trace files (1 + completed compactions). */
  files: number;
  /** Path of the latest trace file (the current context). */
  latestPath: string;
  /** Timestamp of the first file's session_meta. */
  created: string | null;
  /** Timestamp of the latest file's last record. */
  lastActivity: string | null;
  /** Provider group of the model. */
  provider: string | null;
  /** Model id. */
  modelId: string | null;
  /** Workspace directory. */
  workspace: string | null;
  /** Completed requests (null when counting would mean reading large files whole). */
  turns: number | null;
  /** Session token total of the last token_usage. */
  tokens: number | null;
  /** All four session token counts of the last token_usage. */
  tokenCounts: TokenCounts | null;
  /** The first human prompt (for a subagent session, the parent's first message). */
  firstPrompt: string | null;
  /** `subagent` or `schedule` when the session was not created by a user. */
  source: string | null;
  /** The fork/clone lineage, if any. */
  lineage: Lineage | null;
  /** The session this one was forked or cloned from. */
  parent: string | null;
  /** Where an imported session came from. */
  importedFrom: { path: string; session_id: string } | null;
}

/** Options of {@linkcode listSessions}. */
export interface ListOptions {
  /** Absolute data root. */
  root: string;
  /** Project id. */
  projectId: string;
  /** Agent id (ignored with `allAgents`). */
  agentId: string;
  /** List the sessions of every agent of the project. */
  allAgents?: boolean;
  /** Parallel file reads (default 32). */
  concurrency?: number;
}

const WHOLE = 2 * WINDOW;
const FIRST_PROMPT_CHARS = 500;
/** The longest id (session, provider, model) and path a row keeps. */
const ID_CHARS = 256;
/** A timestamp as a row keeps it (an ISO time is some 30 characters). */
const TIME_CHARS = 64;
const PATH_CHARS = 4096;

/** `v` as a row keeps it: a string cut to `max`, else null. */
function cut(v: unknown, max: number): string | null {
  return typeof v === "string" ? shortText(v, max) : null;
}

/** The fields of a lineage a listing uses, cut. */
function shownLineage(l: Lineage): Lineage {
  return {
    parent_session_id: cut(l.parent_session_id, ID_CHARS) ?? "",
    trace_index: l.trace_index,
    line: l.line,
    kind: l.kind === "clone" ? "clone" : "fork",
  };
}

/**
 * Where an imported session came from (a penguin trace's `path` and
 * `session_id`, another harness's `harness`, `id`, `version`, `file`…):
 * its first 16 plain fields, strings cut.
 */
function shownImport(i: Record<string, unknown>): { path: string; session_id: string } {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(i).slice(0, 16)) {
    if (typeof v === "string") out[k] = shortText(v, PATH_CHARS);
    else if (typeof v === "number" || typeof v === "boolean") out[k] = v;
  }
  return out as { path: string; session_id: string };
}

const dec = new TextDecoder();

/**
 * A full collection after each stretch of bytes read: the rows a listing keeps are promoted
 * together with the texts their files were read into, which V8 then lets pile up. Listing 60,000
 * sessions of 30 KB peaked at 305 MB without, 265–285 MB with one every 512 MiB (every 64 MiB:
 * 260 MB, but twice the time).
 */
const LISTING_COLLECT_BYTES = 512 * 1024 * 1024;
let collected: (bytes: number) => void = () => {};
let readSince = 0;

/**
 * Completed requests outside compaction spans in a whole file's text (from
 * offset `from`). Only short lines are looked at: request_end and
 * compaction events are a few hundred bytes at most.
 */
export function countTurns(text: string, from = 0): number {
  const key = '"type":"';
  let turns = 0;
  let inCompaction = false;
  forEachLine(text, true, from, (start, end) => {
    if (end - start >= 400) return;
    // The event type is the last "type" key of an event line.
    const at = text.lastIndexOf(key, end);
    if (at <= start) return;
    const t = at + key.length;
    if (text.startsWith('request_end"', t)) {
      if (!inCompaction && text.slice(t, end).includes('"status":"completed"')) turns++;
    } else if (text.startsWith('compaction_begin"', t)) inCompaction = true;
    else if (text.startsWith('compaction_end"', t)) inCompaction = false;
  });
  return turns;
}

interface FileLook {
  head?: Head | undefined;
  tail?: Tail | undefined;
  turns: number | null;
}

/**
 * Look at one file. `buf` (WHOLE + 1 bytes, reused by the caller) takes the
 * first read: a file that fits is handled from that one read (a short read
 * of a regular file means end of file); a larger one is read at its head
 * and its tail only.
 */
async function look(
  path: string,
  wantHead: boolean,
  wantTail: boolean,
  buf: Uint8Array,
): Promise<FileLook> {
  let file: Deno.FsFile;
  try {
    // Not a regular file (a FIFO would block the open, a device read without end): no session.
    file = await openRegularFile(path);
  } catch {
    return { turns: null };
  }
  try {
    const n = (await file.read(buf)) ?? 0;
    collected(n);
    readSince += n;
    if (n < buf.length) {
      const text = dec.decode(buf.subarray(0, n));
      const firstNl = text.indexOf("\n");
      return {
        head: wantHead ? compactHead(headOf(text, true)) : undefined,
        tail: wantTail ? tailOf(text, true) : undefined,
        turns: countTurns(text, firstNl === -1 ? text.length : firstNl),
      };
    }
    const { size } = await file.stat();
    const out: FileLook = { turns: null };
    if (wantHead) {
      const head = headOf(dec.decode(buf), false);
      // Compacted before the next look: 24 looks waiting for the tail's turn each held a 15 MB
      // meta (attack round 24 bounded R4).
      out.head = compactHead(head.done ? head : await readHead(file, size));
    }
    if (wantTail) out.tail = await readTail(file, size);
    return out;
  } finally {
    file.close();
  }
}

function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

async function summarize(
  projectId: string,
  agentId: string,
  sessionId: string,
  files: TraceFileRef[],
  buf: Uint8Array,
): Promise<SessionSummary> {
  const latest = files[files.length - 1]!;
  const looks: FileLook[] = [];
  for (const [i, f] of files.entries()) {
    looks.push(await look(f.path, i === 0, i === files.length - 1, buf));
  }
  const head = looks[0]!.head;
  const tail = looks[looks.length - 1]!.tail;
  const turns = looks.every((l) => l.turns !== null)
    ? looks.reduce((n, l) => n + l.turns!, 0)
    : null;
  const rec = head?.first ?? null;
  const meta = rec?.type === "session_meta" ? payloadOf(rec) : null;
  // Every kept string cut to what a listing shows, in a string of its own: a row kept the whole
  // field (a 15 MB workspace, a lineage object of any size, a 1 MB prompt behind a 48-character
  // column) and 40 such sessions took `sessions list` to 801 MB (attack round 24 bounded R4).
  const lineage = meta?.lineage && typeof meta.lineage === "object"
    ? shownLineage(meta.lineage as Lineage)
    : null;
  const imported = meta?.imported_from && typeof meta.imported_from === "object"
    ? shownImport(meta.imported_from as Record<string, unknown>)
    : null;
  const source = str(meta?.source);
  const prompt = head?.prompt?.text ?? (source === "subagent" ? head?.userText ?? null : null);
  return {
    sessionId,
    projectId,
    agentId,
    files: files.length,
    latestPath: latest.path,
    // The times too: a 3.9 MB timestamp on the last record of each of 100 sessions took
    // `sessions list` to 532 MB (attack round 25 bounded C10).
    created: meta ? cut(rec?.timestamp, TIME_CHARS) : null,
    lastActivity: cut(tail?.lastTimestamp, TIME_CHARS),
    provider: cut(meta?.provider, ID_CHARS),
    modelId: cut(meta?.model_id, ID_CHARS),
    workspace: cut(meta?.workspace, PATH_CHARS),
    turns,
    tokens: tail?.usage?.session.total ?? null,
    tokenCounts: tail?.usage?.session ?? null,
    firstPrompt: prompt === null ? null : shortText(prompt, FIRST_PROMPT_CHARS),
    source: source === null ? null : shortText(source, ID_CHARS),
    lineage,
    parent: lineage ? str(lineage.parent_session_id) : null,
    importedFrom: imported,
  };
}

/**
 * List the sessions of an agent (or of every agent of the project), newest
 * first (by creation time, then id).
 */
export async function listSessions(options: ListOptions): Promise<SessionSummary[]> {
  return (await listSessionsWithFiles(options)).rows;
}

/**
 * {@linkcode listSessions}, with the trace files of each session listed (by
 * session id; of the last agent's sessions where ids repeat across agents):
 * what `sessions tree` reads next, without listing the directories again.
 */
export async function listSessionsWithFiles(
  options: ListOptions,
): Promise<{ rows: SessionSummary[]; files: Map<string, TraceFileRef[]> }> {
  const { root, projectId } = options;
  const agents = options.allAgents ? await agentsWithTraces(root, projectId) : [options.agentId];
  const jobs: Array<{ agentId: string; sessionId: string; files: TraceFileRef[] }> = [];
  for (const agentId of agents) {
    const byId = await sessionFilesIn(agentTracesDir({ root, projectId, agentId }));
    for (const [sessionId, files] of byId) jobs.push({ agentId, sessionId, files });
  }
  collected = collectorEvery(LISTING_COLLECT_BYTES);
  readSince = 0;
  const rows = await pooled(
    jobs,
    options.concurrency ?? 32,
    WHOLE + 1,
    (j, buf) => summarize(projectId, j.agentId, j.sessionId, j.files, buf),
  );
  // And once at the end of a long listing: what the caller builds on the rows (a table, a tree)
  // then takes the room the texts read took.
  if (readSince >= LISTING_COLLECT_BYTES / 8) garbageCollector()();
  rows.sort((a, b) => {
    const ka = a.created ?? "";
    const kb = b.created ?? "";
    if (ka !== kb) return ka < kb ? 1 : -1;
    return a.sessionId < b.sessionId ? 1 : a.sessionId > b.sessionId ? -1 : 0;
  });
  return { rows, files: new Map(jobs.map((j) => [j.sessionId, j.files])) };
}
