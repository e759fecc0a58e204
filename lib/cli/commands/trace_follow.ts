/**
 * `penguin trace follow`: print a live session's records as they land.
 *
 * @module
 */
import { basename } from "node:path";
import { followTrace } from "../../inspect/follow.ts";
import { makeStyle } from "../../display/palette.ts";
import { resolveTarget } from "../../inspect/targets.ts";
import { PenguinError } from "../../protocol/errors.ts";
import { bool, type Flag, flagHelp, flagValue, parseDeclared, positiveInteger } from "../args.ts";
import type { Command, CommandContext } from "../command.ts";
import { FULL_ALIAS, VERBOSE_OUTPUT, verboseOutput } from "./_trace_flags.ts";
import { currentSecretsMask } from "./_display_mask.ts";
import { SESSION_TARGET_HELP, untilPipeCloses } from "./trace_common.ts";

const INTERVAL: Flag<number> = {
  name: "interval",
  type: "string",
  value: "MS",
  help: "poll interval in milliseconds (default 100)",
  parse: positiveInteger,
};

const FLAGS: readonly Flag<unknown>[] = [
  { name: "json", type: "boolean", help: "print each record's raw JSON line" },
  {
    name: "new",
    type: "boolean",
    help: "skip what the file already holds; print only new records",
  },
  VERBOSE_OUTPUT,
  FULL_ALIAS,
  INTERVAL,
];

const HELP =
  `Usage: penguin trace follow [--json] [--new] [--verbose] [--interval MS] <session|file>

Follow a session while another process writes it, like "tail -f": print the
records of its latest trace file (or of the given file), then each record as it
lands, rendered as by "penguin trace show" (or raw with --json). A record caught
half-written is printed once its newline arrives. When the session rotates to
its next file (<session>_<NNN+1>.jsonl appears next to the current one, after a
compaction), the rest of the current file is printed first, then the next file
is followed from its start. Stop with Ctrl-C (exit 0).

${SESSION_TARGET_HELP}
Follow starts at the latest file of a session.

Flags:
${flagHelp(FLAGS, 18)}

Exit codes: 0 stopped with Ctrl-C, 1 target not found, 2 usage error.
`;

async function run(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("trace follow", args, FLAGS, 1);
  if (bool(p, "help")) {
    ctx.io.out(HELP);
    return 0;
  }
  const target = p.positionals[0];
  if (target === undefined) {
    throw new PenguinError("usage", "trace follow: give a session id or a trace file");
  }
  const interval = flagValue(p, INTERVAL) ?? 100;
  const sessions = await resolveTarget(target, { root: ctx.root });
  if (sessions.length !== 1) {
    throw new PenguinError(
      "usage",
      `trace follow: "${target}" holds ${sessions.length} sessions; give one session id or file`,
    );
  }
  const files = sessions[0]!.files;
  const path = files[files.length - 1]!.path;
  const mask = await currentSecretsMask("trace follow", files.map((f) => f.path), ctx);
  const ac = new AbortController();
  const stop = () => ac.abort();
  Deno.addSignalListener("SIGINT", stop);
  try {
    ctx.io.err(`following ${basename(path)} (Ctrl-C to stop)\n`);
    return await untilPipeCloses(async () => {
      await followTrace(path, {
        json: bool(p, "json"),
        style: makeStyle(ctx.io.color),
        full: verboseOutput(p),
        earlierFiles: files.slice(0, -1).map((f) => f.path),
        onlyNew: bool(p, "new"),
        intervalMs: Math.max(10, interval),
        signal: ac.signal,
        out: ctx.io.out,
        err: ctx.io.err,
        mask,
      });
      return 0;
    });
  } finally {
    Deno.removeSignalListener("SIGINT", stop);
  }
}

/** `penguin trace follow`. */
export const traceFollowCommand: Command = {
  path: ["trace", "follow"],
  summary: "print a live session's records as another process writes them",
  help: HELP,
  run,
};
