/**
 * `penguin batch report <results files or data roots…>`: merge the results
 * of many pods (batch/report.ts) and print them as text, JSON, or a
 * self-contained HTML page.
 *
 * @module
 */
import { join } from "node:path";
import { PenguinError } from "../../protocol/errors.ts";
import { readResults, type ResultRecord } from "../../batch/results.ts";
import { type BatchReport, mergeResults } from "../../batch/report.ts";
import { reportHtml } from "../../batch/report_html.ts";
import { escapeControls } from "../../display/terminal_text.ts";
import { formatDuration, formatTokens, formatUsd } from "../../display/numbers.ts";
import { bool, type Flag, flagHelp, flagValue, parseDeclared } from "../args.ts";
import type { Command, CommandContext } from "../command.ts";
import { JSON_OUTPUT } from "./_common_flags.ts";
import { writeOutputFile } from "../_output_file.ts";

const JSON_FLAG: Flag<boolean> = { ...JSON_OUTPUT, help: "print the merged report as JSON" };
const HTML: Flag = {
  name: "html",
  type: "string",
  value: "<file>",
  help: "also write the report as a self-contained HTML page",
};
const FLAGS: readonly Flag<unknown>[] = [JSON_FLAG, HTML];

const HELP = `Usage: penguin batch report <results files or directories…> [--json] [--html <file>]

Merge the results files of one or many "penguin batch run" processes (the
pods of a Kubernetes Job) into one report: tasks completed, failed, aborted
and interrupted (killed with no final line), tokens, cost, wall time per
task (p50, p95), and the failures grouped by reason. A directory stands for
every results file in it, up to three levels down (results.jsonl or
*.results.jsonl): a data root, or the copied volume of a whole Job. Each
task counts once, however many attempts and files name it.

Flags:
${flagHelp(FLAGS, 20)}

Exit status: 0 every task completed, 1 some did not, 2 usage error.
`;

const RESULTS_NAME = /(^|\.)results\.jsonl$/;

async function resultsFilesIn(dir: string, depth: number, out: string[]): Promise<void> {
  const entries: Deno.DirEntry[] = [];
  for await (const e of Deno.readDir(dir)) entries.push(e);
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isFile && RESULTS_NAME.test(e.name)) out.push(path);
    else if (e.isDirectory && depth > 0) await resultsFilesIn(path, depth - 1, out);
  }
}

async function resultsFiles(paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(p);
    } catch (err) {
      throw new PenguinError(
        "usage",
        `batch report: cannot read "${p}": ${(err as Error).message}`,
      );
    }
    if (info.isDirectory) await resultsFilesIn(p, 3, out);
    else out.push(p);
  }
  if (out.length === 0) {
    throw new PenguinError("usage", `batch report: no results file in ${paths.join(", ")}`);
  }
  return out;
}

/** The report as text. */
export function reportText(r: BatchReport): string {
  const lines = [
    `Batch report: ${r.tasks} task(s) from ${r.files} results file(s)`,
    `  completed    ${r.completed}`,
    `  failed       ${r.failed}`,
    `  aborted      ${r.aborted}`,
    `  interrupted  ${r.interrupted}`,
    `Tokens: in ${formatTokens(r.tokens.input)} · out ${formatTokens(r.tokens.output)} · total ${
      formatTokens(r.tokens.total)
    }`,
    `Cost: ${r.cost === null ? "unknown" : formatUsd(r.cost)}${
      r.unpriced > 0 ? ` (${r.unpriced} task(s) unpriced)` : ""
    }`,
    `Wall time per task: p50 ${formatDuration(r.wall_ms.p50)} · p95 ${
      formatDuration(r.wall_ms.p95)
    } · total ${formatDuration(r.wall_ms.total)}`,
  ];
  if (r.duplicate_completions > 0) {
    lines.push(`Warning: ${r.duplicate_completions} task(s) completed more than once`);
  }
  if (r.failures.length > 0) {
    lines.push("Not completed, by reason:");
    for (const f of r.failures) {
      const ids = f.ids.slice(0, 5).join(", ") + (f.ids.length > 5 ? ", …" : "");
      lines.push(
        `  ${String(f.count).padStart(4)}  ${escapeControls(f.reason)}  (${escapeControls(ids)})`,
      );
    }
  }
  return lines.join("\n") + "\n";
}

async function run(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("batch report", args, FLAGS);
  if (p.positionals.length === 0) {
    throw new PenguinError("usage", "batch report: give results files or directories");
  }
  const files = await resultsFiles(p.positionals);
  const records: ResultRecord[] = [];
  for (const f of files) records.push(...await readResults(f));
  const report = mergeResults(records, files.length);
  const html = flagValue(p, HTML);
  if (html !== undefined) await writeOutputFile(html, reportHtml(report));
  if (bool(p, JSON_FLAG.name)) ctx.io.out(JSON.stringify(report, null, 2) + "\n");
  else ctx.io.out(reportText(report));
  return report.completed === report.tasks ? 0 : 1;
}

/** `batch report`. */
export const batchReportCommand: Command = {
  path: ["batch", "report"],
  summary: "merge the results files of many batch runs into one report",
  help: HELP,
  run,
};
