/**
 * Importing trace files into an agent's traces directory.
 *
 * Every line is checked against the protocol schema, plus the file rules
 * (the first record is a session_meta, and the only one; no streaming
 * partials; no origin-tagged records). A file with any problem is refused
 * with `file:line: reason` errors, unless `lenient`, which skips the bad
 * lines and reports each; a file whose first record is not a session_meta
 * is refused either way. Files naming the same session_id import as one
 * session (ordered by their `_NNN` suffix, else as given).
 *
 * Records are copied byte for byte; only the session_meta line is rewritten,
 * to add `imported_from: {path, session_id}` and, when the id is already
 * taken (or unfit for a file name), to give the session a new id. Files are
 * created exclusively: nothing is ever overwritten.
 *
 * @module
 */
import { basename, resolve } from "node:path";
import { errorMessage, PenguinError } from "../protocol/errors.ts";
import { isPartial } from "../protocol/guards.ts";
import type { SessionMetaEnvelope } from "../protocol/types.ts";
import { isSessionId, newSessionId, randomHex8 } from "../state/ids.ts";
import { tracesDir as agentTracesDir } from "../state/paths.ts";
import { acquireSessionLock, releaseSessionLock } from "../trace/lock.ts";
import {
  assertSessionId,
  dateDirName,
  listSessionFiles,
  parseTraceFileName,
  traceFilePath,
} from "../trace/paths.ts";
import { formatProblem, readTrace, type TraceProblem } from "../trace/reader.ts";
import { alreadyExists, copyLines, createTraceFile } from "./_copy.ts";
import type { SessionScope } from "./locate.ts";

/** Options of {@linkcode importTraces}. */
export interface ImportOptions extends SessionScope {
  /** Skip bad lines (reporting each) instead of refusing the file. */
  lenient?: boolean;
  /** Clock for new ids (tests). */
  now?: Date;
}

/** One imported file. */
export interface ImportedFile {
  /** The file imported (absolute). */
  source: string;
  /** The new trace file. */
  path: string;
  /** Records written (the session_meta included). */
  records: number;
}

/** One imported session. */
export interface ImportedSession {
  /** Its id in this data root. */
  sessionId: string;
  /** The id in the imported session_meta. */
  originalId: string;
  /** True when it got a new id (the original was taken or unfit). */
  renamed: boolean;
  /** Its files, by index. */
  files: ImportedFile[];
}

/** The outcome of an import. */
export interface ImportReport {
  /** True when nothing was refused. */
  ok: boolean;
  /** Sessions imported. */
  imported: ImportedSession[];
  /** Files refused, each with its errors (`file:line: reason`). */
  refused: Array<{ files: string[]; errors: string[] }>;
  /** Lines skipped in lenient mode (`file:line: reason`). */
  skipped: string[];
}

interface Scanned {
  source: string;
  meta: SessionMetaEnvelope | null;
  metaLine: number;
  keep: Set<number>;
  lastLine: number;
  problems: TraceProblem[];
  fatal: string | null;
}

function problem(file: string, line: number, reason: string): TraceProblem {
  return { file, line, kind: "structure", reason };
}

async function scan(source: string): Promise<Scanned> {
  const s: Scanned = {
    source,
    meta: null,
    metaLine: 0,
    keep: new Set(),
    lastLine: 0,
    problems: [],
    fatal: null,
  };
  try {
    let first = true;
    for await (
      const { line, message: m } of readTrace(source, {
        onProblem: (p) => s.problems.push(p),
      })
    ) {
      s.lastLine = line;
      if (first) {
        first = false;
        if (m.type !== "session_meta") {
          s.fatal = formatProblem(
            problem(source, line, `expected a session_meta as the first record, found a ${m.type}`),
          );
          return s;
        }
        s.meta = m;
        s.metaLine = line;
        continue;
      }
      let why: string | null = null;
      if (m.type === "session_meta") why = "a second session_meta (one per file)";
      else if (m.type === "model_msg" && isPartial(m.payload)) {
        why = `a streaming fragment ${JSON.stringify(m.payload.type)} (never recorded)`;
      } else if (m.origin !== undefined) {
        why = "an origin-tagged record (belongs to the child's trace)";
      }
      if (why) s.problems.push(problem(source, line, `unexpected ${why}`));
      else s.keep.add(line);
    }
    if (first) s.fatal = `${source}: no records (expected a session_meta first)`;
  } catch (err) {
    s.fatal = `${source}: ${errorMessage(err)}`;
  }
  return s;
}

function freshId(original: string, now: Date): string {
  return isSessionId(original) ? original.slice(0, -8) + randomHex8() : newSessionId(now);
}

function usableId(id: string): boolean {
  try {
    assertSessionId(id);
    return true;
  } catch {
    return false;
  }
}

function dateDirFor(id: string, meta: SessionMetaEnvelope, now: Date): string {
  if (isSessionId(id)) return id.slice("session-".length, "session-".length + 10);
  const t = new Date(meta.timestamp);
  return dateDirName(Number.isNaN(t.getTime()) ? now : t);
}

/** Group files by session id; order each group by `_NNN` suffix when every file has a distinct one. */
function group(scanned: Scanned[]): Map<string, Scanned[]> {
  const groups = new Map<string, Scanned[]>();
  for (const s of scanned) {
    const id = s.meta!.payload.session_id;
    const g = groups.get(id);
    if (g) g.push(s);
    else groups.set(id, [s]);
  }
  for (const g of groups.values()) {
    const idx = g.map((s) => parseTraceFileName(basename(s.source))?.index);
    if (idx.every((i) => i !== undefined) && new Set(idx).size === idx.length) {
      g.sort((a, b) =>
        parseTraceFileName(basename(a.source))!.index -
        parseTraceFileName(basename(b.source))!.index
      );
    }
  }
  return groups;
}

async function write(
  tracesDir: string,
  id: string,
  original: string,
  files: Scanned[],
  now: Date,
): Promise<ImportedFile[]> {
  const out: ImportedFile[] = [];
  const dateDir = dateDirFor(id, files[0]!.meta!, now);
  try {
    for (const [i, s] of files.entries()) {
      const meta = structuredClone(s.meta!);
      meta.payload.session_id = id;
      meta.payload.imported_from = { path: s.source, session_id: original };
      const path = traceFilePath(tracesDir, dateDir, id, i + 1);
      let records = 1;
      await createTraceFile(path, async (sink) => {
        await sink.text(JSON.stringify(meta) + "\n");
        records += await copyLines(s.source, (l) => s.keep.has(l), s.lastLine, sink);
      });
      out.push({ source: s.source, path, records });
    }
  } catch (err) {
    for (const f of out) await Deno.remove(f.path).catch(() => {});
    throw err;
  }
  return out;
}

/** Import trace files into the agent's traces directory (see the module doc). */
export async function importTraces(
  files: readonly string[],
  options: ImportOptions,
): Promise<ImportReport> {
  const lenient = options.lenient ?? false;
  const now = options.now ?? new Date();
  const tracesDir = agentTracesDir(options);
  const report: ImportReport = { ok: true, imported: [], refused: [], skipped: [] };
  const accepted: Scanned[] = [];
  for (const f of new Set(files.map((f) => resolve(f)))) {
    const s = await scan(f);
    if (s.fatal !== null || (!lenient && s.problems.length > 0)) {
      const errors = s.fatal !== null ? [s.fatal] : [];
      errors.push(...s.problems.map(formatProblem));
      report.refused.push({ files: [s.source], errors });
      continue;
    }
    report.skipped.push(...s.problems.map((p) => `${formatProblem(p)} (skipped)`));
    accepted.push(s);
  }
  for (const [original, members] of group(accepted)) {
    try {
      report.imported.push(await importOne(tracesDir, original, members, now));
    } catch (err) {
      report.refused.push({ files: members.map((m) => m.source), errors: [errorMessage(err)] });
    }
  }
  report.ok = report.refused.length === 0;
  return report;
}

async function importOne(
  tracesDir: string,
  original: string,
  members: Scanned[],
  now: Date,
): Promise<ImportedSession> {
  let id = original;
  let renamed = !usableId(id);
  if (renamed) id = freshId(original, now);
  for (let attempt = 0; attempt < 16; attempt++) {
    if ((await listSessionFiles(tracesDir, id)).length > 0) {
      id = freshId(original, now);
      renamed = true;
      continue;
    }
    const lock = await acquireSessionLock(tracesDir, id);
    try {
      const written = await write(tracesDir, id, original, members, now);
      return { sessionId: id, originalId: original, renamed, files: written };
    } catch (err) {
      if (!alreadyExists(err)) throw err;
      id = freshId(original, now);
      renamed = true;
    } finally {
      await releaseSessionLock(lock);
    }
  }
  throw new PenguinError("runtime", `Cannot import session ${original}: no free session id`);
}
