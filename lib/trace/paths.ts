/**
 * Where trace files live and how they are named:
 * `<agentDir>/traces/<yyyy-mm-dd>/<sessionId>_<NNN>.jsonl`.
 *
 * `yyyy-mm-dd` is the local date the writer was created on; `NNN` is the
 * file index (one file per model context), zero-padded to three digits.
 *
 * @module
 */
import { join } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import { readDirEntries } from "./_fs.ts";
import { validated } from "../state/_validated.ts";

/** A trace file located on disk. */
export interface TraceFileRef {
  /** Absolute or caller-relative path of the file. */
  path: string;
  /** The date directory name (`yyyy-mm-dd`). */
  dateDir: string;
  /** The session the file belongs to. */
  sessionId: string;
  /** The file index (1 for `_001`). */
  index: number;
}

const NAME_RE = /^(.+)_(\d{3,})\.jsonl$/;
const SESSION_ID_RE = /^[A-Za-z0-9_-]+$/;
const DATE_DIR_RE = /^\d{4}-\d{2}-\d{2}$/;

/** The traces directory of an agent directory: `<agentDir>/traces`. */
export function tracesDirOf(agentDir: string): string {
  return join(agentDir, "traces");
}

/** The local date of `date` as `yyyy-mm-dd`, the name of a date directory. */
export function dateDirName(date: Date = new Date()): string {
  const y = String(date.getFullYear()).padStart(4, "0");
  const m = String(date.getMonth() + 1).padStart(2, "0");
  const d = String(date.getDate()).padStart(2, "0");
  return `${y}-${m}-${d}`;
}

/** True when `name` looks like a date directory (`yyyy-mm-dd`). */
export function isDateDirName(name: string): boolean {
  return DATE_DIR_RE.test(name);
}

/** Throw a usage error unless `sessionId` is safe to put in a file name. */
export function assertSessionId(sessionId: string): void {
  const rule = 'only letters, digits, "_" and "-" are allowed';
  validated(SESSION_ID_RE.test(sessionId), sessionId, "session id", rule);
}

/** The file name of shard `index` of `sessionId`: `<sessionId>_<NNN>.jsonl`. */
export function traceFileName(sessionId: string, index: number): string {
  assertSessionId(sessionId);
  if (!Number.isInteger(index) || index < 1) {
    throw new PenguinError("usage", `Invalid trace index ${index}: expected an integer >= 1`);
  }
  return `${sessionId}_${String(index).padStart(3, "0")}.jsonl`;
}

/** The full path `<tracesDir>/<dateDir>/<sessionId>_<NNN>.jsonl`. */
export function traceFilePath(
  tracesDir: string,
  dateDir: string,
  sessionId: string,
  index: number,
): string {
  return join(tracesDir, dateDir, traceFileName(sessionId, index));
}

/**
 * Parse a trace file name (`<sessionId>_<NNN>.jsonl`) back into its parts;
 * null when the name is not of that form.
 */
export function parseTraceFileName(name: string): { sessionId: string; index: number } | null {
  const m = NAME_RE.exec(name);
  if (!m) return null;
  return { sessionId: m[1]!, index: Number(m[2]!) };
}

/**
 * Every trace file of `sessionId` under `tracesDir`, across all date
 * directories, ordered by index (then by date directory). Empty when the
 * directory or the session does not exist.
 */
export async function listSessionFiles(
  tracesDir: string,
  sessionId: string,
): Promise<TraceFileRef[]> {
  const found: TraceFileRef[] = [];
  for (const dir of await readDirEntries(tracesDir)) {
    if (!dir.isDirectory || dir.name.startsWith(".")) continue;
    for (const f of await readDirEntries(join(tracesDir, dir.name))) {
      if (!f.isFile) continue;
      const parsed = parseTraceFileName(f.name);
      if (!parsed || parsed.sessionId !== sessionId) continue;
      found.push({ path: join(tracesDir, dir.name, f.name), dateDir: dir.name, ...parsed });
    }
  }
  found.sort((a, b) =>
    a.index - b.index || (a.dateDir < b.dateDir ? -1 : a.dateDir > b.dateDir ? 1 : 0)
  );
  return found;
}

/**
 * The highest-index trace file of `sessionId`, scanning every date directory
 * (shards of one session may span dates); null when there is none.
 */
export async function findLatestTraceFile(
  tracesDir: string,
  sessionId: string,
): Promise<TraceFileRef | null> {
  const files = await listSessionFiles(tracesDir, sessionId);
  return files.length === 0 ? null : files[files.length - 1]!;
}
