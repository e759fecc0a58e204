/**
 * Connecting every configured MCP server: up to
 * {@linkcode CONNECTS_AT_ONCE} in parallel, each within its own
 * `connectTimeoutMs` (counted from its own start). A server that fails is
 * reported (one warning line, and a `failed` result for the
 * `mcp_connect_end` record) and left out; the others are used.
 *
 * @module
 */
import type { McpConnectResult } from "../protocol/mod.ts";
import type { McpServerConfig } from "../state/mod.ts";
import { type ConnectContext, connectServer, type McpConnection } from "./connect.ts";

/**
 * Servers started and listed at the same time: the usual one to three
 * connect together; more wait for a place, so that many sandboxes and
 * `tools/list` answers are not all under way at once (each large answer
 * also waits for the answer gate, lib/mcp/answer_gate.ts).
 */
export const CONNECTS_AT_ONCE = 3;

/** `work` on each of `items`, at most `limit` at a time; the results in the items' order. */
async function inTurns<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const at = next++;
      out[at] = await work(items[at]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** The outcome of {@linkcode connectAll}. */
export interface ConnectAllResult {
  /** Live connections, in configuration order. */
  connections: McpConnection[];
  /** One result per server, in configuration order (the `mcp_connect_end` payload). */
  results: McpConnectResult[];
}

/** How long to wait for some servers, and what becomes of an attempt that outlasts the wait. */
export interface ConnectGrace {
  /** Longest wait for server `name` (absent: its whole `connectTimeoutMs`). */
  ms: ReadonlyMap<string, number>;
  /**
   * Told of an attempt still under way when its wait ended: the server is
   * `failed` for this connection, and the caller owns the attempt (closing
   * what it brings).
   */
  late(server: McpServerConfig, attempt: Promise<McpConnection>): void;
}

/** Settles with undefined after `ms`, or with the attempt. */
function waitAtMost(
  attempt: Promise<McpConnection>,
  ms: number,
): Promise<McpConnection | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const gone = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([attempt, gone]).finally(() => clearTimeout(timer));
}

/**
 * Connect `servers`, {@linkcode CONNECTS_AT_ONCE} at a time. Never rejects: a failure becomes a
 * `failed` result plus a `[penguin] MCP server <name> unavailable: …`
 * warning through `warn`. With `grace`, a server named there is waited for
 * at most that long; then it is `failed` and its attempt goes on in the
 * background (see {@linkcode ConnectGrace}).
 */
export async function connectAll(
  servers: readonly McpServerConfig[],
  ctx: ConnectContext,
  warn: (line: string) => void,
  grace?: ConnectGrace,
): Promise<ConnectAllResult> {
  const settled = await inTurns(servers, CONNECTS_AT_ONCE, async (server) => {
    const started = performance.now();
    try {
      const attempt = connectServer(server, ctx);
      const ms = grace?.ms.get(server.name);
      const conn = ms === undefined ? await attempt : await waitAtMost(attempt, ms);
      if (conn === undefined) {
        grace!.late(server, attempt);
        throw new Error(
          `not connected within ${ms} ms (it failed in the previous run too; still trying in the background, for the next run)`,
        );
      }
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
  });
  return {
    connections: settled.flatMap((s) => s.conn ? [s.conn] : []),
    results: settled.map((s) => s.result),
  };
}

/** Close every connection (stdio servers are stopped); never rejects. */
export async function closeAll(connections: readonly McpConnection[]): Promise<void> {
  await Promise.all(connections.map((c) => c.close().catch(() => {})));
}
