/**
 * The list of built-in tools of lib/tools, in the order offered to the
 * model: a new built-in tool is its own file (declared with `defineTool`)
 * plus one entry here. `builtin_table.ts` derives the factory table and the default
 * definitions from it; the offline views take the tools' previews from it
 * (`agent/tool_previews.ts`), so the tool files keep their top level light
 * and load what only running a call needs (spawner, model clients) on first
 * use.
 *
 * @module
 */
import type { ToolContext } from "./context.ts";
import type { DefinedTool } from "./define.ts";
import { editFileTool } from "./edit_file.ts";
import { execCommandTool } from "./exec_command.ts";
import { inputCommandTool } from "./input_command.ts";
import { killCommandTool } from "./kill_command.ts";
import { readFileTool } from "./read_file.ts";
import { readImageTool } from "./read_image.ts";
import { writeFileTool } from "./write_file.ts";

/** The built-in tools of lib/tools, in the order offered to the model. */
export const BUILTIN_TOOLS: readonly DefinedTool<ToolContext>[] = Object.freeze([
  readFileTool,
  editFileTool,
  writeFileTool,
  execCommandTool,
  inputCommandTool,
  killCommandTool,
  readImageTool,
]);
