/**
 * Connecting to one MCP server: start or reach it, run the MCP handshake,
 * and list its tools, all within `connectTimeoutMs`. A stdio server runs
 * through `lib/sandbox` with a policy derived from the session's
 * (see {@linkcode serverPolicy}); an HTTP server is reached with `fetch`.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { isInside, type SandboxPolicy } from "../sandbox/mod.ts";
import type { McpServerConfig, McpStdioServer } from "../state/mod.ts";
import { VERSION } from "../version.ts";
import type { Release } from "./answer_gate.ts";
import { boundedHttpTransport } from "./http_transport.ts";
import { type BoundedTransport, sandboxedStdioTransport } from "./stdio_transport.ts";
import { NO_SCHEMA_VALIDATION } from "./schema_validator.ts";
import { MAX_TOOLS_PER_SERVER } from "./tool_limits.ts";

/** A tool as a server lists it. */
export type ListedTool = McpTool;

/** Longest timer a JavaScript runtime accepts; used for "no limit". */
export const NO_LIMIT_MS = 2 ** 31 - 1;

/** At most this many `tools/list` pages are read from one server. */
const MAX_TOOL_PAGES = 100;

/** A live connection. */
export interface McpConnection {
  readonly server: McpServerConfig;
  /** The tools the server listed, the first {@linkcode MAX_TOOLS_PER_SERVER} of them. */
  readonly tools: readonly ListedTool[];
  /** How many tools the server listed before penguin stopped reading (more than `tools`: some were cut). */
  readonly listed: number;
  /**
   * Call a tool; `timeoutMs` ≤ 0 means no limit. Rejects on transport
   * failures. A large answer comes with the process's answer gate held
   * (lib/mcp/answer_gate.ts): it is handed to `keep`, which must give it
   * back once the answer is no longer held whole; without `keep` it is
   * given back at once.
   */
  callTool(
    name: string,
    args: Record<string, unknown>,
    opts: { signal: AbortSignal; timeoutMs: number; keep?: (release: Release) => void },
  ): Promise<unknown>;
  /** Disconnect (a stdio server is stopped). Idempotent. */
  close(): Promise<void>;
}

/** Where servers run and log. */
export interface ConnectContext {
  /** The session's confinement; stdio servers get a policy derived from it. */
  policy: SandboxPolicy;
  /**
   * Directory of the servers' logs: each stdio server writes its stderr to
   * {@linkcode stderrLogPath} (created when needed, 0700), in a directory of
   * its own that only its sandbox sees. Absent: stderr is discarded.
   */
  logDir?: string;
  /** Aborts the connection attempt. */
  signal?: AbortSignal;
}

/**
 * The confinement of a stdio server: the session's, with the network off
 * unless the server's config turns it on, its extra writable roots added,
 * its `readable` home directories shown read-only, no vault values, and the
 * log directory writable.
 */
export function serverPolicy(
  server: McpStdioServer,
  base: SandboxPolicy,
  logDir?: string,
): SandboxPolicy {
  const writable = [...base.extraWritable, ...server.sandbox.writable];
  const covered = (dir: string) =>
    [base.workspace, base.scratchpad, ...writable].some((root) =>
      root !== undefined && isInside(dir, root)
    );
  if (logDir && !covered(logDir)) writable.push(logDir);
  const readable = [...(base.homeReadable ?? []), ...server.sandbox.readable];
  return {
    ...base,
    network: server.sandbox.network,
    extraWritable: writable,
    // The log directory lies in the data root, which the plan hides where it lies inside a root
    // (a root kept in the workspace): shown writable there too, as the agent's memory is.
    ...(logDir ? { revealWritable: [...(base.revealWritable ?? []), logDir] } : {}),
    ...(readable.length > 0 ? { homeReadable: readable } : {}),
    env: { ...base.env, vault: {} },
  };
}

/**
 * Where a stdio server starts when its entry names no `cwd`: the read-only
 * root, never the workspace. The model writes the workspace, and what a
 * server's runtime picks up from its working directory (`python -m` imports,
 * `npx` and `deno` project files, `.npmrc`) would run the model's code with
 * the server's environment and network. A server reaches the workspace by
 * its absolute path (its arguments), a `cwd` in its entry, or, to start in
 * whichever workspace the session has, `sandbox.cwd: workspace`.
 */
export const SERVER_CWD = "/";

/** The stderr log of server `name` under a log directory: `<logDir>/<name>/stderr.log`. */
export function stderrLogPath(logDir: string, name: string): string {
  return join(logDir, name, "stderr.log");
}

async function stdioTransport(
  server: McpStdioServer,
  ctx: ConnectContext,
): Promise<BoundedTransport> {
  let stderrLog: string | undefined;
  if (ctx.logDir && ctx.policy.mode === "workspace-write") {
    stderrLog = stderrLogPath(ctx.logDir, server.name);
    await Deno.mkdir(dirname(stderrLog), { recursive: true, mode: 0o700 });
  }
  return sandboxedStdioTransport({
    name: server.name,
    command: server.command,
    args: server.args,
    env: server.env,
    cwd: server.cwd ?? (server.sandbox.workspaceCwd ? ctx.policy.workspace : SERVER_CWD),
    // Only the server's own log directory is writable (and visible) to it, never its neighbours'.
    policy: serverPolicy(server, ctx.policy, stderrLog ? dirname(stderrLog) : undefined),
    ...(stderrLog !== undefined ? { stderrLog } : {}),
  });
}

/** Reject with a clear message when `ms` pass or `signal` fires first. */
function within<T>(work: Promise<T>, ms: number, signal: AbortSignal | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no answer within ${ms} ms (connectTimeoutMs)`)),
      Math.min(ms, NO_LIMIT_MS),
    );
    const onAbort = () => reject(new Error("connection aborted"));
    signal?.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    });
  });
}

/**
 * Call tool `name` through `client`. The SDK never removes the listener it
 * adds to the signal it is given, and that listener keeps the answer
 * reachable: it gets a signal of this call's own, unreachable once the call
 * is over. A large answer's gate slot (left at the transport's desk) goes
 * to `opts.keep`, or is given back.
 */
async function callTool(
  client: Client,
  transport: () => BoundedTransport | undefined,
  name: string,
  args: Record<string, unknown>,
  opts: { signal: AbortSignal; timeoutMs: number; keep?: (release: Release) => void },
): Promise<unknown> {
  const timeout = opts.timeoutMs > 0 ? Math.min(opts.timeoutMs, NO_LIMIT_MS) : NO_LIMIT_MS;
  const own = new AbortController();
  const forward = () => own.abort(opts.signal.reason);
  if (opts.signal.aborted) forward();
  else opts.signal.addEventListener("abort", forward, { once: true });
  try {
    const result = await client.callTool({ name, arguments: args }, undefined, {
      signal: own.signal,
      timeout,
    });
    const release = transport()?.desk.take();
    if (release !== undefined) (opts.keep ?? ((r) => r()))(release);
    return result;
  } catch (err) {
    // The SDK reports a closed connection; the transport knows why it closed it.
    const refusal = transport()?.refusal;
    throw refusal !== undefined ? new Error(refusal) : err;
  } finally {
    opts.signal.removeEventListener("abort", forward);
  }
}

/**
 * Connect to `server` and list its tools. Rejects with an Error whose
 * message says what failed (the server is left stopped then).
 */
export async function connectServer(
  server: McpServerConfig,
  ctx: ConnectContext,
): Promise<McpConnection> {
  // No server-supplied schema is compiled or run here (see lib/mcp/schema_validator.ts).
  const client = new Client({ name: "penguin", version: VERSION }, {
    capabilities: {},
    jsonSchemaValidator: NO_SCHEMA_VALIDATION,
  });
  let lastError: Error | undefined;
  client.onerror = (err: Error) => {
    lastError = err;
  };
  const limit = server.connectTimeoutMs;
  let transport: BoundedTransport | undefined;
  const work = (async () => {
    transport = server.transport === "stdio"
      ? await stdioTransport(server, ctx)
      : boundedHttpTransport(server);
    await client.connect(transport, { timeout: limit });
    const tools: ListedTool[] = [];
    let listed = 0;
    let cursor: string | undefined;
    // No page is asked for once the bound is reached; past it, tools are counted, not kept.
    for (let page = 0; page < MAX_TOOL_PAGES && listed < MAX_TOOLS_PER_SERVER; page++) {
      const res = await client.listTools(cursor ? { cursor } : {}, { timeout: limit });
      listed += res.tools.length;
      tools.push(...res.tools.slice(0, MAX_TOOLS_PER_SERVER - tools.length));
      cursor = res.nextCursor;
      if (!cursor) break;
    }
    return { tools, listed };
  })();
  let tools: ListedTool[];
  let listed: number;
  try {
    ({ tools, listed } = await within(work, limit, ctx.signal));
  } catch (err) {
    // The attempt may still be under way: stop whatever it started, now and once it settles.
    const stop = () => Promise.all([client.close(), transport?.close()]).catch(() => {});
    work.then(stop, stop);
    await stop();
    const detail = transport?.refusal ?? (err instanceof Error ? err.message : String(err));
    const cause = lastError && !detail.includes(lastError.message) ? ` (${lastError.message})` : "";
    throw new Error(`${detail}${cause}`);
  }
  let closed: Promise<void> | undefined;
  return {
    server,
    tools,
    listed,
    callTool: (name, args, opts) => callTool(client, () => transport, name, args, opts),
    close(): Promise<void> {
      const done = closed ?? client.close().catch(() => {});
      closed = done;
      return done;
    },
  };
}
