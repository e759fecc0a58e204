/**
 * Importing trace files into an agent's traces directory.
 *
 * Every line is checked against the protocol schema, plus the file rules
 * (the first record is a session_meta, and the only one; no streaming
 * partials; no origin-tagged records). A file with any problem is refused
 * with `file:line: reason` errors, unless `lenient`, which skips the bad
 * lines and reports each; a file whose first record is not a session_meta
 * is refused either way. Files naming the same session_id import as one
 * session (ordered by their `_NNN` suffix, else as given). Any one file of
 * a rotated session brings its siblings (`<id>_001.jsonl` … up to the
 * highest index beside it); a gap in that range refuses the session,
 * naming the missing file.
 *
 * Records are copied byte for byte; only the session_meta line is rewritten,
 * to add `imported_from: {path, session_id, recorded_workspace,
 * workspace_from}`, to set its workspace to the one chosen at import (see
 * lib/session/import_workspace.ts), and, when the id is already taken (or
 * unfit for a file name), to give the session a new id. A `workspace_moved`
 * record names a directory of the machine the file comes from: it is left
 * out (and reported), so the session continues where the user chose. Files
 * are created exclusively: nothing is ever overwritten.
 *
 * A parent and its subagent children are one unit: the children named by
 * the `subagent` pointers of an imported session come along when their
 * traces are present next to it (in the same directory, or in the traces
 * tree it sits in and its sibling agents' traces), unless `children:
 * false`. When a family member gets a new id, the pointers naming it (and a
 * child's `session_meta.parent.session_id`) are rewritten so they still
 * resolve; those are the only other lines that change — besides, with a
 * `mask` (the CLI passes the one masking the secrets known at import), every
 * record the mask changes, written anew (records it leaves alone keep their
 * bytes); the report counts them.
 *
 * @module
 */
import { basename, dirname, join, resolve } from "node:path";
import { errorMessage, PenguinError } from "../protocol/errors.ts";
import { isPartial } from "../protocol/guards.ts";
import type { OmniMessage, SessionMetaEnvelope } from "../protocol/types.ts";
import { maskedText, type RecordMask } from "../protocol/record_mask.ts";
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
import { formatProblem, keepProblem, readTrace, type TraceProblem } from "../trace/reader.ts";
import { findRelative, type RelativesCache } from "../trace/session_files.ts";
import { alreadyExists, copyLines, createTraceFile, sameFile } from "./_copy.ts";
import type { ImportWorkspace } from "./import_workspace.ts";
import { listSessions } from "./list.ts";
import type { SessionScope } from "./locate.ts";

/**
 * A transform of each imported record (masking the secrets known at import):
 * the same object when it leaves the record alone.
 */
export type { RecordMask };

/** What every import takes: penguin's ({@linkcode importTraces}) and a foreign one. */
export interface ImportCommonOptions extends SessionScope {
  /** Where the imported sessions continue (never the path or cwd their files recorded). */
  workspace: ImportWorkspace;
  /** Skip bad lines (reporting each) instead of refusing the file. */
  lenient?: boolean;
  /** Told before each given file is read (`done` files of `total` so far). */
  onFile?: (done: number, total: number, file: string) => void;
  /** Import a session again even when it is already here (a new copy). */
  again?: boolean;
  /** Applied to every imported record, a converted session_meta too (see {@linkcode RecordMask}). */
  mask?: RecordMask;
}

/** Options of {@linkcode importTraces}. */
export interface ImportOptions extends ImportCommonOptions {
  /** Clock for new ids (tests). */
  now?: Date;
  /** Bring along the subagent children found next to an imported session (default true). */
  children?: boolean;
  /**
   * Sessions already here, by the id their file records (see
   * {@linkcode importedPenguin}): not imported again unless `again`.
   */
  already?: ReadonlyMap<string, string>;
}

/** One imported file. */
export interface ImportedFile {
  /** The file imported (absolute). */
  source: string;
  /** The new trace file. */
  path: string;
  /** Records written (the session_meta included). */
  records: number;
  /** Records the import's `mask` changed (the session_meta included). */
  masked: number;
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
  /** When it came along as a subagent child: the original id of the session naming it. */
  childOf?: string;
  /** Where it continues: the workspace chosen at import. */
  workspace: string;
  /** The workspace its file recorded (not used). */
  recordedWorkspace: string;
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
  /** Subagent children named by imported sessions whose traces were not found next to them. */
  missingChildren: string[];
  /** Sessions not imported because they are already here: their files, recorded id and id here. */
  already?: Array<{ files: string[]; originalId: string; sessionId: string }>;
  /** Records the `mask` changed (the session_meta lines included). */
  masked: number;
}

/**
 * The penguin sessions of this agent, by the id their original file
 * recorded: an imported one by `imported_from.session_id`, any other by its
 * own id. Each maps to its id here.
 */
export async function importedPenguin(scope: SessionScope): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const row of await listSessions(scope)) {
    const from = row.importedFrom as Record<string, unknown> | null;
    const original = typeof from?.session_id === "string" ? from.session_id : row.sessionId;
    if (!out.has(original)) out.set(original, row.sessionId);
  }
  return out;
}

interface Scanned {
  source: string;
  meta: SessionMetaEnvelope | null;
  metaLine: number;
  keep: Set<number>;
  lastLine: number;
  problems: TraceProblem[];
  fatal: string | null;
  /**
   * `subagent` pointer lines: line → the child's id (one of a session id's length; a
   * pointer with a longer id names no child to bring). Ids only: the records, of any size,
   * are read again as they are copied (40 pointers of 8 MB each were kept whole: 480 MB,
   * attack round 24 bounded R2).
   */
  pointers: Map<number, string>;
  /**
   * Pointer lines whose ids were not kept: past {@linkcode KEPT_POINTER_IDS} distinct ids (each
   * kept one costs its id, 600,000 pointers of 250-character ids took an import to 482 MB,
   * attack round 25 bounded C6). No child past the first {@linkcode MAX_CHILDREN} is brought.
   */
  pointersPast: number;
  /** `workspace_moved` lines, left out. */
  moves: number[];
  /** Kept lines the mask changed (masked again as they are copied). */
  masked: Set<number>;
  /** The file as it was when the scan began and ended (the copy checks it is that file still). */
  info?: Deno.FileInfo;
}

function problem(file: string, line: number, reason: string): TraceProblem {
  return { file, line, kind: "structure", reason };
}

async function scan(source: string, mask?: RecordMask): Promise<Scanned> {
  const s: Scanned = {
    source,
    meta: null,
    metaLine: 0,
    keep: new Set(),
    lastLine: 0,
    problems: [],
    fatal: null,
    pointers: new Map(),
    pointersPast: 0,
    moves: [],
    masked: new Set(),
  };
  const keep = keepProblem(s.problems);
  const pointerIds = new Set<string>();
  try {
    const before = await Deno.stat(source);
    let first = true;
    for await (
      const { line, message: m } of readTrace(source, { onProblem: keep })
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
      if (why) keep(problem(source, line, `unexpected ${why}`));
      else if (m.type === "event_msg" && m.payload.type === "workspace_moved") s.moves.push(line);
      else {
        s.keep.add(line);
        if (mask && mask(m) !== m) s.masked.add(line);
        if (
          m.type === "event_msg" && m.payload.type === "subagent" &&
          typeof m.payload.session_id === "string" &&
          m.payload.session_id.length <= MAX_CHILD_ID
        ) {
          const id = m.payload.session_id;
          if (pointerIds.has(id) || pointerIds.size < KEPT_POINTER_IDS) {
            pointerIds.add(id);
            s.pointers.set(line, id);
          } else s.pointersPast++;
        }
      }
    }
    if (first) s.fatal = `${source}: no records (expected a session_meta first)`;
    sameFile(source, before, await Deno.stat(source));
    s.info = before;
  } catch (err) {
    const directory = err instanceof Deno.errors.IsADirectory ||
      (err instanceof Error && err.cause instanceof Deno.errors.IsADirectory);
    s.fatal = directory
      ? `${source}: a directory, not a trace file (give the files in it: ${
        join(source, "*.jsonl")
      })`
      : `${source}: ${errorMessage(err)}`;
  }
  return s;
}

/** The report line of a `workspace_moved` record left out. */
function movedNotice(source: string, line: number): string {
  return `${source}:${line}: a workspace_moved record (the session continues in the workspace ` +
    `chosen at import) (skipped)`;
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
  renames: ReadonlyMap<string, string>,
  workspace: ImportWorkspace,
  mask: RecordMask | undefined,
): Promise<ImportedFile[]> {
  const out: ImportedFile[] = [];
  const dateDir = dateDirFor(id, files[0]!.meta!, now);
  try {
    for (const [i, s] of files.entries()) {
      const meta = structuredClone(s.meta!);
      meta.payload.session_id = id;
      meta.payload.imported_from = {
        path: s.source,
        session_id: original,
        recorded_workspace: s.meta!.payload.workspace,
        workspace_from: workspace.from,
      };
      meta.payload.workspace = workspace.path;
      const parent = meta.payload.parent as { session_id?: unknown } | undefined;
      const parentTo = typeof parent?.session_id === "string"
        ? renames.get(parent.session_id)
        : undefined;
      if (parent && parentTo !== undefined) parent.session_id = parentTo;
      const written = maskedMeta(meta, mask);
      const path = traceFilePath(tracesDir, dateDir, id, i + 1);
      let records = 1;
      await createTraceFile(path, async (sink) => {
        await sink.text(JSON.stringify(written) + "\n");
        records += await copyRewritten(s, renames, sink, mask);
      });
      out.push({
        source: s.source,
        path,
        records,
        masked: s.masked.size + (written !== meta ? 1 : 0),
      });
    }
  } catch (err) {
    for (const f of out) await Deno.remove(f.path).catch(() => {});
    throw err;
  }
  return out;
}

/** `meta` masked, its own and its parent's session id kept (the file and pointers name them). */
function maskedMeta(meta: SessionMetaEnvelope, mask: RecordMask | undefined): SessionMetaEnvelope {
  const out = mask ? mask(meta) as SessionMetaEnvelope : meta;
  if (out === meta) return meta;
  // Its own id is penguin's choice (one holding a secret was not kept, see `chooseId`). The
  // parent's is masked like every other string: unchanged unless it holds a secret, and its
  // tool-call id pairs with the parent's call, masked alike (attack round 23 secrets B2).
  return { ...out, payload: { ...out.payload, session_id: meta.payload.session_id } };
}

/**
 * Copy the kept lines of `s`, rewriting the pointers to renamed sessions and
 * the masked records as they are copied (the file checked to be the one
 * scanned). A line is written as its record, parsed again and masked, when
 * the scan's mask changed it, when its bytes hold a secret its parsed form
 * does not show (a duplicated key: attack round 24 secrets B2), or when it
 * is a pointer to a child imported under another id or whose id holds a
 * secret (round 23 secrets B3); every other line keeps its bytes.
 */
async function copyRewritten(
  s: Scanned,
  renames: ReadonlyMap<string, string>,
  sink: Parameters<typeof copyLines>[3],
  mask: RecordMask | undefined,
): Promise<number> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const check = (bytes: Uint8Array, no: number): Uint8Array | undefined => {
    const from = s.pointers.get(no);
    const renamed = from === undefined ? undefined : renames.get(from);
    const text = decoder.decode(bytes);
    const rawSecret = mask !== undefined && maskedText(mask, text) !== text;
    if (!s.masked.has(no) && (renamed === undefined || renamed === from) && !rawSecret) {
      return undefined;
    }
    let record: OmniMessage;
    try {
      record = JSON.parse(text);
    } catch {
      throw new PenguinError("runtime", `${s.source}:${no}: changed while it was imported`);
    }
    let out = mask ? mask(record) : record;
    if (from !== undefined) {
      // The child by the id it gets here, else its recorded one as masked.
      const to = renamed ?? (out.payload as { session_id: string }).session_id;
      out = { ...out, payload: { ...out.payload, session_id: to } } as OmniMessage;
    }
    return encoder.encode(JSON.stringify(out));
  };
  return await copyLines(s.source, (l) => s.keep.has(l), s.lastLine, sink, {
    expect: s.info,
    check,
  });
}

/**
 * Why `path` is not read: a FIFO would block the read, a device (a link to
 * `/dev/zero`) never ends. Undefined for regular files, and for directories
 * and missing paths, which the scan names in its own words.
 */
async function notRegular(path: string): Promise<string | undefined> {
  const info = await Deno.stat(path).catch(() => null);
  if (info === null || info.isFile || info.isDirectory) return undefined;
  return `"${path}" is not a regular file`;
}

/** A report of nothing imported yet. */
function emptyReport(): ImportReport {
  return { ok: true, imported: [], refused: [], skipped: [], missingChildren: [], masked: 0 };
}

/** Import trace files into the agent's traces directory (see the module doc). */
export async function importTraces(
  files: readonly string[],
  options: ImportOptions,
): Promise<ImportReport> {
  const lenient = options.lenient ?? false;
  const now = options.now ?? new Date();
  const tracesDir = agentTracesDir(options);
  const report = emptyReport();
  const accepted: Scanned[] = [];
  const seenFiles = new Set<string>();
  const childOf = new Map<string, string>(); // child id → the parent id naming it
  const take = async (f: string): Promise<boolean> => {
    if (seenFiles.has(f)) return true;
    seenFiles.add(f);
    const special = await notRegular(f);
    if (special !== undefined) {
      report.refused.push({ files: [f], errors: [special] });
      return false;
    }
    const s = await scan(f, options.mask);
    if (s.fatal !== null || (!lenient && s.problems.length > 0)) {
      const errors = s.fatal !== null ? [s.fatal] : [];
      errors.push(...s.problems.map(formatProblem));
      report.refused.push({ files: [s.source], errors });
      return false;
    }
    report.skipped.push(...s.problems.map((p) => `${formatProblem(p)} (skipped)`));
    report.skipped.push(...s.moves.map((line) => movedNotice(s.source, line)));
    accepted.push(s);
    return true;
  };
  const given = await withRotationSiblings([...new Set(files.map((f) => resolve(f)))], report);
  for (const [i, f] of given.entries()) {
    options.onFile?.(i, given.length, f);
    await take(f);
  }
  if (options.children !== false) await bringChildren(accepted, take, childOf, report);
  const groups = group(accepted);
  if (!options.again) dropPresent(groups, options.already, report);
  // Every id is chosen first, so the pointers between family members can follow renames.
  const renames = new Map<string, string>();
  const planned = new Set<string>();
  for (const original of groups.keys()) {
    const id = await chooseId(tracesDir, original, now, planned, options.mask);
    planned.add(id);
    renames.set(original, id);
  }
  for (const [original, members] of groups) {
    try {
      const done = await importOne(tracesDir, original, members, now, renames, options);
      for (const f of done.files) report.masked += f.masked;
      const parent = childOf.get(original);
      report.imported.push(parent !== undefined ? { ...done, childOf: parent } : done);
    } catch (err) {
      report.refused.push({ files: members.map((m) => m.source), errors: [errorMessage(err)] });
    }
  }
  report.ok = report.refused.length === 0;
  return report;
}

/** A child id longer than this names no session to bring (a session id has 36 characters). */
const MAX_CHILD_ID = 256;

/** The most children (and grandchildren) one import brings along, and missing ones it names. */
const MAX_CHILDREN = 1000;

/** Distinct child ids one imported file's pointers keep (twice the children brought). */
const KEPT_POINTER_IDS = 2 * MAX_CHILDREN;

/**
 * Bring the children of the `accepted` sessions along, breadth first
 * (grandchildren too): at most {@linkcode MAX_CHILDREN}, each looked for once,
 * the lookups sharing one reading of the traces tree. For every pointer the
 * accepted ids were gathered again and the tree listed again: 400,000
 * pointers had not been imported after 170 s (attack round 24 bounded R3).
 */
async function bringChildren(
  accepted: Scanned[],
  take: (file: string) => Promise<boolean>,
  childOf: Map<string, string>,
  report: ImportReport,
): Promise<void> {
  const ids = new Set(accepted.map((s) => s.meta!.payload.session_id));
  const missing = new Set<string>();
  const relatives: RelativesCache = new Map();
  let past = 0;
  for (let i = 0; i < accepted.length; i++) {
    const s = accepted[i]!;
    past += s.pointersPast;
    for (const id of s.pointers.values()) {
      if (ids.has(id) || childOf.has(id) || missing.has(id)) continue;
      if (childOf.size + missing.size >= MAX_CHILDREN) {
        past++;
        continue;
      }
      const found = (await findRelative(s.source, id, relatives))?.files.map((f) => f.path) ?? [];
      if (found.length === 0) {
        missing.add(id);
        continue;
      }
      childOf.set(id, s.meta!.payload.session_id);
      const before = accepted.length;
      for (const f of found) await take(f);
      for (const t of accepted.slice(before)) ids.add(t.meta!.payload.session_id);
    }
  }
  report.missingChildren.push(...missing);
  if (past > 0) {
    report.skipped.push(
      `${past} more subagent pointer(s) past the first ${MAX_CHILDREN} children: their ` +
        `sessions are not brought along (import them by name)`,
    );
  }
}

/** Take the sessions of `groups` that are `already` here out, noting each in the report. */
function dropPresent(
  groups: Map<string, Scanned[]>,
  already: ReadonlyMap<string, string> | undefined,
  report: ImportReport,
): void {
  for (const [original, members] of [...groups]) {
    const present = already?.get(original);
    if (present === undefined) continue;
    const files = members.map((m) => m.source);
    (report.already ??= []).push({ files, originalId: original, sessionId: present });
    groups.delete(original);
  }
}

/**
 * The files of a rotated session beside one given file: `<id>_001.jsonl` up
 * to the highest index present in its directory. `missing` names the files
 * of that range that are not there.
 */
async function rotationSiblings(file: string): Promise<{ files: string[]; missing: string[] }> {
  const parsed = parseTraceFileName(basename(file));
  if (!parsed) return { files: [file], missing: [] };
  const dir = dirname(file);
  const present = new Map<number, string>();
  try {
    for await (const e of Deno.readDir(dir)) {
      const p = parseTraceFileName(e.name);
      if (p?.sessionId === parsed.sessionId && !present.has(p.index)) {
        present.set(p.index, join(dir, e.name));
      }
    }
  } catch {
    return { files: [file], missing: [] };
  }
  present.set(parsed.index, file);
  const files: string[] = [];
  const missing: string[] = [];
  const last = Math.max(...present.keys());
  for (let i = 1; i <= last; i++) {
    const f = present.get(i);
    if (f !== undefined) files.push(f);
    else missing.push(join(dir, `${parsed.sessionId}_${String(i).padStart(3, "0")}.jsonl`));
  }
  return { files, missing };
}

/**
 * `given` with every rotation sibling of each file added (a rotated
 * session imports whole, whichever of its files is named). A session with
 * a file missing from its range is refused, naming the missing files.
 */
async function withRotationSiblings(given: string[], report: ImportReport): Promise<string[]> {
  const out: string[] = [];
  const refused = new Set<string>();
  for (const f of given) {
    if (out.includes(f) || refused.has(f)) continue;
    const { files, missing } = await rotationSiblings(f);
    if (missing.length > 0) {
      for (const x of files) refused.add(x);
      const id = parseTraceFileName(basename(f))!.sessionId;
      report.refused.push({
        files: files,
        errors: missing.map((m) =>
          `${m}: missing; session ${id} was rotated (compacted) into ${
            files.length + missing.length
          }+ files and imports whole, so it is refused without this one`
        ),
      });
      continue;
    }
    for (const x of files) if (!out.includes(x)) out.push(x);
  }
  return out.filter((f) => !refused.has(f));
}

/**
 * The id `original` imports as: itself when usable, free and holding no secret (an id names
 * the session's files and every view prints it), else a fresh one.
 */
async function chooseId(
  tracesDir: string,
  original: string,
  now: Date,
  planned: ReadonlySet<string>,
  mask: RecordMask | undefined,
): Promise<string> {
  const clean = maskedText(mask, original) === original;
  let id = usableId(original) && clean
    ? original
    : clean
    ? freshId(original, now)
    : newSessionId(now);
  for (let attempt = 0; attempt < 16; attempt++) {
    if (!planned.has(id) && (await listSessionFiles(tracesDir, id)).length === 0) return id;
    id = clean ? freshId(original, now) : newSessionId(now);
  }
  return id;
}

async function importOne(
  tracesDir: string,
  original: string,
  members: Scanned[],
  now: Date,
  renames: Map<string, string>,
  options: ImportOptions,
): Promise<ImportedSession> {
  const { workspace } = options;
  let id = renames.get(original) ?? original;
  let renamed = id !== original;
  for (let attempt = 0; attempt < 16; attempt++) {
    if ((await listSessionFiles(tracesDir, id)).length > 0) {
      id = freshId(original, now);
      renamed = true;
      renames.set(original, id);
      continue;
    }
    const lock = await acquireSessionLock(tracesDir, id);
    try {
      const written = await write(
        tracesDir,
        id,
        original,
        members,
        now,
        renames,
        workspace,
        options.mask,
      );
      return {
        sessionId: id,
        originalId: original,
        renamed,
        files: written,
        workspace: workspace.path,
        recordedWorkspace: String(members[0]!.meta!.payload.workspace),
      };
    } catch (err) {
      if (!alreadyExists(err)) throw err;
      id = freshId(original, now);
      renamed = true;
      renames.set(original, id);
    } finally {
      await releaseSessionLock(lock);
    }
  }
  throw new PenguinError("runtime", `Cannot import session ${original}: no free session id`);
}
