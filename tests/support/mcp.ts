// MCP servers for tests: the official reference servers from npm and the
// SDK-based test server in this folder, all run by Deno from its cache so
// they start inside a network-less sandbox.
import { WebStandardStreamableHTTPServerTransport } from "npm:@modelcontextprotocol/sdk@1.32.2/server/webStandardStreamableHttp.js";
import { denoDir, REPO, runCliOk } from "./cli.ts";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID, systemConfigPath } from "../../lib/state/mod.ts";
import { createTestServer } from "./mcp_test_server.ts";

/** Versions of the reference servers the tests run. */
export const EVERYTHING = "npm:@modelcontextprotocol/server-everything@2026.8.31";
export const FILESYSTEM = "npm:@modelcontextprotocol/server-filesystem@2026.8.31";
const SDK = "npm:@modelcontextprotocol/sdk@1.32.2";

let cached: Promise<void> | undefined;

/** The system config of `root`'s default agent, where its MCP servers are listed. */
export function defaultAgentConfig(root: string): string {
  return systemConfigPath({ root, projectId: DEFAULT_PROJECT_ID, agentId: DEFAULT_AGENT_ID });
}

/**
 * Initialize `root`'s default agent (`penguin mcp list`, with `args` such as `--workspace`) and
 * resolve to its {@linkcode defaultAgentConfig}, for `addMcpServer`.
 */
export async function initDefaultAgent(root: string, ...args: string[]): Promise<string> {
  await runCliOk(["--root", root, "mcp", "list", ...args], { env: { PAGER: "cat" } });
  return defaultAgentConfig(root);
}

/** Put the servers' packages into Deno's cache (once per test process). */
export function cacheServers(): Promise<void> {
  cached ??= (async () => {
    for (const spec of [EVERYTHING, FILESYSTEM, `${SDK}/server/index.js`]) {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["cache", "--no-config", "--no-lock", spec],
        env: { DENO_DIR: denoDir() },
        stdout: "null",
        stderr: "piped",
      }).output();
      if (!out.success) {
        throw new Error(`deno cache ${spec} failed: ${new TextDecoder().decode(out.stderr)}`);
      }
    }
  })();
  return cached;
}

/** A stdio server entry's `config`. */
export interface DenoServerConfig {
  command: string;
  args: string[];
  env: Record<string, string>;
  connectTimeoutMs: number;
  [key: string]: unknown;
}

/** `config` of a stdio entry running `spec` (an npm package or a file) with Deno, offline. */
export function denoServer(
  spec: string,
  args: string[] = [],
  extra: Record<string, unknown> = {},
): DenoServerConfig {
  return {
    command: Deno.execPath(),
    args: ["run", "-A", "--no-config", "--no-lock", "--cached-only", spec, ...args],
    env: { DENO_DIR: denoDir(), NO_COLOR: "1" },
    // A loaded machine may take long to start Deno; tests that want a timeout set their own.
    connectTimeoutMs: 120_000,
    ...extra,
  };
}

/**
 * The test server of `mcp_test_server.ts` (with `--hang`, one that never
 * answers), copied once per test process to a directory the sandbox shows:
 * a checkout under /tmp is not visible to a confined server (its /tmp is
 * private). The file imports only npm specifiers, so the copy runs alone.
 */
export const TEST_SERVER: string = (() => {
  const base = (() => {
    try {
      return Deno.statSync("/var/tmp").isDirectory ? { dir: "/var/tmp" } : {};
    } catch {
      return {};
    }
  })();
  const dir = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "penguin-mcp-server-", ...base }));
  const path = `${dir}/mcp_test_server.ts`;
  Deno.copyFileSync(`${REPO}tests/support/mcp_test_server.ts`, path);
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // Already gone.
    }
  });
  return path;
})();

/** PIDs of live processes whose command line contains `marker` (how tests count a server's survivors). */
export async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    const cmdline = await Deno.readTextFile(`/proc/${e.name}/cmdline`).catch(() => "");
    if (cmdline.includes(marker)) found.push(Number(e.name));
  }
  return found;
}

/** The test server over Streamable HTTP on 127.0.0.1, stateless, answering only requests `accept` lets through. */
export interface HttpTestServer {
  /** The MCP endpoint. */
  url: string;
  /** Requests that got through `accept`. */
  readonly accepted: number;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Serve {@linkcode createTestServer} over Streamable HTTP; refused requests get a 401. */
export function serveTestServerHttp(accept: (req: Request) => boolean): HttpTestServer {
  const ac = new AbortController();
  let accepted = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    async (req) => {
      if (!accept(req)) return new Response("unauthorized", { status: 401 });
      accepted++;
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await createTestServer().connect(transport);
      return await transport.handleRequest(req);
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/mcp`,
    get accepted() {
      return accepted;
    },
    async [Symbol.asyncDispose]() {
      ac.abort();
      await server.finished;
    },
  };
}
