/**
 * The `penguin` command line: global flags, dispatch, help and error printing.
 * The only module that decides exit codes.
 *
 * @module
 */
import { VERSION } from "../version.ts";
import { PenguinError } from "../protocol/errors.ts";
import { escapeControls } from "../inspect/terminal_text.ts";
import type { Command, CommandContext, Io } from "./command.ts";
import { commandsFor } from "./registry.ts";
import { commandHelp, groupHelp, mainHelp } from "./help.ts";
import { TOOL_HOST_COMMAND } from "../tools/host/self.ts";

/**
 * An Io over the process's stdout and stderr. Once stdout's reader has gone
 * (`penguin … | head`), every write to it throws Deno.errors.BrokenPipe and
 * `stdoutClosed()` is true: {@linkcode main} then ends the command quietly
 * with exit code 0.
 */
export function processIo(): Io {
  const enc = new TextEncoder();
  const isTty = Deno.stdout.isTerminal();
  const noColor = Deno.env.get("NO_COLOR") !== undefined && Deno.env.get("NO_COLOR") !== "";
  let closed = false;
  const writeAll = (f: typeof Deno.stdout, text: string) => {
    const data = enc.encode(text);
    let off = 0;
    while (off < data.length) off += f.writeSync(data.subarray(off));
  };
  return {
    out: (t) => {
      if (closed) throw new Deno.errors.BrokenPipe("stdout is closed");
      try {
        writeAll(Deno.stdout, t);
      } catch (err) {
        if (err instanceof Deno.errors.BrokenPipe) closed = true;
        throw err;
      }
    },
    err: (t) => {
      try {
        writeAll(Deno.stderr, t);
      } catch (err) {
        if (!(err instanceof Deno.errors.BrokenPipe)) throw err;
      }
    },
    isTty,
    color: isTty && !noColor,
    stdoutClosed: () => closed,
  };
}

/** Split the global flags (`--root`, `--help`, `--version`) from the rest. */
function splitGlobals(
  argv: string[],
): { root?: string; help: boolean; version: boolean; rest: string[] } {
  const rest: string[] = [];
  let root: string | undefined;
  let help = false;
  let version = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      rest.push(...argv.slice(i));
      break;
    }
    if (a === "--root") {
      const v = argv[i + 1];
      if (v === undefined || v.startsWith("-")) {
        throw new PenguinError("usage", "--root needs a directory");
      }
      root = v;
      i++;
    } else if (a.startsWith("--root=")) {
      root = a.slice("--root=".length);
      if (!root) throw new PenguinError("usage", "--root needs a directory");
    } else if (a === "--help" || a === "-h") {
      help = true;
    } else if ((a === "--version" || a === "-v" || a === "-V") && rest.length === 0) {
      version = true;
    } else {
      rest.push(a);
    }
  }
  return { root, help, version, rest };
}

/** Find the longest command path that prefixes `words`. */
export async function findCommand(
  words: string[],
): Promise<{ command?: Command; consumed: number }> {
  let best: Command | undefined;
  let consumed = 0;
  for (const c of await commandsFor(words[0])) {
    if (
      c.path.length <= words.length && c.path.every((w, i) => words[i] === w) &&
      c.path.length > consumed
    ) {
      best = c;
      consumed = c.path.length;
    }
  }
  return { command: best, consumed };
}

function commandWords(rest: string[]): string[] {
  const words: string[] = [];
  for (const a of rest) {
    if (a.startsWith("-")) break;
    words.push(a);
  }
  return words;
}

async function dispatch(argv: string[], io: Io): Promise<number> {
  if (argv[0] === TOOL_HOST_COMMAND && argv.length === 1) {
    return await (await import("./commands/_tool_host.ts")).runToolHost();
  }
  const g = splitGlobals(argv);
  if (g.version) {
    io.out(`penguin ${VERSION}\n`);
    return 0;
  }
  const words = commandWords(g.rest);
  if (words[0] === "help") {
    const target = words.slice(1);
    if (target.length === 0) {
      io.out(await mainHelp());
      return 0;
    }
    return await printHelpFor(target, io);
  }
  if (g.rest.length === 0) {
    io.out(await mainHelp());
    return 0;
  }
  const { command, consumed } = await findCommand(words);
  if (!command) {
    const group = await groupHelp(words);
    if (group && (g.help || words.length === 1)) {
      io.out(group);
      return 0;
    }
    const shown = words.join(" ") || g.rest[0]!;
    throw new PenguinError(
      "usage",
      `unknown command "${shown}"; run "penguin --help" for the list`,
    );
  }
  if (g.help) {
    io.out(commandHelp(command));
    return 0;
  }
  const ctx: CommandContext = { io };
  if (g.root !== undefined) ctx.root = g.root;
  return await command.run(g.rest.slice(consumed), ctx);
}

async function printHelpFor(words: string[], io: Io): Promise<number> {
  const { command, consumed } = await findCommand(words);
  if (command && consumed === words.length) {
    io.out(commandHelp(command));
    return 0;
  }
  const group = await groupHelp(words);
  if (group) {
    io.out(group);
    return 0;
  }
  throw new PenguinError(
    "usage",
    `no help for "${words.join(" ")}": unknown command; run "penguin --help" for the list`,
  );
}

/**
 * Run the CLI with `argv` and resolve to the process exit code. User-facing
 * errors print as one line on stderr; `PENGUIN_DEBUG=1` adds the stack.
 */
export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (err) {
    // A reader that went away (`| head`) got all it wanted: not an error.
    if (io.stdoutClosed?.()) return 0;
    return reportError(err, io);
  }
}

/** An error message for the terminal: its lines, with control characters shown as `\xNN`. */
function shown(message: string): string {
  return message.split("\n").map(escapeControls).join("\n");
}

/** Print `err` for a user and return its exit code. */
export function reportError(err: unknown, io: Io): number {
  const debug = Deno.env.get("PENGUIN_DEBUG") === "1";
  if (err instanceof PenguinError) {
    io.err(`penguin: ${shown(err.message)}\n`);
    if (err.kind === "usage") io.err(`Run "penguin --help" for usage.\n`);
    if (debug && err.stack) io.err(`${err.stack}\n`);
    return err.exitCode;
  }
  const msg = err instanceof Error ? err.message : String(err);
  io.err(`penguin: internal error: ${shown(msg)}\n`);
  if (debug && err instanceof Error && err.stack) io.err(`${err.stack}\n`);
  else io.err("Set PENGUIN_DEBUG=1 to see the stack trace.\n");
  return 1;
}
