/**
 * `penguin trace validate` (each other `trace` command is a module of its own,
 * loaded only when it runs).
 *
 * @module
 */
import { PenguinError } from "../../protocol/errors.ts";
import {
  expandTracePaths,
  type FileValidation,
  formatProblem,
  validateTraceFiles,
} from "../../trace/mod.ts";
import { bool, type Flag, flagHelp, parseDeclared } from "../args.ts";
import type { Command, CommandContext } from "../command.ts";
import { stderrProgress } from "../render/progress.ts";
import { maskedText } from "../../protocol/record_mask.ts";
import { currentSecretsMask } from "./_display_mask.ts";

const VALIDATE_FLAGS: readonly Flag<unknown>[] = [
  {
    name: "json",
    type: "boolean",
    help: "print one JSON report instead of text:\n" +
      '{"ok", "summary": {"files", "records", "problems", "warnings" (when any)},\n' +
      ' "files": [{"file", "records", "problems": [{"file", "line", "kind", "reason"}],\n' +
      '            "warnings": [same shape]}]}\n' +
      "kind is torn_tail, malformed, invalid or structure",
  },
  {
    name: "strict",
    type: "boolean",
    help: "also require every file to be named <session_id>_<NNN>.jsonl\n" +
      '(by default only names starting with "session-" are checked)',
  },
];

const VALIDATE_HELP = `Usage: penguin trace validate [--json] [--strict] <file|dir>...

Check trace files against the OmniMessage protocol. Directories are searched
recursively for *.jsonl files. Every problem is printed on stdout as
"file:line: reason", then one summary line "N file(s), N record(s), N problem(s)".

Each line must be one JSON OmniMessage that passes the protocol schema; blank
lines are ignored. Per file: the first record is the only session_meta; a file
named session-…_NNN.jsonl carries that session_id; no partial_* (streaming)
records; no origin-tagged (forwarded child) records; request_begin and
request_end in pairs; every committed tool call (stop_reason completed, in a
request that ended completed) answered by exactly one tool_call_output before
the next request. Per session (files named <session>_<NNN>.jsonl given
together): token_usage session totals never decrease; a rotated file (_NNN,
NNN > 1) starts with session_meta then tool_list_ready, the file before it ends
with a completed compaction_end, and no index is skipped; every subagent pointer
names a child session whose trace exists in the same traces directory tree (or
another agent's traces directory, or the same directory). A torn last line (a
record cut short by a crash, with no trailing newline) is reported as a problem
on its own line. Files are only read, never modified.

Warnings: what a crash leaves and resume tolerates is reported as
"file:line: warning: reason" and does not change the exit code: a request left
open at the end of a file (unless a torn last line already explains it) or
before the session was resumed (resume drops that request and re-sends its
input), and a committed tool call left unanswered when the file ends, the task
was aborted or the session resumed (resume supplies a placeholder output).

Flags:
${flagHelp(VALIDATE_FLAGS, 14)}

Exit codes:
  0  every file is clean (warnings allowed)
  1  at least one problem was found
  2  usage error: no paths given, or a path that does not exist

Example:
  penguin trace validate ~/.penguin/data/default_project/agents/default_agent/traces
`;

function plural(n: number, word: string): string {
  return `${n} ${word}(s)`;
}

async function validateCommand(args: string[], ctx: CommandContext): Promise<number> {
  const parsed = parseDeclared("trace validate", args, VALIDATE_FLAGS);
  if (bool(parsed, "help")) {
    ctx.io.out(VALIDATE_HELP);
    return 0;
  }
  const paths = parsed.positionals;
  if (paths.length === 0) {
    throw new PenguinError("usage", "trace validate: give at least one trace file or directory");
  }
  const json = bool(parsed, "json");
  for (const p of paths) {
    try {
      await Deno.stat(p);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) {
        throw new PenguinError("usage", `trace validate: "${p}" does not exist`);
      }
      throw err;
    }
  }
  const files = await expandTracePaths(paths);
  if (files.length === 0) {
    ctx.io.err(
      `penguin: no *.jsonl files found in ${paths.map((p) => JSON.stringify(p)).join(", ")}\n`,
    );
  }
  // A problem quotes what the file holds (a pointer's id): shown masked with the secrets known now,
  // as every other trace view (attack round 24 secrets A24).
  const recordMask = await currentSecretsMask("trace validate", files, ctx);
  const mask = (text: string) => maskedText(recordMask, text);
  // On a terminal, stderr counts the files checked; it is erased before any line is printed.
  const progress = stderrProgress(ctx.io, json);
  let checked = 0;
  const onFile = json ? undefined : (f: FileValidation) => {
    checked++;
    if (f.problems.length > 0 || f.warnings.length > 0) progress.done();
    if (f.problems.length > 0) {
      ctx.io.out(mask(f.problems.map((p) => formatProblem(p) + "\n").join("")));
    }
    if (f.warnings.length > 0) {
      ctx.io.out(
        mask(f.warnings.map((p) => `${p.file}:${p.line}: warning: ${p.reason}\n`).join("")),
      );
    }
    if (checked < files.length) progress.show(`validating ${checked + 1}/${files.length}`);
  };
  if (files.length > 0) progress.show(`validating 1/${files.length}`);
  const report = await validateTraceFiles(files, { strictNames: bool(parsed, "strict"), onFile })
    .finally(() => progress.done());
  const summary: Record<string, number> = {
    files: report.files.length,
    records: report.records,
    problems: report.problems.length,
  };
  if (report.warnings.length > 0) summary.warnings = report.warnings.length;
  if (json) {
    ctx.io.out(
      mask(JSON.stringify({ ok: report.ok, summary, files: report.files }, null, 2)) + "\n",
    );
  } else {
    const warned = report.warnings.length > 0
      ? `, ${plural(report.warnings.length, "warning")}`
      : "";
    ctx.io.out(
      `${plural(report.files.length, "file")}, ${plural(report.records, "record")}, ${
        plural(report.problems.length, "problem")
      }${warned}\n`,
    );
  }
  return report.ok ? 0 : 1;
}

/** `penguin trace validate` (the other trace commands have modules of their own). */
export const traceValidateCommand: Command = {
  path: ["trace", "validate"],
  summary: "check trace files and directories against the protocol",
  help: VALIDATE_HELP,
  run: validateCommand,
};
