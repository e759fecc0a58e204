/**
 * Importing sessions recorded by other harnesses (OpenAI Codex CLI, Claude
 * Code, pi): `penguin sessions import --from`. The format is given or
 * detected from the first line; the file is converted by the harness's
 * parser (pure), then written through penguin's trace writer as a new
 * session whose `session_meta` says where it came from (`imported_from`:
 * harness, id, version, cwd, file, workspace_from). The session works in the
 * workspace chosen at import (lib/session/import_workspace.ts), never in the
 * cwd its file recorded. Claude Code subagent transcripts found
 * next to a session become child sessions (`source: "subagent"`, `parent`
 * pointing at the Agent call) with `subagent` pointers in the parent.
 *
 * Nothing is half-written: a file with malformed lines is refused (unless
 * `lenient`, which skips them and lists each); the traces of one import are
 * written into a private directory under the traces directory, validated,
 * and only then renamed into place.
 *
 * @module
 */
import { openRegularNow, readUpTo } from "../state/_fs.ts";
import { formatSize } from "../protocol/format_size.ts";
import { basename, dirname, join, resolve } from "node:path";
import { errorMessage } from "../protocol/errors.ts";
import { parseJsonBounded } from "../protocol/bounded_json.ts";
import type {
  EventMsgEnvelope,
  ModelMsgEnvelope,
  OmniMessage,
  SessionMeta,
} from "../protocol/types.ts";
import { newSessionId } from "../state/ids.ts";
import { agentStateDir, tracesDir as agentTracesDir } from "../state/paths.ts";
import { dateDirName, parseTraceFileName, traceFilePath } from "../trace/paths.ts";
import { formatProblem } from "../trace/reader.ts";
import { validateTraceFiles } from "../trace/validate.ts";
import { writeNewTrace } from "../trace/write_new.ts";
import {
  type ForeignSession,
  type ForeignText,
  type Harness,
  type RecordSink,
  splitJsonLines,
} from "./foreign_session.ts";
import { openSpool, type Spool } from "./_import_spool.ts";
import { foreignTime } from "./_transcript.ts";
import { type ClaudeSubagentFile, looksLikeClaude, parseClaude } from "./import_claude.ts";
import { looksLikeCodex, parseCodex } from "./import_codex.ts";
import { looksLikePi, parsePi } from "./import_pi.ts";
import { formatLineProblem, type LossEntry } from "./import_report.ts";
import type { ImportCommonOptions, RecordMask } from "./import.ts";
import type { ImportWorkspace } from "./import_workspace.ts";
import type { SessionScope } from "./locate.ts";
import { listSessions } from "./list.ts";
import { lossSummary } from "./import_summary.ts";

/** What a file's first line says it is: a foreign harness, a penguin trace, or unknown (null). */
export function detectFormat(text: string): Harness | "penguin" | null {
  const firstLine = text.slice(0, text.indexOf("\n") === -1 ? undefined : text.indexOf("\n"));
  let first: unknown;
  try {
    first = parseJsonBounded(firstLine, "the first line");
  } catch {
    // A damaged (or too costly) first line: look at the next parsable one.
    try {
      first = splitJsonLines(text.slice(0, 1 << 20), "").lines[0]?.value;
    } catch {
      first = undefined;
    }
  }
  if (looksLikePi(first)) return "pi";
  if (looksLikeCodex(first)) return "codex";
  if (looksLikeClaude(first)) return "claude";
  const f = first as {
    type?: unknown;
    payload?: { session_id?: unknown; system_prompt?: unknown };
  };
  if (f?.type === "session_meta" && typeof f.payload?.session_id === "string") return "penguin";
  return null;
}

/** Options of {@linkcode importForeign}. */
export interface ForeignImportOptions extends ImportCommonOptions {
  /** The harness the files come from; absent: detected per file. */
  from?: Harness;
  /** Sessions imported before, by {@linkcode importKey}: not imported again unless `again`. */
  already?: ReadonlyMap<string, string>;
}

/** The key of a foreign session among those imported before: its harness and its id there. */
export function importKey(harness: string, id: string): string {
  return `${harness}\0${id}`;
}

/** The foreign sessions this agent imported before, by {@linkcode importKey}, each with its penguin id. */
export async function importedForeign(scope: SessionScope): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const row of await listSessions(scope)) {
    // A subagent transcript imported alone is a session of its own, not its parent's child.
    if (row.source === "subagent") continue;
    const from = row.importedFrom as Record<string, unknown> | null;
    if (typeof from?.harness === "string" && typeof from.id === "string") {
      const key = importKey(from.harness, from.id);
      if (!out.has(key)) out.set(key, row.sessionId);
    }
  }
  return out;
}

/** One session written by an import. */
export interface ForeignImported {
  /** Its new penguin session id. */
  sessionId: string;
  /** Its id in the harness that recorded it. */
  originalId: string;
  /** The file it came from. */
  source: string;
  /** The trace file written. */
  path: string;
  /** Records written, the session_meta included. */
  records: number;
  /** Tool calls imported (each paired with its output). */
  toolCalls: number;
  /** Messages imported (prompts and answers). */
  messages: number;
  /** What could not be mapped. */
  loss: LossEntry[];
  /** Malformed lines skipped (lenient only), `file:line: reason`. */
  skipped: string[];
  /** Where it continues: the workspace chosen at import. */
  workspace: string;
  /** The cwd its file recorded (not used). */
  recordedWorkspace: string;
}

/** One imported foreign session and its children. */
export interface ForeignImportedSession extends ForeignImported {
  /** The harness. */
  harness: Harness;
  /** Subagent sessions imported as its children. */
  children: ForeignImported[];
}

/** The outcome of {@linkcode importForeign}. */
export interface ForeignImportReport {
  /** True when nothing was refused. */
  ok: boolean;
  /** Sessions imported. */
  imported: ForeignImportedSession[];
  /** Files refused, each with its errors. */
  refused: Array<{ files: string[]; errors: string[] }>;
  /** Claude Code subagent transcripts given along with their parent session (imported as its children). */
  withParent: string[];
  /** Sessions imported before (nothing written for them). */
  already: Array<{ file: string; harness: Harness; originalId: string; sessionId: string }>;
  /** Records the `mask` changed (session_meta lines included). */
  masked: number;
}

/**
 * The largest foreign session file read (it is read and converted whole): a
 * larger one, or one that is not a regular file, is refused before it is read.
 */
export const MAX_FOREIGN_FILE_BYTES = 64 * 1024 * 1024;

/**
 * `path` to be read line by line: a regular file of at most
 * {@linkcode MAX_FOREIGN_FILE_BYTES}, refused unread otherwise, with the size
 * found, which is all that is read of it.
 */
function sizedFile(path: string): { path: string; size: number } {
  // Opened without blocking (a FIFO is refused, not waited on), a huge file refused unread.
  using file = openRegularNow(path);
  const info = { size: file.size };
  if (info.size > MAX_FOREIGN_FILE_BYTES) {
    throw new Error(
      `"${path}" holds ${formatSize(info.size)}; a session file may hold at most ${
        formatSize(MAX_FOREIGN_FILE_BYTES)
      }`,
    );
  }
  return { path, size: info.size };
}

/** The largest subagent `.meta.json` read (Claude Code's hold a few fields). */
const META_MAX_BYTES = 64 * 1024;

/** What `detectFormat` looks at: the first line, or the first MiB when that is longer. */
function readHead(path: string, size: number): string {
  using file = openRegularNow(path);
  const dec = new TextDecoder();
  let text = "";
  const buf = new Uint8Array(1 << 20);
  for (let left = size; left > 0;) {
    const n = file.read(buf.subarray(0, Math.min(buf.length, left)));
    if (n === 0) break;
    left -= n;
    text += dec.decode(buf.subarray(0, n), { stream: true });
    if (text.length >= 1 << 20 && text.includes("\n")) break;
  }
  return text + dec.decode();
}

/** The subagent transcripts Claude Code keeps next to a session file. */
async function claudeSubagents(
  file: string,
): Promise<ClaudeSubagentFile[]> {
  const dir = join(dirname(file), basename(file, ".jsonl"), "subagents");
  const out: ClaudeSubagentFile[] = [];
  let names: string[];
  try {
    names = [];
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile && e.name.endsWith(".jsonl")) names.push(e.name);
    }
  } catch {
    return out;
  }
  for (const name of names.sort()) {
    const path = join(dir, name);
    let meta: unknown = null;
    try {
      // Only its `toolUseId` is kept, from a file of at most META_MAX_BYTES: 60 MB metas beside
      // every transcript were read whole and held (attack round 23 bounded A01).
      const metaPath = path.replace(/\.jsonl$/, ".meta.json");
      const bytes = await readUpTo(metaPath, META_MAX_BYTES);
      const parsed = bytes === undefined
        ? undefined
        : parseJsonBounded(new TextDecoder().decode(bytes), `"${metaPath}"`) as
          | { toolUseId?: unknown }
          | undefined;
      meta = typeof parsed?.toolUseId === "string" ? { toolUseId: parsed.toolUseId } : null;
    } catch {
      meta = null;
    }
    // Not read here: one is parsed, line by line, only when an Agent call of the session names it
    // (eight 60 MB transcripts read whole took the import to 750 MB, attack round 21 bounded #1).
    out.push({ file: path, text: sizedFile(path), meta });
  }
  return out;
}

/**
 * Parse one file with the parser of `harness`, its records (and each subagent's, to a spool of
 * its own beside it) to `spool` when given.
 */
async function parseFile(
  file: string,
  harness: Harness,
  text: ForeignText,
  spool?: Spool,
): Promise<ForeignSession> {
  const sink: RecordSink | undefined = spool?.sink;
  switch (harness) {
    case "codex":
      return parseCodex(text, file, sink);
    case "pi":
      return parsePi(text, file, sink);
    case "claude":
      // A subagent transcript given alone imports as a session of its own.
      return claudeParentOf(file) !== null
        ? parseClaude(text, file, [], true, sink)
        : parseClaude(text, file, await claudeSubagents(file), false, sink, spool?.child);
  }
}

/** The session file a Claude Code subagent transcript belongs to (`<id>/subagents/agent-*.jsonl`), or null. */
function claudeParentOf(file: string): string | null {
  const dir = dirname(file);
  if (basename(dir) !== "subagents" || !basename(file).startsWith("agent-")) return null;
  return dirname(dir) + ".jsonl";
}

/** Read and convert one session file of `harness` (nothing written): to look at its recorded cwd, say. */
export async function readForeignSession(file: string, harness: Harness): Promise<ForeignSession> {
  return await parseFile(file, harness, sizedFile(file));
}

function allProblems(s: ForeignSession): string[] {
  return [s, ...s.children.map((c) => c.session)].flatMap((x) => x.problems.map(formatLineProblem));
}

function countCalls(s: ForeignSession): number {
  return s.records.filter((r) => r.type === "model_msg" && r.payload.type === "tool_call").length;
}

function validTime(ts: string): Date {
  const d = new Date(ts);
  return Number.isNaN(d.getTime()) ? new Date() : d;
}

/**
 * Convert and write foreign session files (see the module doc). Penguin
 * traces are not handled here (`importTraces` copies them); a file whose
 * format cannot be detected is refused.
 */
export async function importForeign(
  files: readonly string[],
  options: ForeignImportOptions,
): Promise<ForeignImportReport> {
  const report: ForeignImportReport = {
    ok: true,
    imported: [],
    refused: [],
    withParent: [],
    already: [],
    masked: 0,
  };
  const tracesDir = agentTracesDir(options);
  const given = new Set(files.map((x) => resolve(x)));
  let done = 0;
  for (const f of given) {
    options.onFile?.(done++, given.size, f);
    let spool: Spool | undefined;
    try {
      // Read line by line by the parser, never whole (at most the size checked here).
      const source = sizedFile(f);
      const harness = options.from ?? detectFormat(readHead(f, source.size));
      const parent = harness === "claude" ? claudeParentOf(f) : null;
      if (parent !== null && given.has(parent)) {
        report.withParent.push(f);
        continue;
      }
      if (harness === null || harness === "penguin") {
        report.refused.push({
          files: [f],
          errors: [
            harness === "penguin"
              ? `${f}: a penguin trace; import it without --from`
              : `${f}: cannot tell which harness wrote it (not a Codex, Claude Code or pi session); pass --from codex|claude|pi`,
          ],
        });
        continue;
      }
      // The session's records go to a spool on disk as they are made, masked there.
      spool = await openSpool(options.mask);
      const s = await parseFile(f, harness, source, spool);
      const problems = allProblems(s);
      if (s.id === "") {
        problems.unshift(
          `${f}: no ${harness} session id found (is this a ${harness} session file?)`,
        );
      }
      if (s.id === "" || (problems.length > 0 && !options.lenient)) {
        report.refused.push({ files: [f], errors: problems });
        continue;
      }
      const before = options.again ? undefined : options.already?.get(importKey(harness, s.id));
      if (before !== undefined) {
        report.already.push({ file: f, harness, originalId: s.id, sessionId: before });
        continue;
      }
      const written = await writeFamily(tracesDir, options, s, spool);
      report.masked += written.masked;
      report.imported.push(written.session);
    } catch (err) {
      report.refused.push({ files: [f], errors: [`${f}: ${errorMessage(err)}`] });
    } finally {
      await spool?.remove();
    }
  }
  report.ok = report.refused.length === 0;
  return report;
}

/**
 * A new session id for a session started `at`, none of `taken` (every id of the traces
 * directory and of the family planned so far, see {@linkcode sessionIdsIn}).
 */
function freeId(at: Date, taken: Set<string>): string {
  for (;;) {
    const id = newSessionId(at);
    if (!taken.has(id)) {
      taken.add(id);
      return id;
    }
  }
}

/**
 * The session ids of the trace files in `tracesDir`, from one listing: each child of a family
 * listed the whole directory to choose its id, 2,000 children at once in a root of 2,000 traces
 * took an import to 832 MB (attack round 23 bounded B11).
 */
async function sessionIdsIn(tracesDir: string): Promise<Set<string>> {
  const ids = new Set<string>();
  const list = async (dir: string) => {
    try {
      return await Array.fromAsync(Deno.readDir(dir));
    } catch {
      return [];
    }
  };
  for (const d of await list(tracesDir)) {
    if (!d.isDirectory || d.name.startsWith(".")) continue;
    for (const f of await list(join(tracesDir, d.name))) {
      const parsed = f.isFile ? parseTraceFileName(f.name) : null;
      if (parsed) ids.add(parsed.sessionId);
    }
  }
  return ids;
}

interface Planned {
  s: ForeignSession;
  id: string;
  dateDir: string;
  meta: SessionMeta;
  records: Array<ModelMsgEnvelope | EventMsgEnvelope>;
  /** Where the records are when the parser spooled them (then `records` is empty). */
  spool?: Spool;
  /** What spooled subagent pointers become (their children's penguin ids). */
  pointer?: (r: ModelMsgEnvelope | EventMsgEnvelope) => ModelMsgEnvelope | EventMsgEnvelope;
  /** The session_meta's time once set (masked, or now for a file without one). */
  metaTimestamp?: string;
}

/** The time of `p`'s session_meta: the file's first (as masked), else now. */
function metaTime(p: Planned): string {
  return p.metaTimestamp ??
    (p.s.startedAt ? foreignTime(p.s.startedAt) : (p.metaTimestamp = new Date().toISOString()));
}

/** The trace of `p`: its session_meta, then its records. */
async function* withMeta(p: Planned): AsyncGenerator<OmniMessage> {
  yield { timestamp: metaTime(p), type: "session_meta", payload: p.meta };
  yield* recordsOf(p);
}

/** The records of `p` in order: held, or read back from its spool. */
async function* recordsOf(p: Planned): AsyncGenerator<ModelMsgEnvelope | EventMsgEnvelope> {
  yield* p.records;
  if (p.spool) yield* p.spool.read(p.pointer ?? ((r) => r));
}

/** Plan the trace of `x` (a free id, its session_meta), a child of `parent` when given. */
function plan(
  agentState: string,
  workspace: ImportWorkspace,
  taken: Set<string>,
  x: ForeignSession,
  parent?: { id: string; toolCallId: string },
): Planned {
  const at = validTime(x.startedAt);
  const id = freeId(at, taken);
  const meta: SessionMeta = {
    session_id: id,
    provider: x.provider,
    model_id: x.modelId,
    model_context_window: "unknown",
    system_prompt: x.systemPrompt,
    agent_state: agentState,
    workspace: workspace.path,
    ...(parent
      ? {
        source: "subagent" as const,
        parent: { session_id: parent.id, tool_call_id: parent.toolCallId },
      }
      : {}),
    imported_from: {
      harness: x.harness,
      id: x.id,
      version: x.version,
      cwd: x.cwd,
      file: x.file,
      workspace_from: workspace.from,
    },
  };
  return { s: x, id, dateDir: dateDirName(at), meta, records: x.records };
}

/** Write each planned trace into `staging` and validate them; returns their paths. */
async function stage(staging: string, family: readonly Planned[]): Promise<string[]> {
  for (const p of family) {
    // Written whole (a new file in a private directory, no lock) and synced once, below.
    await writeNewTrace(traceFilePath(staging, p.dateDir, p.id, 1), withMeta(p), false);
  }
  const staged = family.map((p) => traceFilePath(staging, p.dateDir, p.id, 1));
  const v = await validateTraceFiles(staged);
  if (!v.ok) {
    throw new Error(
      `the converted session does not validate (a bug in the importer):\n${
        v.problems.map(formatProblem).join("\n")
      }`,
    );
  }
  for (const path of staged) {
    const f = await Deno.open(path, { read: true, write: true });
    try {
      await f.sync();
    } finally {
      f.close();
    }
  }
  return staged;
}

/** Write a session and its children into a private directory, validate, then move them into place. */
async function writeFamily(
  tracesDir: string,
  scope: SessionScope & { workspace: ImportWorkspace; mask?: RecordMask },
  s: ForeignSession,
  spool?: Spool,
): Promise<{ session: ForeignImportedSession; masked: number }> {
  const taken = await sessionIdsIn(tracesDir);
  const agentState = agentStateDir(scope);
  const ws = scope.workspace;
  const top = plan(agentState, ws, taken, s);
  const children = s.children.map((c) => {
    const p = plan(agentState, ws, taken, c.session, { id: top.id, toolCallId: c.toolCallId });
    // Spooled as parsed (see `_import_spool.ts`): read back when its trace is written.
    const own = spool?.childOf(c.spool);
    return own ? Object.assign(p, { spool: own }) : p;
  });
  // The parent's pointers name the children by their foreign ids until now.
  const childIds = new Map(children.map((c) => [c.s.id, c.id]));
  const pointer = (r: ModelMsgEnvelope | EventMsgEnvelope) =>
    r.type === "event_msg" && r.payload.type === "subagent" &&
      childIds.has(String(r.payload.session_id))
      ? { ...r, payload: { ...r.payload, session_id: childIds.get(String(r.payload.session_id))! } }
      : r;
  top.records = top.records.map(pointer);
  if (spool) Object.assign(top, { spool, pointer });
  let masked = scope.mask ? maskPlanned([top, ...children], scope.mask) : 0;
  await Deno.mkdir(tracesDir, { recursive: true, mode: 0o700 });
  const staging = await Deno.makeTempDir({ dir: tracesDir, prefix: ".import-" });
  const moved: string[] = [];
  try {
    const family = [...children, top];
    const staged = await stage(staging, family);
    // Children first: a parent's pointers never name a child that is not there yet.
    for (const [i, p] of family.entries()) {
      const dest = traceFilePath(tracesDir, p.dateDir, p.id, 1);
      await Deno.mkdir(dirname(dest), { recursive: true, mode: 0o700 });
      await Deno.rename(staged[i]!, dest);
      moved.push(dest);
    }
  } catch (err) {
    for (const m of moved) await Deno.remove(m).catch(() => {});
    throw err;
  } finally {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
  }
  for (const p of [top, ...children]) masked += p.spool?.counts.masked ?? 0;
  const done = (p: Planned): ForeignImported => ({
    sessionId: p.id,
    originalId: p.s.id,
    source: p.s.file,
    path: traceFilePath(tracesDir, p.dateDir, p.id, 1),
    records: p.records.length + (p.spool?.counts.records ?? 0) + 1,
    toolCalls: countCalls(p.s) + (p.spool?.counts.toolCalls ?? 0),
    messages: p.records.filter((r) => r.type === "model_msg" && r.payload.type === "text").length +
      (p.spool?.counts.messages ?? 0),
    loss: p.s.loss,
    skipped: p.s.problems.map(formatLineProblem),
    workspace: ws.path,
    recordedWorkspace: p.s.cwd,
  });
  return { session: { ...done(top), harness: s.harness, children: children.map(done) }, masked };
}

/**
 * Mask every record of `family` (its session_meta too, its own and parent
 * ids kept: the files and pointers name them); returns how many changed.
 */
function maskPlanned(family: Planned[], mask: RecordMask): number {
  let changed = 0;
  for (const p of family) {
    p.records = p.records.map((r) => {
      const m = mask(r) as typeof r;
      if (m !== r) changed++;
      return m;
    });
    // The session_meta as written (`withMeta`), its time the file's first: a digits-only secret
    // in a fraction of a second stayed raw (attack round 23 secrets B7).
    const env = { timestamp: metaTime(p), type: "session_meta" as const, payload: p.meta };
    const m = mask(env);
    if (m !== env) {
      // Its own id and its parent's are penguin's; the parent's tool-call id is the foreign
      // Agent call's, masked as that call is in the parent (attack round 23 secrets B1).
      const meta: SessionMeta = { ...(m.payload as SessionMeta), session_id: p.meta.session_id };
      const own = p.meta.parent as { session_id?: unknown } | undefined;
      const masked = meta.parent as Record<string, unknown> | undefined;
      if (own && masked) meta.parent = { ...masked, session_id: own.session_id };
      p.meta = meta;
      p.metaTimestamp = m.timestamp;
      changed++;
    }
  }
  return changed;
}

const HARNESS_NAMES: Record<Harness, string> = {
  codex: "Codex",
  claude: "Claude Code",
  pi: "pi",
};

function lossLines(loss: readonly LossEntry[], indent: string): string {
  if (loss.length === 0) return `${indent}Loss report: nothing left out\n`;
  return `${indent}Loss report (not imported):\n` +
    loss.map((l) => `${indent}  ${l.kind} ×${l.count} (e.g. ${l.example}): ${l.reason}\n`).join("");
}

/** The one line `penguin sessions import` prints for an imported foreign session (and its children). */
export function foreignImportLine(s: ForeignImportedSession): string {
  const kids = s.children.length > 0 ? ` and ${s.children.length} subagent session(s)` : "";
  const loss = [s, ...s.children].flatMap((x) => x.loss);
  return `Imported ${HARNESS_NAMES[s.harness]} session ${s.originalId} as ${s.sessionId}${kids}: ` +
    `${s.messages} message(s), ${s.toolCalls} tool call(s); ${lossSummary(loss)}\n`;
}

/** The full text `penguin sessions import --verbose` prints for one imported foreign session. */
export function formatForeignImport(s: ForeignImportedSession): string {
  const head = (x: ForeignImported, what: string, indent: string) =>
    `${indent}Imported ${what} ${x.originalId} as ${x.sessionId}: ${x.records} record(s), ${x.toolCalls} tool call(s)\n` +
    `${indent}  ${x.source} -> ${x.path}\n`;
  let out = head(s, `${HARNESS_NAMES[s.harness]} session`, "");
  out += `  continues in ${s.workspace} (its file recorded "${s.recordedWorkspace}")\n`;
  out += lossLines(s.loss, "  ");
  for (const c of s.children) {
    out += head(c, "subagent", "  ");
    out += lossLines(c.loss, "    ");
  }
  return out;
}
