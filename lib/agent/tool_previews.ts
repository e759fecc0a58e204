/**
 * The previews of the built-in tools (subagent tools and describe_image
 * included), for the renderers of the CLI and of traces read offline. Each
 * tool owns its preview (its `defineTool({ preview })`); this module only
 * collects them from the tool lists. It imports the tool declarations
 * directly, never the tool set or the tools barrel: `trace show` and the
 * other offline views load it at startup, and a tool file loads what only
 * running a call needs (spawner, model clients, subagents) on first use.
 *
 * @module
 */
import type { ToolPreviewFn, ToolPreviews } from "../display/tool_preview.ts";
import { BUILTIN_TOOLS } from "../tools/builtin.ts";
import { describeImageTool } from "../tools/describe_image.ts";
import { SUBAGENT_TOOLS } from "./subagents/tools.ts";

const BUILTIN_PREVIEWS: ReadonlyMap<string, ToolPreviewFn> = new Map(
  [...BUILTIN_TOOLS, describeImageTool, ...SUBAGENT_TOOLS].flatMap((t) =>
    t.preview ? [[t.name, t.preview]] : []
  ),
);

/**
 * The previews of the built-in tools; other names (MCP tools, names from
 * PenguinHarness traces) show the generic form. A live session's
 * `toolPreview` also knows the tools of its other sources.
 */
export const builtinToolPreviews: ToolPreviews = (name: string): ToolPreviewFn | undefined =>
  BUILTIN_PREVIEWS.get(name);
