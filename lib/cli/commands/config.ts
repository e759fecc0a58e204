/**
 * `penguin config …` commands.
 *
 * @module
 */
import type { Command } from "../command.ts";

/** The config commands. */
export const configCommands: Command[] = [];
