/**
 * The `penguin` command line: global flags, dispatch, help and error printing.
 * The only module that decides exit codes.
 *
 * @module
 */
import { VERSION } from "../version.ts";
import { PenguinError } from "../protocol/errors.ts";
import { pairSafeSlices } from "../protocol/pair_safe_slices.ts";
import { escapeControls } from "../display/terminal_text.ts";
import type { Command, CommandContext, Io } from "./command.ts";
import { allCommands, commandsFor } from "./registry.ts";
import { didYouMeanText } from "./suggest.ts";
import { osFailure } from "./_os_error.ts";
import { resolveDataRoot } from "../state/root.ts";
import { commandHelp, groupHelp, mainHelp } from "./help.ts";
import { TOOL_HOST_COMMAND } from "../tools/host/self.ts";
import { escapeC1 } from "./json.ts";
import { takeSessionEndReport } from "../sandbox/session_end_report.ts";
import { releaseEndingHold } from "./_ending_hold.ts";

/** The most UTF-16 units of a text {@linkcode processIo} encodes at once. */
const WRITE_CHARS = 256 * 1024;

/**
 * An Io over the process's stdout and stderr. Once stdout's reader has gone
 * (`penguin … | head`), every write to it throws Deno.errors.BrokenPipe and
 * `stdoutClosed()` is true: {@linkcode main} then ends the command quietly
 * with exit code 0. On a terminal, DEL and the C1 controls are written as
 * `\u009b`-style escapes (see {@linkcode escapeC1}): whatever a command
 * prints, `--json` included, none reaches the terminal raw.
 */
export function processIo(): Io {
  const enc = new TextEncoder();
  const isTty = Deno.stdout.isTerminal();
  const errIsTty = Deno.stderr.isTerminal();
  const noColor = Deno.env.get("NO_COLOR") !== undefined && Deno.env.get("NO_COLOR") !== "";
  let closed = false;
  // Encoded a slice at a time into one array: a text of tens of MB (a record printed whole) is
  // not copied again whole as bytes.
  const bytes = new Uint8Array(WRITE_CHARS * 3);
  const writeAll = (f: typeof Deno.stdout, text: string) => {
    for (const slice of pairSafeSlices(text, WRITE_CHARS)) {
      const { written } = enc.encodeInto(slice, bytes);
      let off = 0;
      while (off < written) off += f.writeSync(bytes.subarray(off, written));
    }
  };
  return {
    out: (t) => {
      if (closed) throw new Deno.errors.BrokenPipe("stdout is closed");
      try {
        writeAll(Deno.stdout, isTty ? escapeC1(t) : t);
      } catch (err) {
        if (err instanceof Deno.errors.BrokenPipe) closed = true;
        throw err;
      }
    },
    err: (t) => {
      try {
        writeAll(Deno.stderr, errIsTty ? escapeC1(t) : t);
      } catch (err) {
        if (!(err instanceof Deno.errors.BrokenPipe)) throw err;
      }
    },
    isTty,
    errIsTty,
    color: isTty && !noColor,
    stdoutClosed: () => closed,
  };
}

/** Split the global flags (`--root`, `--help`, `--version`) from the rest. */
function splitGlobals(
  argv: string[],
): { root?: string | undefined; help: boolean; version: boolean; rest: string[] } {
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
): Promise<{ command?: Command | undefined; consumed: number }> {
  let best: Command | undefined;
  let consumed = 0;
  for (const c of await commandsFor(words[0], words[1])) {
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

/** The command words `penguin help …` should be pointed at when a usage error ends the run. */
interface HelpPointer {
  words: string[];
}

/**
 * Note the data root this command uses (see lib/sandbox/_data_roots.ts); never fails. Resolves
 * to what to do once the command has run: a root that did not exist yet is noted again then,
 * when the command has made it.
 */
async function noteDataRoot(root: string | undefined): Promise<() => Promise<void>> {
  let path: string;
  try {
    path = resolveDataRoot({ root, anyKind: true });
  } catch {
    return async () => {}; // no root to note: the command reports it when it needs one
  }
  const { rememberDataRoot } = await import("../sandbox/_data_roots.ts");
  const existed = await Deno.lstat(path).then(() => true, () => false);
  await rememberDataRoot(path);
  return existed ? async () => {} : () => rememberDataRoot(path);
}

async function dispatch(argv: string[], io: Io, pointer: HelpPointer): Promise<number> {
  if (argv[0] === TOOL_HOST_COMMAND && argv.length === 1) {
    return await (await import("./commands/_tool_host.ts")).runToolHost();
  }
  const g = splitGlobals(argv);
  if (g.version) {
    io.out(`penguin ${VERSION}\n`);
    return 0;
  }
  const words = commandWords(g.rest);
  const noteAgain = await noteDataRoot(g.root);
  try {
    return await dispatchCommand(g, words, io, pointer);
  } finally {
    await noteAgain();
  }
}

async function dispatchCommand(
  g: ReturnType<typeof splitGlobals>,
  words: string[],
  io: Io,
  pointer: HelpPointer,
): Promise<number> {
  if (words[0] === "help") {
    const target = words.slice(1);
    // `penguin help help` asks how help works: the command list says it.
    if (target.length === 0 || (target.length === 1 && target[0] === "help")) {
      io.out(await mainHelp());
      return 0;
    }
    return await printHelpFor(target, io, pointer);
  }
  if (g.rest.length === 0) {
    io.out(await mainHelp());
    return 0;
  }
  const { command, consumed } = await findCommand(words);
  if (!command) {
    const group = await groupHelp(words);
    // A group alone (`penguin config model`) prints its commands, as --help does.
    if (group && (g.help || g.rest.length === words.length)) {
      io.out(group);
      return 0;
    }
    throw await unknownCommand(words, g.rest, pointer);
  }
  if (g.help) {
    io.out(commandHelp(command));
    return 0;
  }
  pointer.words = command.path;
  const args = g.rest.slice(consumed);
  const { guardDataRoot } = await import("./_root_gate.ts");
  await guardDataRoot({ path: command.path, args, root: g.root, io });
  const ctx: CommandContext = { io };
  if (g.root !== undefined) ctx.root = g.root;
  return await command.run(args, ctx);
}

/** The longest leading part of `words` that names a group of commands, and its members. */
async function knownGroup(words: string[]): Promise<{ group: string[]; members: Command[] }> {
  for (let k = words.length; k >= 1; k--) {
    const group = words.slice(0, k);
    const members = (await commandsFor(group[0])).filter((c) =>
      c.path.length > k && group.every((w, i) => c.path[i] === w)
    );
    if (members.length > 0) return { group, members };
  }
  return { group: [], members: await allCommands() };
}

/** The usage error for command words that name no command, with a did-you-mean. */
async function unknownCommand(
  words: string[],
  rest: string[],
  pointer: HelpPointer,
): Promise<PenguinError> {
  const { group, members } = await knownGroup(words);
  pointer.words = group;
  const next = [...new Set(members.map((c) => c.path[group.length]!))];
  const word = words[group.length];
  if (word === undefined && group.length === 0) {
    const flag = rest[0] ?? "";
    const hint = didYouMeanText(flag.split("=")[0]!, ["--root", "--help", "--version"], (s) => s);
    return new PenguinError(
      "usage",
      `unknown option ${
        JSON.stringify(flag)
      } before a command (write penguin <command> [flags])${hint}`,
    );
  }
  if (word === undefined) {
    const what = group.join(" ");
    return new PenguinError(
      "usage",
      `"${what}" needs a command: ${next.join(", ")} (got ${JSON.stringify(rest[words.length])})`,
    );
  }
  const shown = [...group, word].join(" ");
  const hint = didYouMeanText(word, next, (s) => `"${[...group, s].join(" ")}"`);
  return new PenguinError("usage", `unknown command "${shown}"${hint}`);
}

async function printHelpFor(words: string[], io: Io, pointer: HelpPointer): Promise<number> {
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
  const err = await unknownCommand(words, words, pointer);
  const why = err.message.replace(/^unknown command "[^"]*"/, "unknown command");
  throw new PenguinError("usage", `no help for "${words.join(" ")}": ${why}`);
}

/**
 * Run the CLI with `argv` and resolve to the process exit code. User-facing
 * errors print as one line on stderr; `PENGUIN_DEBUG=1` adds the stack.
 */
export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  const pointer: HelpPointer = { words: [] };
  let code: number;
  try {
    code = await dispatch(argv, io, pointer);
  } catch (err) {
    // A reader that went away (`| head`) got all it wanted: not an error. What the session's end
    // left for the user is still told (on stderr: attack round 29 j06 found it dropped).
    code = io.stdoutClosed?.() ? 0 : reportError(err, io, pointer.words);
  }
  // What a session's end left for the user (an armed repository penguin could not disarm…).
  const ended = takeSessionEndReport();
  for (const line of ended.lines) io.err(`${shown(line)}\n`);
  // Held since the session started ending (`_ending_hold.ts`): its end is told now.
  releaseEndingHold();
  return ended.failed && code === 0 ? 1 : code;
}

/** An error message for the terminal: its lines, with control characters shown as `\xNN`. */
function shown(message: string): string {
  return message.split("\n").map(escapeControls).join("\n");
}

/**
 * Print `err` for a user and return its exit code. A usage error is followed
 * by a pointer to the help of `command` (the command or group it concerns;
 * none: the command list).
 */
export function reportError(err: unknown, io: Io, command: string[] = []): number {
  const debug = Deno.env.get("PENGUIN_DEBUG") === "1";
  if (!(err instanceof PenguinError)) err = osFailure(err) ?? err;
  if (err instanceof PenguinError) {
    io.err(`penguin: ${shown(err.message)}\n`);
    if (err.kind === "usage") {
      const help = ["penguin", "help", ...command].join(" ");
      io.err(`Run "${help}" for ${command.length === 0 ? "the list of commands" : "usage"}.\n`);
    }
    if (debug && err.stack) io.err(`${err.stack}\n`);
    return err.exitCode;
  }
  const msg = err instanceof Error ? err.message : String(err);
  io.err(`penguin: internal error: ${shown(msg)}\n`);
  if (debug && err instanceof Error && err.stack) io.err(`${err.stack}\n`);
  else io.err("Set PENGUIN_DEBUG=1 to see the stack trace.\n");
  return 1;
}
