/**
 * `penguin trace …` commands.
 *
 * @module
 */
import type { Command } from "../command.ts";

/** The trace commands. */
export const traceCommands: Command[] = [];
