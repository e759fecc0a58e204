/**
 * Trace validation: every line against the protocol schema, plus file-level
 * rules (the first record is the one `session_meta`; a `session-…_NNN.jsonl`
 * name matches its session id; no partials; no origin-tagged records).
 *
 * @module
 */
import { join } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import { type CheckContext, FILE_CHECKS } from "./_checks.ts";
import { readTrace, type TraceProblem } from "./reader.ts";

/** The result for one file. */
export interface FileValidation {
  /** The file, as named by the caller or found under a directory argument. */
  file: string;
  /** Number of valid records read. */
  records: number;
  /** Every problem, in line order. */
  problems: TraceProblem[];
}

/** The result of {@linkcode validateTraceFiles}. */
export interface ValidationReport {
  /** True when no file has a problem. */
  ok: boolean;
  /** Per file, in the order checked. */
  files: FileValidation[];
  /** Valid records across all files. */
  records: number;
  /** Every problem across all files. */
  problems: TraceProblem[];
}

/** Options of {@linkcode validateTraceFiles}. */
export interface ValidateOptions {
  /** Require every file to be named `<session_id>_<NNN>.jsonl` (default: only names starting `session-` are checked). */
  strictNames?: boolean;
  /** Called with each file's result as soon as it is checked. */
  onFile?: (result: FileValidation) => void;
}

async function walk(dir: string, out: string[]): Promise<void> {
  const entries: Deno.DirEntry[] = [];
  for await (const e of Deno.readDir(dir)) entries.push(e);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory) await walk(p, out);
    else if (
      e.name.endsWith(".jsonl") && (e.isFile || (e.isSymlink && (await statOrNull(p))?.isFile))
    ) out.push(p);
  }
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
 * recursively for `*.jsonl` (sorted; symlinked directories are not followed).
 * Throws a PenguinError of kind "not_found" for a path that does not exist.
 */
export async function expandTracePaths(paths: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    const info = await statOrNull(p);
    if (!info) {
      throw new PenguinError("not_found", `Cannot validate "${p}": no such file or directory`);
    }
    if (info.isDirectory) await walk(p, out);
    else out.push(p);
  }
  return out;
}

/** Validate one trace file. */
export async function validateTraceFile(
  file: string,
  options: ValidateOptions = {},
): Promise<FileValidation> {
  const problems: TraceProblem[] = [];
  const ctx: CheckContext = {
    file,
    strictNames: options.strictNames ?? false,
    problemsSoFar: () => problems.length,
  };
  const checks = FILE_CHECKS.map((make) => make(ctx));
  let records = 0;
  let lines = 0;
  const onProblem = (p: TraceProblem) => {
    problems.push(p);
    lines = p.line;
  };
  for await (const rec of readTrace(file, { onProblem })) {
    records++;
    lines = rec.line;
    for (const check of checks) problems.push(...check.record(rec));
  }
  for (const check of checks) problems.push(...check.end(lines));
  return { file, records, problems };
}

/**
 * Validate trace files and directories of them; every problem is reported
 * with its file and line (format with `formatProblem`).
 */
export async function validateTraceFiles(
  paths: readonly string[],
  options: ValidateOptions = {},
): Promise<ValidationReport> {
  const files: FileValidation[] = [];
  for (const file of await expandTracePaths(paths)) {
    const result = await validateTraceFile(file, options);
    files.push(result);
    options.onFile?.(result);
  }
  const problems = files.flatMap((f) => f.problems);
  return {
    ok: problems.length === 0,
    files,
    records: files.reduce((n, f) => n + f.records, 0),
    problems,
  };
}
