/**
 * Connect `servers` (at least one) for one session, as
 * {@linkcode mcpToolSource}'s `open`: loaded with the first session that has
 * servers, so a session without any loads neither this nor the MCP SDK.
 *
 * @module
 */
import type { EventPayload } from "../protocol/mod.ts";
import type { McpServerConfig } from "../state/mod.ts";
import type { OpenedToolSource, ToolSourceContext } from "../tools/source.ts";
import { maskSecrets, type Secret } from "../tools/secret_mask.ts";
import { mcpSecrets } from "./secrets.ts";
import { mcpTools } from "./tools.ts";
import type { ConnectGrace } from "./connect_all.ts";
import {
  failedServersPath,
  noteServerOutcomes,
  readFailedServers,
  RETRY_GRACE_MS,
  serverFingerprint,
} from "./failed_servers.ts";

/** Where a session's MCP servers log. */
export interface McpSourceOptions {
  /**
   * Directory of the session's server logs, `<server>/stderr.log` in it
   * (see `stderrLogPath` in connect.ts); absent: stderr is discarded. It must lie
   * where the model's commands cannot see (the session's is under the data root).
   */
  logDir?: string;
  /** More values to mask in warnings and records (default: the servers' own). */
  secrets?: readonly Secret[];
}

/** The short wait for the servers that failed in the previous run with the same entry. */
async function retryGrace(
  servers: readonly McpServerConfig[],
  memory: string,
  late: ConnectGrace["late"],
): Promise<ConnectGrace | undefined> {
  const failed = await readFailedServers(memory);
  const ms = new Map<string, number>();
  for (const server of servers) {
    const before = failed.get(server.name);
    if (before !== undefined && before === await serverFingerprint(server)) {
      ms.set(server.name, RETRY_GRACE_MS);
    }
  }
  return ms.size > 0 ? { ms, late } : undefined;
}

/** Connect `servers`, offer their tools and the records of the connection. */
export async function openMcpServers(
  servers: readonly McpServerConfig[],
  opts: McpSourceOptions,
  ctx: ToolSourceContext,
): Promise<OpenedToolSource> {
  const secrets = [...mcpSecrets(servers), ...(opts.secrets ?? [])];
  const mask = (text: string) => maskSecrets(text, secrets);
  const warn = (line: string) => ctx.warn(mask(line));
  // The MCP SDK is loaded only when a session has servers to connect.
  const { closeAll, connectAll } = await import("./connect_all.ts");
  const memory = opts.logDir !== undefined ? failedServersPath(opts.logDir) : undefined;
  const background = new AbortController();
  const late: Promise<void>[] = [];
  const grace = memory !== undefined
    ? await retryGrace(servers, memory, (server, attempt) => {
      late.push(attempt.then(
        (conn) => conn.close().then(() => noteServerOutcomes(memory, [{ server, ok: true }])),
        // Stopped with the session: nothing learned about it.
        () =>
          background.signal.aborted
            ? undefined
            : noteServerOutcomes(memory, [{ server, ok: false }]),
      ));
    })
    : undefined;
  // A failure is reported once, by the `mcp_connect_end` record (the `[mcp]` line): not
  // again as a warning.
  const { connections, results } = await connectAll(
    servers,
    {
      policy: ctx.sandbox,
      signal: background.signal,
      ...(opts.logDir !== undefined ? { logDir: opts.logDir } : {}),
    },
    () => {},
    grace,
  );
  if (memory !== undefined) {
    const settled = servers.flatMap((server, i) =>
      grace?.ms.has(server.name) && results[i]!.status !== "completed"
        ? []
        : [{ server, ok: results[i]!.status === "completed" }]
    );
    await noteServerOutcomes(memory, settled);
  }
  const records: EventPayload[] = [
    { type: "mcp_connect_begin", servers: servers.map((s) => s.name) },
    {
      type: "mcp_connect_end",
      status: results.every((r) => r.status === "completed") ? "completed" : "failed",
      // What a server sends (tool names too) is masked like its output.
      results: results.map((r) => ({
        ...r,
        ...(r.error !== undefined ? { error: mask(r.error) } : {}),
        ...(r.tools !== undefined ? { tools: r.tools.map(mask) } : {}),
      })),
    },
  ];
  return {
    tools: mcpTools(connections, warn, new Set(), mask),
    close: async () => {
      // Attempts still under way in the background stop with the session.
      background.abort();
      await Promise.all([closeAll(connections), ...late]);
    },
    records,
  };
}
