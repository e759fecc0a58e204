/**
 * The agent's MCP servers as one lazy tool source: opening it, at the
 * session's first run, connects every server in parallel (stdio servers start confined by the
 * session's sandbox, with their stderr logged under the data root, where the
 * model's commands cannot read it), offers their tools, and reports the
 * connection as the `mcp_connect_begin` / `mcp_connect_end` pair for the
 * trace. Closing it disconnects every server and stops the stdio ones.
 *
 * A server's `env` and header values are secrets: a connection error or a
 * warning that quotes one, and anything the server lists about its tools
 * (names, titles, descriptions, input schemas), is masked before it reaches
 * the model, the trace or the terminal (see lib/mcp/secrets.ts).
 *
 * @module
 */
import type { McpServerConfig } from "../state/mod.ts";
import type { ToolSource } from "../tools/source.ts";
import type { McpSourceOptions } from "./_source_open.ts";

export type { McpSourceOptions } from "./_source_open.ts";

/** A tool source for `servers` (none: a source with no tools and no records). */
export function mcpToolSource(
  servers: readonly McpServerConfig[],
  opts: McpSourceOptions = {},
): ToolSource {
  return {
    name: "mcp",
    // Servers start at the session's first run, as in PenguinHarness: a chat that never
    // sends a message starts none.
    lazy: true,
    async open(ctx) {
      if (servers.length === 0) return { tools: [] };
      // The connection's code (and, through it, the MCP SDK) is loaded only for servers.
      return await (await import("./_source_open.ts")).openMcpServers(servers, opts, ctx);
    },
  };
}
