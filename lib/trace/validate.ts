/**
 * Trace validation: every line against the protocol schema, plus file-level
 * rules (the first record is the one `session_meta`; a `session-…_NNN.jsonl`
 * name matches its session id; no partials; no origin-tagged records;
 * request_begin/request_end pairs; committed tool calls answered exactly
 * once) and session-level rules over the files of one session
 * (`<session>_<NNN>.jsonl`, checked together): token_usage `session` totals
 * never decrease; a rotated file (`_NNN`, NNN > 1) starts with session_meta
 * then tool_list_ready and its predecessor ends with a completed
 * compaction_end, with no index missing in between; every `subagent` pointer
 * names a child whose trace exists (searched in the same traces tree, the
 * other agents' traces dirs, or the same directory).
 *
 * Findings that a crash explains and resume tolerates (a request left open at
 * the end of a file or before a resume, a committed tool call left unanswered
 * by an interrupted tool) are reported as warnings, which do not make a file
 * invalid.
 *
 * @module
 */
import { collectorEvery } from "../state/_gc.ts";
import { basename } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import type { OmniMessage } from "../protocol/types.ts";
import { type CheckContext, type CheckFinding, FILE_CHECKS } from "./_checks.ts";
import { walkTraceFiles } from "./layout.ts";
import { parseTraceFileName } from "./paths.ts";
import { readTrace, type TraceProblem, type TraceRecord } from "./reader.ts";
import { findRelative, type RelativesCache } from "./session_files.ts";

/** The result for one file. */
export interface FileValidation {
  /** The file, as named by the caller or found under a directory argument. */
  file: string;
  /** Number of valid records read. */
  records: number;
  /** Every problem, in line order. */
  problems: TraceProblem[];
  /** Findings that do not invalidate the file (crash leftovers resume tolerates), in line order. */
  warnings: TraceProblem[];
}

/** The result of {@linkcode validateTraceFiles}. */
export interface ValidationReport {
  /** True when no file has a problem (warnings allowed). */
  ok: boolean;
  /** Per file, in the order checked. */
  files: FileValidation[];
  /** Valid records across all files. */
  records: number;
  /** Every problem across all files. */
  problems: TraceProblem[];
  /** Every warning across all files. */
  warnings: TraceProblem[];
}

/** Options of {@linkcode validateTraceFiles}. */
export interface ValidateOptions {
  /** Require every file to be named `<session_id>_<NNN>.jsonl` (default: only names starting `session-` are checked). */
  strictNames?: boolean;
  /** Called with each file's result as soon as it (and its session) is checked. */
  onFile?: ((result: FileValidation) => void) | undefined;
}

async function statOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.stat(path);
  } catch {
    return null;
  }
}

/**
 * Expand `paths` into trace files: files as given, directories searched
 * for trace files as {@linkcode walkTraceFiles} does (sorted; inside a data
 * root only the agents' traces directories).
 * Throws a PenguinError of kind "not_found" for a path that does not exist.
 */
export async function expandTracePaths(paths: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    const info = await statOrNull(p);
    if (!info) {
      throw new PenguinError("not_found", `Cannot validate "${p}": no such file or directory`);
    }
    if (info.isDirectory) out.push(...await walkTraceFiles(p));
    else out.push(p);
  }
  return out;
}

/** What the session-level rules collect from one file while it is read. */
interface FileFacts {
  head: TraceRecord[]; // the first two records
  last: TraceRecord | null;
  pointers: { line: number; id: string }[];
  /** Pointers past the first {@linkcode MAX_FINDINGS}: counted, their children not looked for. */
  unchecked: number;
}

type Counts = Record<"cache_read" | "cache_write" | "output" | "total", number>;
const COUNT_KEYS = ["cache_read", "cache_write", "output", "total"] as const;

/** token_usage `session` totals never decrease across the files of one session. */
function tokenMonotonic() {
  let prev: { counts: Counts; file: string; line: number } | null = null;
  return (file: string, rec: TraceRecord): CheckFinding[] => {
    const m = rec.message;
    if (m.type !== "event_msg" || m.payload.type !== "token_usage") return [];
    const s = m.payload.session as unknown as Counts;
    const before = prev;
    prev = { counts: s, file, line: rec.line };
    if (!before) return [];
    for (const k of COUNT_KEYS) {
      if (s[k] < before.counts[k]) {
        const where = before.file === file
          ? `line ${before.line}`
          : `${before.file}:${before.line}`;
        return [{
          file,
          line: rec.line,
          kind: "structure",
          reason: `token_usage.session.${k}: expected at least ${
            before.counts[k]
          } (the session total at ${where}), found ${s[k]}; session totals never decrease`,
        }];
      }
    }
    return [];
  };
}

function describe(rec: TraceRecord | undefined): string {
  if (!rec) return "nothing";
  const m: OmniMessage = rec.message;
  if (m.type === "session_meta") return "a session_meta";
  return `${m.type === "event_msg" ? "an" : "a"} ${m.type} ${JSON.stringify(m.payload.type)}`;
}

function sortFindings(
  list: CheckFinding[],
): { problems: TraceProblem[]; warnings: TraceProblem[] } {
  const problems: TraceProblem[] = [];
  const warnings: TraceProblem[] = [];
  for (const f of [...list].sort((a, b) => a.line - b.line)) {
    const { warning, ...p } = f;
    (warning ? warnings : problems).push(p);
  }
  return { problems, warnings };
}

/** Problems, and warnings, of one file listed at most; the others are counted. */
export const MAX_FINDINGS = 1000;

/** A child session id longer than this is not looked for (a session id has 36 characters). */
const MAX_CHILD_ID = 256;

/** Check one file's records; `observe` sees every valid record (session-level rules). */
async function checkFile(
  file: string,
  options: ValidateOptions,
  observe: (rec: TraceRecord) => CheckFinding[],
): Promise<{ records: number; findings: CheckFinding[]; facts: FileFacts }> {
  const findings: CheckFinding[] = [];
  // Past MAX_FINDINGS problems (or warnings) of a file, the others are counted, not kept: a
  // 30 MB trace of a million broken records took `trace validate` to 620 MB and printed 100 MB
  // (attack round 23 bounded A17).
  let problems = 0;
  let warnings = 0;
  let more = 0;
  const keep = (list: readonly CheckFinding[]) => {
    for (const f of list) {
      const n = f.warning ? warnings++ : problems++;
      if (n < MAX_FINDINGS) findings.push(f);
      else more++;
    }
  };
  let torn = false;
  const ctx: CheckContext = {
    file,
    strictNames: options.strictNames ?? false,
    problemsSoFar: () => problems,
    tornTail: () => torn,
  };
  const checks = FILE_CHECKS.map((make) => make(ctx));
  const facts: FileFacts = { head: [], last: null, pointers: [], unchecked: 0 };
  let records = 0;
  let lines = 0;
  const onProblem = (p: TraceProblem) => {
    keep([p]);
    if (p.kind === "torn_tail") torn = true;
    lines = p.line;
  };
  // Each record is parsed and dropped: a long trace makes garbage fast, collected as it goes.
  const collected = collectorEvery(COLLECT_EVERY_RECORDS);
  for await (const rec of readTrace(file, { onProblem })) {
    records++;
    collected(1);
    lines = rec.line;
    if (facts.head.length < 2) facts.head.push(rec);
    facts.last = rec;
    const m = rec.message;
    if (m.type === "event_msg" && m.payload.type === "subagent" && m.origin === undefined) {
      // The children looked for: the first MAX_FINDINGS pointers, ids of a session id's length
      // (600,000 pointers of a trace were all kept, looked for and listed: 730 MB; attack round
      // 24 bounded R1).
      const id = String(m.payload.session_id);
      if (id.length > MAX_CHILD_ID) {
        keep([{
          file,
          line: rec.line,
          kind: "structure",
          reason: `subagent: a child session id of ${id.length} characters (not looked for)`,
        }]);
      } else if (facts.pointers.length < MAX_FINDINGS) {
        facts.pointers.push({ line: rec.line, id });
      } else facts.unchecked++;
    }
    for (const check of checks) keep(check.record(rec));
    keep(observe(rec));
  }
  for (const check of checks) keep(check.end(lines));
  if (more > 0) {
    findings.push({
      file,
      line: lines,
      kind: "structure",
      reason: `${more} more problem(s) and warning(s) not listed (the first ${MAX_FINDINGS} of ` +
        `each are)`,
    });
  }
  return { records, findings, facts };
}

/** Validate one trace file (its file-level rules and, as a session of one file, the session rules). */
export async function validateTraceFile(
  file: string,
  options: ValidateOptions = {},
): Promise<FileValidation> {
  const [result] = await validateGroup([{ path: file, index: null }], options, new Map());
  return result!;
}

/** Check the files of one session (one file when the names carry no index). */
async function validateGroup(
  files: { path: string; index: number | null }[],
  options: ValidateOptions,
  relatives: RelativesCache,
): Promise<FileValidation[]> {
  const tokens = tokenMonotonic();
  const checked = [];
  for (const f of files) {
    const r = await checkFile(f.path, options, (rec) => tokens(f.path, rec));
    checked.push({ ...f, ...r });
  }
  for (let i = 0; i < checked.length; i++) {
    const cur = checked[i]!;
    // Rotation heads: only between consecutive shards checked together.
    const prev = i > 0 ? checked[i - 1]! : null;
    if (prev && cur.index !== null && prev.index !== null && cur.index > 1) {
      const headBroken = cur.findings.some((x) => !x.warning && x.line <= 1);
      if (cur.index !== prev.index + 1) {
        cur.findings.push({
          file: cur.path,
          line: 1,
          kind: "structure",
          reason: `file index: expected _${String(prev.index + 1).padStart(3, "0")} after ${
            basename(prev.path)
          } (files of a session are numbered without gaps), found _${
            String(cur.index).padStart(3, "0")
          }`,
        });
      } else if (!headBroken) {
        const last = prev.facts.last?.message;
        const closed = last?.type === "event_msg" && last.payload.type === "compaction_end" &&
          last.payload.status === "completed";
        if (!closed) {
          cur.findings.push({
            file: cur.path,
            line: 1,
            kind: "structure",
            reason: `rotation: ${
              basename(prev.path)
            } must end with a completed compaction_end before ${
              basename(cur.path)
            } starts a new context, but its last record (line ${prev.facts.last?.line ?? 0}) is ${
              describe(prev.facts.last ?? undefined)
            }`,
          });
        }
        const second = cur.facts.head[1];
        const ok = second?.message.type === "event_msg" &&
          second.message.payload.type === "tool_list_ready";
        if (!ok) {
          cur.findings.push({
            file: cur.path,
            line: second?.line ?? 1,
            kind: "structure",
            reason:
              `rotation: expected a tool_list_ready right after the session_meta at the head of ${
                basename(cur.path)
              }, found ${describe(second)}`,
          });
        }
      }
    }
    cur.findings.push(...await childFindings(cur.path, cur.facts, relatives));
  }
  return checked.map((c) => ({ file: c.path, records: c.records, ...sortFindings(c.findings) }));
}

/** The pointers of `facts` whose child has no trace in the tree of `path`, and those not looked at. */
async function childFindings(
  path: string,
  facts: FileFacts,
  relatives: RelativesCache,
): Promise<CheckFinding[]> {
  const out: CheckFinding[] = [];
  for (const ptr of facts.pointers) {
    if ((await findRelative(path, ptr.id, relatives)) === null) {
      out.push({
        file: path,
        line: ptr.line,
        kind: "structure",
        reason: `subagent: no trace of the child session ${
          JSON.stringify(ptr.id)
        } found in the traces directory tree of this file`,
      });
    }
  }
  if (facts.unchecked > 0) {
    out.push({
      file: path,
      line: facts.last?.line ?? 0,
      kind: "structure",
      warning: true,
      reason: `subagent: the children of ${facts.unchecked} more pointer(s) not looked ` +
        `for (the first ${MAX_FINDINGS} are)`,
    });
  }
  return out;
}

/** Records of one file validated between two full garbage collections. */
const COLLECT_EVERY_RECORDS = 65_536;

/**
 * Validate trace files and directories of them; every problem is reported
 * with its file and line (format with `formatProblem`). Files named
 * `<session>_<NNN>.jsonl` are checked together with the other files of their
 * session found among `paths`.
 */
export async function validateTraceFiles(
  paths: readonly string[],
  options: ValidateOptions = {},
): Promise<ValidationReport> {
  const groups = new Map<string, { path: string; index: number | null }[]>();
  for (const path of await expandTracePaths(paths)) {
    const parsed = parseTraceFileName(basename(path));
    const key = parsed ? `session:${parsed.sessionId}` : `file:${path}`;
    const list = groups.get(key) ?? [];
    list.push({ path, index: parsed?.index ?? null });
    groups.set(key, list);
  }
  const relatives: RelativesCache = new Map();
  const files: FileValidation[] = [];
  for (const list of groups.values()) {
    list.sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    for (const result of await validateGroup(list, options, relatives)) {
      files.push(result);
      options.onFile?.(result);
    }
  }
  const problems = files.flatMap((f) => f.problems);
  return {
    ok: problems.length === 0,
    files,
    records: files.reduce((n, f) => n + f.records, 0),
    problems,
    warnings: files.flatMap((f) => f.warnings),
  };
}
