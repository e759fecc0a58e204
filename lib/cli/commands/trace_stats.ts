/**
 * `penguin trace stats`: usage, failures, latency and cost over traces.
 *
 * @module
 */
import { makeStyle } from "../../display/palette.ts";
import { safeStrings } from "../../display/terminal_text.ts";
import { createPriceBook } from "../../inspect/pricing.ts";
import { collectStats, STATS_GROUPS, type StatsGroup } from "../../inspect/stats.ts";
import { renderStatsCsv, renderStatsText } from "../../inspect/stats_render.ts";
import { PenguinError } from "../../protocol/errors.ts";
import { bool, type Flag, flagHelp, parseDeclared, str } from "../args.ts";
import type { Command, CommandContext } from "../command.ts";
import { stderrProgress } from "../render/progress.ts";
import { didYouMeanText } from "../suggest.ts";
import { sessionsOf, TARGET_HELP, targetsOrLatest, untilPipeCloses } from "./trace_common.ts";
import { currentSecretsMaskValue } from "./_display_mask.ts";

const FLAGS: readonly Flag<unknown>[] = [
  {
    name: "by",
    type: "string",
    value: "<group>",
    help: "rows per day (UTC), model (provider/model_id), tool, session\n(the default) or agent",
  },
  {
    name: "since",
    type: "string",
    value: "<date>",
    help: "count only records at or after this time: YYYY-MM-DD (UTC\n" +
      "midnight) or an ISO-8601 date-time",
  },
  {
    name: "until",
    type: "string",
    value: "<date>",
    help: "count only records before this time; a date alone includes\nthat whole day",
  },
  {
    name: "json",
    type: "boolean",
    help: 'one JSON object: {"by", "since", "until", "rows", "total",\n"bytes", "skipped_lines"}',
  },
  { name: "csv", type: "boolean", help: 'CSV: a header, one line per row, and a "total" line' },
  {
    name: "no-children",
    type: "boolean",
    help: "count only the sessions given, not their subagent children\n" +
      "(by default a session's children are counted with it)",
  },
];

const HELP = `Usage: penguin trace stats [--by day|model|tool|session|agent] [--since DATE]
                           [--until DATE] [--json | --csv] [<target>...]

Statistics over traces, one row per session (or per group with --by) and a
total: requests (every request_begin, retries and compaction requests
included) and turns (completed requests outside compactions); request latency
p50/p95/max from nearest-neighbour request_begin/request_end pairs; failed
requests by status and error message, and how many were retried; tool calls by
tool with failed, aborted and denied counts; approvals by decision; aborts;
compactions; subagent pointers; tokens (sum of token_usage.request: cache read,
cache write = uncached input, output, total); wall time (active time: the sum
of task spans, each from its prompt to its last record of work, so the time
between tasks is left out) and the time spent in requests; and cost in USD:
(cache_read·p_cr + cache_write·p_cw + output·p_out) / 1e6 per request, with the
prices configured for the model in the project's .project_config.toml (for a
trace under <root>/<project>/agents/<agent>/traces/) or else the catalog's. A
model without a price is shown as "cost: unknown (no price for provider/model)",
never as zero. Subagent sessions are counted as sessions of their own.

Without a target, the latest session is counted; give the data root (e.g.
~/.penguin/data) as the target to count every session in it. Files are
streamed once; memory does not grow with their size.

Flags:
${flagHelp(FLAGS, 18)}

${TARGET_HELP}

Exit codes: 0 done, 1 a target not found or unreadable, 2 usage error.
`;

function parseWhen(flag: string, value: string | undefined, endOfDay: boolean): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const t = Date.parse(`${value}T00:00:00.000Z`);
    if (Number.isFinite(t)) return endOfDay ? t + 86_400_000 : t;
  } else if (/^\d{4}-\d{2}-\d{2}T/.test(value)) {
    const t = Date.parse(value);
    if (Number.isFinite(t)) return t;
  }
  throw new PenguinError(
    "usage",
    `trace stats: --${flag} must be a date (YYYY-MM-DD) or an ISO-8601 date-time, got ${
      JSON.stringify(value)
    }`,
  );
}

async function run(args: string[], ctx: CommandContext): Promise<number> {
  // Long because: the flags checked, the sessions read and masked, then printed in the form
  // asked; each step uses the ones before.
  const p = parseDeclared("trace stats", args, FLAGS);
  if (bool(p, "help")) {
    ctx.io.out(HELP);
    return 0;
  }
  const by = str(p, "by") ?? "session";
  if (!STATS_GROUPS.includes(by as StatsGroup)) {
    throw new PenguinError(
      "usage",
      `trace stats: --by must be one of ${STATS_GROUPS.join(", ")}, got ${JSON.stringify(by)}${
        didYouMeanText(by.toLowerCase(), STATS_GROUPS)
      }`,
    );
  }
  if (bool(p, "json") && bool(p, "csv")) {
    throw new PenguinError("usage", "trace stats: give --json or --csv, not both");
  }
  const since = parseWhen("since", str(p, "since"), false);
  const until = parseWhen("until", str(p, "until"), true);
  const progress = stderrProgress(ctx.io, bool(p, "json") || bool(p, "csv"));
  progress.show("finding trace files…");
  const sessions = await sessionsOf("trace stats", targetsOrLatest(p.positionals), ctx)
    .finally(() => progress.done());
  const problems = new Map<string, { count: number; lines: number[] }>();
  const collected = await collectStats(sessions, {
    onSession: (done, total) => progress.show(`reading session ${done + 1}/${total}`),
    by: by as StatsGroup,
    since,
    until,
    prices: createPriceBook((m) => {
      progress.done();
      ctx.io.err(`penguin: warning: ${m}\n`);
    }),
    children: !bool(p, "no-children"),
    onProblem: (pr) => {
      const seen = problems.get(pr.file) ?? { count: 0, lines: [] };
      seen.count++;
      if (seen.lines.length < 20) seen.lines.push(pr.line);
      problems.set(pr.file, seen);
    },
  });
  progress.done();
  // Tool names, models and error texts come from the traces: masked with the secrets known now,
  // as every other view masks them (attack round 20 mcpsecrets #1).
  const report = await currentSecretsMaskValue(
    "trace stats",
    collected,
    sessions.flatMap((s) => s.files.map((f) => f.path)),
    ctx,
  );
  for (const [file, { count, lines }] of problems) {
    const more = count > lines.length ? ", …" : "";
    ctx.io.err(
      `[trace] skipped ${count} malformed line(s) [${lines.join(", ")}${more}] in ${file}\n`,
    );
  }
  return await untilPipeCloses(() => {
    if (bool(p, "json")) {
      ctx.io.out(
        JSON.stringify(
          {
            by: report.by,
            since: since === undefined ? null : new Date(since).toISOString(),
            until: until === undefined ? null : new Date(until).toISOString(),
            rows: report.rows,
            total: report.total,
            bytes: report.bytes,
            skipped_lines: report.skipped,
          },
          null,
          2,
        ) + "\n",
      );
    } else if (bool(p, "csv")) {
      ctx.io.out(renderStatsCsv(safeStrings(report)));
    } else {
      // Model names, tool names and error texts come from the traces: no escape sequence of theirs.
      ctx.io.out(renderStatsText(safeStrings(report), makeStyle(ctx.io.color)));
    }
    return Promise.resolve(0);
  });
}

/** `penguin trace stats`. */
export const traceStatsCommand: Command = {
  path: ["trace", "stats"],
  summary: "requests, tools, failures, tokens, latency and cost over traces",
  help: HELP,
  run,
};
