/**
 * Every CLI command, in the order `penguin --help` lists them.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { traceCommands } from "./commands/trace.ts";
import { configCommands } from "./commands/config.ts";
import { sandboxCommands } from "./commands/sandbox.ts";
import { modelsCommands } from "./commands/models.ts";
import { modelsTestCommand } from "./commands/models_probe.ts";
import { runCommand } from "./commands/run.ts";
import { chatCommand } from "./commands/chat.ts";
import { sessionsCommands } from "./commands/sessions.ts";

/** All commands. */
export const COMMANDS: Command[] = [
  runCommand,
  chatCommand,
  ...sessionsCommands,
  ...traceCommands,
  ...configCommands,
  ...sandboxCommands,
  ...modelsCommands,
  modelsTestCommand,
];
