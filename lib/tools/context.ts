/**
 * What a session gives every tool call: the union of the narrow contexts
 * the tools declare (each tool reads only its own part).
 *
 * @module
 */
import type { CommandToolContext } from "./command_context.ts";

/** The full context of a tool call in a session. Paths are real (symlink-free) absolute paths. */
export type ToolContext = CommandToolContext;
