/**
 * Connecting every configured MCP server at once: each in parallel, each
 * within its own `connectTimeoutMs`. A server that fails is reported (one
 * warning line, and a `failed` result for the `mcp_connect_end` record) and
 * left out; the others are used.
 *
 * @module
 */
import type { McpConnectResult } from "../protocol/mod.ts";
import type { McpServerConfig } from "../state/mod.ts";
import { type ConnectContext, connectServer, type McpConnection } from "./connect.ts";

/** The outcome of {@linkcode connectAll}. */
export interface ConnectAllResult {
  /** Live connections, in configuration order. */
  connections: McpConnection[];
  /** One result per server, in configuration order (the `mcp_connect_end` payload). */
  results: McpConnectResult[];
}

/**
 * Connect `servers` in parallel. Never rejects: a failure becomes a
 * `failed` result plus a `[penguin] MCP server <name> unavailable: …`
 * warning through `warn`.
 */
export async function connectAll(
  servers: readonly McpServerConfig[],
  ctx: ConnectContext,
  warn: (line: string) => void,
): Promise<ConnectAllResult> {
  const settled = await Promise.all(servers.map(async (server) => {
    const started = performance.now();
    try {
      const conn = await connectServer(server, ctx);
      const result: McpConnectResult = {
        server: server.name,
        transport: server.transport,
        status: "completed",
        duration_ms: Math.round(performance.now() - started),
        tools: conn.tools.map((t) => t.name),
      };
      return { conn, result };
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      const aborted = ctx.signal?.aborted === true;
      if (!aborted) warn(`[penguin] MCP server ${server.name} unavailable: ${error}; skipped.`);
      const result: McpConnectResult = {
        server: server.name,
        transport: server.transport,
        status: aborted ? "aborted" : "failed",
        duration_ms: Math.round(performance.now() - started),
        error,
      };
      return { conn: undefined, result };
    }
  }));
  return {
    connections: settled.flatMap((s) => s.conn ? [s.conn] : []),
    results: settled.map((s) => s.result),
  };
}

/** Close every connection (stdio servers are stopped); never rejects. */
export async function closeAll(connections: readonly McpConnection[]): Promise<void> {
  await Promise.all(connections.map((c) => c.close().catch(() => {})));
}
