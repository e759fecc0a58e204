/**
 * The agent's MCP servers as one lazy tool source: opening it, at the
 * session's first run, connects every server in parallel (stdio servers start confined by the
 * session's sandbox, with their stderr logged under the session
 * scratchpad), offers their tools, and reports the connection as the
 * `mcp_connect_begin` / `mcp_connect_end` pair for the trace. Closing it
 * disconnects every server and stops the stdio ones.
 *
 * @module
 */
import { join } from "node:path";
import type { EventPayload } from "../protocol/mod.ts";
import type { McpServerConfig } from "../state/mod.ts";
import type { ToolSource } from "../tools/mod.ts";
import { mcpTools } from "./tools.ts";

/** Where a session's MCP server logs go, under its scratchpad. */
export const MCP_LOG_DIR = "mcp";

/** A tool source for `servers` (none: a source with no tools and no records). */
export function mcpToolSource(servers: readonly McpServerConfig[]): ToolSource {
  return {
    name: "mcp",
    // Servers start at the session's first run, as in PenguinHarness: a chat that never
    // sends a message starts none.
    lazy: true,
    async open(ctx) {
      if (servers.length === 0) return { tools: [] };
      // The MCP SDK is loaded only when a session has servers to connect.
      const { closeAll, connectAll } = await import("./connect_all.ts");
      const { connections, results } = await connectAll(servers, {
        policy: ctx.sandbox,
        logDir: join(ctx.scratchpad, MCP_LOG_DIR),
      }, ctx.warn);
      const records: EventPayload[] = [
        { type: "mcp_connect_begin", servers: servers.map((s) => s.name) },
        {
          type: "mcp_connect_end",
          status: results.every((r) => r.status === "completed") ? "completed" : "failed",
          results,
        },
      ];
      return {
        tools: mcpTools(connections, ctx.warn),
        close: () => closeAll(connections),
        records,
      };
    },
  };
}
