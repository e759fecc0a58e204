/**
 * `penguin trace diff`: where two sessions diverge.
 *
 * @module
 */
import { basename } from "node:path";
import { type DiffReport, diffSessions, type DiffSide } from "../../inspect/diff.ts";
import { formatTokens } from "../../display/numbers.ts";
import { makeStyle, type Style } from "../../display/palette.ts";
import { safeText } from "../../display/terminal_text.ts";
import { resolveTarget } from "../../inspect/targets.ts";
import { PenguinError } from "../../protocol/errors.ts";
import { bool, type Flag, flagHelp, flagValue, parseDeclared, positiveInteger } from "../args.ts";
import type { Command, CommandContext } from "../command.ts";
import { SESSION_TARGET_HELP, untilPipeCloses } from "./trace_common.ts";
import { currentSecretsMaskValue } from "./_display_mask.ts";

const LIMIT: Flag<number> = {
  name: "limit",
  type: "string",
  value: "N",
  help: "at most N entries per side (default 200)",
  parse: positiveInteger,
};

const FLAGS: readonly Flag<unknown>[] = [
  {
    name: "json",
    type: "boolean",
    help: 'one JSON object: {"a", "b", "common_prefix", "relation"}; each\n' +
      "side has session_id, model, files, messages, diverged_at\n" +
      "{file, line}, after {messages, requests, tool_calls, tokens}\n" +
      "and entries [{index, kind, summary, file, line, time}]",
  },
  LIMIT,
];

const HELP = `Usage: penguin trace diff [--json] [--limit N] <a> <b>

Show where two sessions diverge, e.g. a fork and the session it was forked
from. The complete model messages (user and assistant text, thinking, tool
calls and outputs; not events, not timestamps) of both are compared in order:
the common prefix length is printed, then, for each side in turn, what it did
after the prefix — one line per model message, with its position, and the
number of requests, tool calls and tokens that followed.

Each of <a> and <b> is one session.
${SESSION_TARGET_HELP}

Flags:
${flagHelp(FLAGS, 16)}

Exit codes: 0 the sessions are identical in their model messages, 1 they
differ (like diff(1)) or a target was not found, 2 usage error.
`;

async function one(target: string, ctx: CommandContext) {
  const sessions = await resolveTarget(target, { root: ctx.root });
  if (sessions.length !== 1) {
    throw new PenguinError(
      "usage",
      `trace diff: "${target}" holds ${sessions.length} sessions; give one session id or file`,
    );
  }
  return sessions[0]!;
}

function sideText(name: string, s: DiffSide, st: Style): string {
  const lines: string[] = [];
  const a = s.after;
  lines.push(
    st.bold(
      `── only in ${name}: ${a.messages} model message(s) · ${a.requests} request(s) · ${a.tool_calls} tool call(s) · tokens ${
        formatTokens(a.tokens)
      } ──`,
    ),
  );
  for (const e of s.entries) lines.push(`  [${e.index}] ${safeText(e.summary)}`);
  if (a.messages > s.entries.length) {
    lines.push(st.dim(`  … (+${a.messages - s.entries.length} more; raise --limit)`));
  }
  return lines.join("\n") + "\n";
}

/** The text rendering of a diff. */
export function renderDiff(r: DiffReport, st: Style): string {
  const head = (name: string, s: DiffSide) =>
    `${name}: ${s.session_id} · ${
      s.model ?? "?"
    } · ${s.files.length} file(s) · ${s.messages} model message(s)`;
  let out = `${head("a", r.a)}\n${head("b", r.b)}\n`;
  if (r.relation) out += `${r.relation}\n`;
  out += `common prefix: ${r.common_prefix} model message(s)\n`;
  if (r.a.after.messages === 0 && r.b.after.messages === 0) {
    return out + "no divergence: the model messages are identical\n";
  }
  const at = (s: DiffSide) =>
    s.diverged_at ? `${basename(s.diverged_at.file)}:${s.diverged_at.line}` : "(ends there)";
  out += `diverged at: a ${at(r.a)} · b ${at(r.b)}\n\n`;
  out += sideText("a", r.a, st) + "\n" + sideText("b", r.b, st);
  return out;
}

async function run(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("trace diff", args, FLAGS, 2);
  if (bool(p, "help")) {
    ctx.io.out(HELP);
    return 0;
  }
  if (p.positionals.length !== 2) {
    throw new PenguinError("usage", "trace diff: give two sessions (trace files or session ids)");
  }
  const limit = flagValue(p, LIMIT) ?? 200;
  const a = await one(p.positionals[0]!, ctx);
  const b = await one(p.positionals[1]!, ctx);
  // Compared as recorded; shown, as every trace view, with the current secrets masked.
  const report = await currentSecretsMaskValue(
    "trace diff",
    await diffSessions(a, b, limit),
    [...a.files, ...b.files].map((f) => f.path),
    ctx,
  );
  const same = report.a.after.messages === 0 && report.b.after.messages === 0;
  return await untilPipeCloses(() => {
    ctx.io.out(
      bool(p, "json")
        ? JSON.stringify(report, null, 2) + "\n"
        : renderDiff(report, makeStyle(ctx.io.color)),
    );
    return Promise.resolve(same ? 0 : 1);
  });
}

/** `penguin trace diff`. */
export const traceDiffCommand: Command = {
  path: ["trace", "diff"],
  summary: "show where two sessions (e.g. a fork and its parent) diverge",
  help: HELP,
  run,
};
