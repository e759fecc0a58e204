/**
 * Bounds on what MCP servers may offer the model: every tool definition is
 * kept for the session and goes into every model request, so a server that
 * lists thousands of tools, or a few huge ones, would cost memory and
 * context on each turn. Past a bound, tools are skipped, reported in one
 * line per server and reason; none of them is ever adapted or sent.
 *
 * @module
 */
import type { Tool as ListedTool } from "@modelcontextprotocol/sdk/types.js";

/**
 * At most this many tools are kept from one server (the first ones it lists;
 * listing stops there). Real servers list tens (GitHub's, with every
 * toolset, about a hundred).
 */
export const MAX_TOOLS_PER_SERVER = 256;

/** Longest description (or title) of one tool, in characters. */
export const MAX_TOOL_DESCRIPTION_CHARS = 16 * 1024;

/** Longest input schema of one tool, in characters of its JSON. */
export const MAX_TOOL_SCHEMA_CHARS = 64 * 1024;

/**
 * Longest output schema of one tool, in characters of its JSON. penguin
 * never compiles it (lib/mcp/schema_validator.ts), but keeps it with the
 * tool for the session.
 */
export const MAX_TOOL_OUTPUT_SCHEMA_CHARS = 64 * 1024;

/**
 * Most characters of all MCP tool definitions together (name, description,
 * input and output schema JSON of each), over every server of a session.
 */
export const MAX_MCP_DEFINITIONS_CHARS = 1024 * 1024;

/** Characters of `n` for messages: `16 Ki`, `1 Mi`. */
function chars(n: number): string {
  return n >= 1024 * 1024 ? `${n / 1024 / 1024} Mi` : `${n / 1024} Ki`;
}

/** The size in characters of a schema as JSON (0: none). */
function schemaChars(schema: unknown): number {
  return schema === undefined ? 0 : JSON.stringify(schema).length;
}

/**
 * Why `tool` alone is too large to offer, or else its size in characters
 * (name, description or title, input and output schema JSON).
 */
export function toolSize(tool: ListedTool): { problem: string } | { size: number } {
  const description = tool.description ?? tool.title ?? "";
  if (typeof description !== "string" || description.length > MAX_TOOL_DESCRIPTION_CHARS) {
    return {
      problem: `its description is longer than ${chars(MAX_TOOL_DESCRIPTION_CHARS)} characters`,
    };
  }
  const schema = schemaChars(tool.inputSchema);
  if (schema > MAX_TOOL_SCHEMA_CHARS) {
    return {
      problem: `its input schema is longer than ${chars(MAX_TOOL_SCHEMA_CHARS)} characters of JSON`,
    };
  }
  const output = schemaChars(tool.outputSchema);
  if (output > MAX_TOOL_OUTPUT_SCHEMA_CHARS) {
    return {
      problem: `its output schema is longer than ${
        chars(MAX_TOOL_OUTPUT_SCHEMA_CHARS)
      } characters of JSON`,
    };
  }
  return { size: tool.name.length + description.length + schema + output };
}

/** The line for `count` tools of `server` beyond the per-server bound. */
export function beyondCountLine(server: string, count: number, listed: number): string {
  return `[penguin] MCP server ${server}: ${count} of ${listed} tools skipped: penguin keeps ` +
    `the first ${MAX_TOOLS_PER_SERVER} tools of a server`;
}

/** The line for tools of `server` skipped for `why` (at most 5 names shown). */
export function skippedLine(server: string, names: readonly string[], why: string): string {
  const shown = names.slice(0, 5).map((n) => JSON.stringify(n.slice(0, 64))).join(", ");
  const more = names.length > 5 ? `, and ${names.length - 5} more` : "";
  const what = names.length === 1 ? `tool ${shown}` : `${names.length} tools (${shown}${more})`;
  return `[penguin] MCP server ${server}: ${what} skipped: ${why}`;
}

/** Why tools are skipped once the session's total is reached. */
export const TOTAL_REASON = `the MCP tool definitions of the session would pass ${
  chars(MAX_MCP_DEFINITIONS_CHARS)
} characters (penguin's limit)`;
