/**
 * Help texts: the command list, group listings and per-command help.
 *
 * @module
 */
import { VERSION } from "../version.ts";
import type { Command } from "./command.ts";
import { allCommands, commandsFor } from "./registry.ts";

const GLOBAL_FLAGS = `Global flags:
  --root <dir>     data root (default: $PENGUIN_HOME, else ~/.penguin/data)
  -h, --help       show help
  -v, --version    show the version (before a command: penguin --version)
`;

function listing(commands: Command[]): string {
  const width = Math.max(...commands.map((c) => c.path.join(" ").length));
  return commands.map((c) => `  ${c.path.join(" ").padEnd(width)}  ${c.summary}`).join("\n") + "\n";
}

/** `penguin --help`. */
export async function mainHelp(): Promise<string> {
  const commands = await allCommands();
  return `penguin ${VERSION}: an LLM agent harness for sandboxed one-off tasks and offline trace inspection

Usage: penguin <command> [flags]

Commands:
${listing(commands)}
${GLOBAL_FLAGS}
Run "penguin help <command>" for a command's flags.
`;
}

/** Help for a group of commands (`penguin config`), or undefined when no command starts with `words`. */
export async function groupHelp(words: string[]): Promise<string | undefined> {
  if (words.length === 0) return undefined;
  const members = (await commandsFor(words[0])).filter((c) =>
    words.every((w, i) => c.path[i] === w) && c.path.length > words.length
  );
  if (members.length === 0) return undefined;
  const group = words.join(" ");
  return `Usage: penguin ${group} <command> [flags]\n\nCommands:\n${
    listing(members)
  }\n${GLOBAL_FLAGS}\nRun "penguin help ${group} <command>" for a command's flags.\n`;
}

/** Help for one command. */
export function commandHelp(command: Command): string {
  const text = command.help.endsWith("\n") ? command.help : command.help + "\n";
  return `${text}\n${GLOBAL_FLAGS}`;
}
