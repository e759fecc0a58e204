/**
 * `penguin trace export`: one session as a self-contained HTML page,
 * Markdown, or the normalized conversation as JSON, secrets redacted.
 *
 * @module
 */
import { familyRoot } from "../../inspect/family.ts";
import { loadOutline, writeExport } from "../../inspect/export_stream.ts";
import { writeOtlp } from "../../telemetry/export_file.ts";
import { MIN_SLICE_CHARS, textSlices } from "../../inspect/_pieces.ts";
import { currentSecretsMask } from "./_display_mask.ts";
import { errorMessage, PenguinError } from "../../protocol/errors.ts";
import {
  keepProblem,
  problemsLeftOut,
  skippedLinesNotice,
  type TraceProblem,
} from "../../trace/reader.ts";
import { bool, type Flag, flagHelp, parseDeclared, str } from "../args.ts";
import type { Command, CommandContext } from "../command.ts";
import { didYouMeanText } from "../suggest.ts";
import { safeText } from "../../display/terminal_text.ts";
import { openOutputFile } from "../_output_file.ts";
import { sessionsOf, TARGET_HELP, targetsOrLatest, untilPipeCloses } from "./trace_common.ts";

const FLAGS: readonly Flag<unknown>[] = [
  {
    name: "format",
    type: "string",
    value: "<f>",
    help: "html, md, json or otlp (default: from the -o name, else md)",
  },
  {
    name: "o",
    short: "o",
    type: "string",
    label: "-o <file>",
    help: "write to this file instead of stdout",
  },
  { name: "output", type: "string", hidden: true, help: "the same as -o" },
  { name: "no-redact", type: "boolean", help: "keep secret-shaped values as they are" },
  {
    name: "include-content",
    type: "boolean",
    help: "otlp: put prompts, answers and tool arguments and outputs on the spans",
  },
  {
    name: "no-children",
    type: "boolean",
    help: "leave out the subagent children (by default they are included)",
  },
];

const HELP =
  `Usage: penguin trace export [<target>] [--format html|md|json|otlp] [-o FILE] [--no-redact]
                            [--include-content] [--no-children]

Export one session (all its files, in order; without a target, the latest):
  html  one self-contained page (inline CSS and JS, no network access: a
        Content-Security-Policy forbids any) with the session facts, its family
        (the session it was forked from via the meta's lineage, forks of it,
        subagent children via subagent events), a per-request token and latency
        chart (inline SVG; bars link to their request), and the conversation
        with tool outputs and thinking in collapsed <details>
  md    Markdown for pasting into an issue (outputs and thinking in <details>)
  json  the normalized conversation: {"format": "penguin.conversation/1",
        "session", "family", "requests", "items", "skipped_lines"}
  otlp  an OpenTelemetry OTLP/JSON ExportTraceServiceRequest (what a collector's
        /v1/traces accepts): one trace per session, with the GenAI semantic
        conventions' gen_ai.* attributes: a root span for the session, a span
        per task (invoke_agent), model request (chat), tool call (execute_tool)
        and compaction; subagent sessions as children of the spawning tool
        call. Ids derive from the session, so the same trace exports the same
        spans. Message contents stay out unless --include-content

Written to a terminal, the export is shown without escape sequences and
control characters (other than newline and tab); written to a file (-o) or
a pipe, it is exact.

-o picks the format from the file name when --format is absent: .html, .md,
.json, .otlp.json (otlp).

Secret-shaped values are replaced by a visible marker [redacted:<kind>]: API
keys (sk-…, sk-ant-…, AIza…, ghp_…/github_pat_…, xox?-…, AKIA…/ASIA…), bearer
tokens, -----BEGIN … PRIVATE KEY----- blocks and passwords in URLs
(scheme://user:[redacted:url_password]@host). Redaction is pattern-based: it
cannot promise to catch every secret; review an export before sharing it.

Flags:
${flagHelp(FLAGS, 21)}

${TARGET_HELP}

A target holding one session and its subagent children (a directory of
their traces) exports that session, with the children inline.

Exit codes: 0 exported, 1 a target not found or unreadable, 2 usage error (also
when the target holds more than one session that is not such a family).
`;

const FORMATS = ["html", "md", "json", "otlp"] as const;
type Format = typeof FORMATS[number];

function formatOf(flag: string | undefined, out: string | undefined): Format {
  if (flag !== undefined) {
    if (!(FORMATS as readonly string[]).includes(flag)) {
      throw new PenguinError(
        "usage",
        `trace export: --format must be html, md, json or otlp, got ${JSON.stringify(flag)}${
          didYouMeanText(flag.toLowerCase(), FORMATS)
        }`,
      );
    }
    return flag as Format;
  }
  if (out?.toLowerCase().endsWith(".otlp.json")) return "otlp";
  const ext = out?.toLowerCase().match(/\.(html?|md|markdown|json)$/)?.[1];
  if (ext === "html" || ext === "htm") return "html";
  if (ext === "json") return "json";
  return "md";
}

async function run(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("trace export", args, FLAGS);
  if (bool(p, "help")) {
    ctx.io.out(HELP);
    return 0;
  }
  const outFile = str(p, "o") ?? str(p, "output");
  const format = formatOf(str(p, "format"), outFile);
  let sessions = await sessionsOf("trace export", targetsOrLatest(p.positionals), ctx);
  // A parent with its subagent children (a directory of their traces) is one export: the
  // parent, its children inline.
  const root = sessions.length > 1 ? await familyRoot(sessions) : null;
  if (root !== null) sessions = [root];
  if (sessions.length > 1) {
    throw new PenguinError(
      "usage",
      `trace export: the target holds ${sessions.length} sessions (${
        sessions.slice(0, 3).map((s) => s.key).join(", ")
      }${sessions.length > 3 ? ", …" : ""}); give one session (a trace file or session id)`,
    );
  }
  const problems: TraceProblem[] = [];
  const files = sessions[0]!.files.map((f) => f.path);
  const mask = await currentSecretsMask("trace export", files, ctx);
  if (format === "otlp") {
    // Written as the spans finish: the document is never held whole.
    const code = await emitStream(
      ctx,
      outFile,
      sessions[0]!.key,
      format,
      (write) =>
        writeOtlp(sessions[0]!, {
          onProblem: keepProblem(problems),
          children: !bool(p, "no-children"),
          redact: !bool(p, "no-redact"),
          includeContent: bool(p, "include-content"),
          mask,
        }, write),
    );
    noticeSkipped(ctx, sessions[0]!.files, problems);
    return code;
  }
  // Read twice, never whole: the outline (facts, family, requests), then the items as written.
  const outline = await loadOutline(sessions[0]!, {
    onProblem: keepProblem(problems),
    children: !bool(p, "no-children"),
    mask,
  });
  noticeSkipped(ctx, sessions[0]!.files, problems);
  if (outline.session.started === null && outline.skipped_lines > 0) {
    throw new PenguinError(
      "data",
      `trace export: nothing to export from ${
        sessions[0]!.files.map((f) => `"${f.path}"`).join(", ")
      }: all ${outline.skipped_lines} line(s) are malformed (is it a trace file? see penguin trace validate)`,
    );
  }
  const redact = !bool(p, "no-redact");
  return await emitStream(
    ctx,
    outFile,
    outline.session.session_id,
    format,
    (write) => writeExport(outline, format, { redact, mask }, write),
  );
}

/** Pieces are gathered up to this many characters before a write; a longer one goes in slices. */
const FLUSH_AT = 256 * 1024;

async function emitStream(
  ctx: CommandContext,
  outFile: string | undefined,
  sessionId: string,
  format: Format,
  produce: (write: (text: string) => Promise<void>) => Promise<void>,
): Promise<number> {
  let buf = "";
  const batched = (sink: (text: string) => Promise<void>) => ({
    write: async (text: string) => {
      if (text.length >= MIN_SLICE_CHARS) {
        // Passed on, never kept: it may be a slice of a long text, a view of all of it. Nor
        // joined to what waits, or encoded whole when long: a copy of tens of MB either way.
        const b = buf;
        buf = "";
        if (b !== "") await sink(b);
        for (const slice of textSlices(text, FLUSH_AT)) await sink(slice);
        return;
      }
      buf += text;
      if (buf.length < FLUSH_AT) return;
      const b = buf;
      buf = "";
      await sink(b);
    },
    flush: async () => {
      const b = buf;
      buf = "";
      if (b !== "") await sink(b);
    },
  });
  if (outFile !== undefined) {
    let file;
    try {
      file = await openOutputFile(outFile);
      const out = batched(file.write);
      await produce(out.write);
      await out.flush();
      await file.commit();
    } catch (err) {
      await file?.abort();
      if (err instanceof PenguinError) throw err;
      throw new PenguinError("runtime", `Cannot write "${outFile}": ${errorMessage(err)}`, {
        cause: err,
      });
    }
    ctx.io.err(`exported ${sessionId} (${format}) to ${outFile}\n`);
    return 0;
  }
  // A trace holds what a hostile model wrote: on a terminal its escape sequences (a clipboard
  // write, a window title, cursor moves) would act; a file or a pipe gets the bytes as they are.
  const out = batched((text) => {
    ctx.io.out(ctx.io.isTty ? safeText(text) : text);
    return Promise.resolve();
  });
  return await untilPipeCloses(async () => {
    await produce(out.write);
    await out.flush();
    return 0;
  });
}

function noticeSkipped(
  ctx: CommandContext,
  files: readonly { path: string }[],
  problems: TraceProblem[],
): void {
  for (const f of files) {
    const notice = skippedLinesNotice(
      f.path,
      problems.filter((pr) => pr.file === f.path),
      problemsLeftOut(problems, f.path),
    );
    if (notice) ctx.io.err(notice + "\n");
  }
}

/** `penguin trace export`. */
export const traceExportCommand: Command = {
  path: ["trace", "export"],
  summary: "export a session as HTML, Markdown, JSON or OTLP spans (secrets redacted)",
  help: HELP,
  run,
};
