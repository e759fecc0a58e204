/**
 * `penguin trace …` commands.
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
import { bool, parseFlags } from "../args.ts";
import type { Command, CommandContext } from "../command.ts";
import { traceShowCommand } from "./trace_show.ts";
import { traceStatsCommand } from "./trace_stats.ts";

const VALIDATE_HELP = `Usage: penguin trace validate [--json] [--strict] <file|dir>...

Check trace files against the OmniMessage protocol. Directories are searched
recursively for *.jsonl files. Every problem is printed on stdout as
"file:line: reason", then one summary line "N file(s), N record(s), N problem(s)".

Each line must be one JSON OmniMessage that passes the protocol schema; blank
lines are ignored. Per file: the first record is the only session_meta; a file
named session-…_NNN.jsonl carries that session_id; no partial_* (streaming)
records; no origin-tagged (forwarded child) records. A torn last line (a record
cut short by a crash, with no trailing newline) is reported as a problem on its
own line. Files are only read, never modified.

Flags:
  --json      print one JSON report instead of text:
              {"ok", "summary": {"files", "records", "problems"},
               "files": [{"file", "records", "problems": [{"file", "line", "kind", "reason"}]}]}
              kind is torn_tail, malformed, invalid or structure
  --strict    also require every file to be named <session_id>_<NNN>.jsonl
              (by default only names starting with "session-" are checked)

Exit codes:
  0  every file is clean
  1  at least one problem was found
  2  usage error: no paths given, or a path that does not exist

Example:
  penguin trace validate ~/.penguin/data/default_project/agents/default_agent/traces
`;

function plural(n: number, word: string): string {
  return `${n} ${word}(s)`;
}

async function validateCommand(args: string[], ctx: CommandContext): Promise<number> {
  const parsed = parseFlags("trace validate", args, {
    json: { type: "boolean" },
    strict: { type: "boolean" },
  });
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
  const onFile = json ? undefined : (f: FileValidation) => {
    if (f.problems.length > 0) ctx.io.out(f.problems.map((p) => formatProblem(p) + "\n").join(""));
  };
  const report = await validateTraceFiles(files, { strictNames: bool(parsed, "strict"), onFile });
  const summary = {
    files: report.files.length,
    records: report.records,
    problems: report.problems.length,
  };
  if (json) {
    ctx.io.out(JSON.stringify({ ok: report.ok, summary, files: report.files }, null, 2) + "\n");
  } else {
    ctx.io.out(
      `${plural(summary.files, "file")}, ${plural(summary.records, "record")}, ${
        plural(summary.problems, "problem")
      }\n`,
    );
  }
  return report.ok ? 0 : 1;
}

/** The trace commands. */
export const traceCommands: Command[] = [
  {
    path: ["trace", "validate"],
    summary: "check trace files and directories against the protocol",
    help: VALIDATE_HELP,
    run: validateCommand,
  },
  traceShowCommand,
  traceStatsCommand,
];
