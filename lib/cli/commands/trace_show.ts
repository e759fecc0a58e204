/**
 * `penguin trace show`: a session's conversation rendered for a terminal.
 *
 * @module
 */
import { openPager } from "../../sandbox/pager.ts";
import { makeStyle } from "../../display/palette.ts";
import { showSessions } from "../../inspect/show.ts";
import { currentSecretsMask } from "./_display_mask.ts";
import { bool, type Flag, flagHelp, flagValue, parseDeclared, positiveInteger } from "../args.ts";
import type { Command, CommandContext } from "../command.ts";
import { FULL_ALIAS, VERBOSE_OUTPUT, verboseOutput } from "./_trace_flags.ts";
import { sessionsOf, TARGET_HELP, targetsOrLatest, untilPipeCloses } from "./trace_common.ts";

const TURN: Flag<number> = {
  name: "turn",
  type: "string",
  value: "N",
  help: "start at request N (its input included); the header is kept",
  parse: positiveInteger,
};

const FLAGS: readonly Flag<unknown>[] = [
  VERBOSE_OUTPUT,
  FULL_ALIAS,
  TURN,
  {
    name: "children",
    type: "boolean",
    help: "render subagent children inline, indented (their traces are\n" +
      "looked up next to the parent's: the same traces directory,\n" +
      "the other agents' traces directories, or the same directory)",
  },
  {
    name: "json",
    type: "boolean",
    help: "print the raw records (one JSON envelope per line) instead",
  },
];

const HELP = `Usage: penguin trace show [--verbose] [--turn N] [--children] [--json] [<target>...]

Render a session's conversation: user text ("> "), assistant text, thinking
(dimmed), tool calls with their arguments, tool outputs collapsed to the first
4 and last 4 lines around "… N more lines", approvals, aborts, failed requests
and retries with their reason, compactions, and subagent children as
references, with the labels and number formats of "penguin run". Each request
is framed by "── request N ──" lines; the closing line gives its latency and
tokens. A file is streamed: output starts at once, and piping into a pager or
head stops the read. One text of a record shows at most 2000 lines (8 Mi
characters), then "… N more lines not shown" (--json and "penguin trace
export" show it whole). Without a target, the latest session is shown.

Colour only when stdout is a terminal and NO_COLOR is unset. At a terminal the
output goes through your pager: $PAGER, else "less -FRX" (which exits at once
when everything fits on one screen); PAGER=cat or an empty PAGER turns it off.

Flags:
${flagHelp(FLAGS, 16)}

${TARGET_HELP}

Exit codes: 0 shown, 1 a target not found or unreadable, 2 usage error.
`;

async function run(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("trace show", args, FLAGS);
  if (bool(p, "help")) {
    ctx.io.out(HELP);
    return 0;
  }
  const fromRequest = flagValue(p, TURN);
  const sessions = await sessionsOf("trace show", targetsOrLatest(p.positionals), ctx);
  const json = bool(p, "json");
  const files = sessions.flatMap((s) => s.files.map((f) => f.path));
  const mask = await currentSecretsMask("trace show", files, ctx);
  // A person at a terminal gets the output in their pager ($PAGER, else less -FRX).
  const pager = !json && ctx.io.isTty && Deno.stdin.isTerminal() ? await openPager() : null;
  try {
    return await untilPipeCloses(async () => {
      await showSessions(sessions, {
        style: makeStyle(ctx.io.color),
        full: verboseOutput(p),
        json,
        fromRequest,
        children: bool(p, "children"),
        out: pager ? pager.write : ctx.io.out,
        err: ctx.io.err,
        mask,
      });
      return 0;
    });
  } finally {
    await pager?.close();
  }
}

/** `penguin trace show`. */
export const traceShowCommand: Command = {
  path: ["trace", "show"],
  summary: "render a session's conversation for the terminal",
  help: HELP,
  run,
};
