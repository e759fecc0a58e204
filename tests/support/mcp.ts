// MCP servers for tests: the official reference servers from npm and the
// SDK-based test server in this folder, all run by Deno from its cache so
// they start inside a network-less sandbox.
import { denoDir, REPO } from "./cli.ts";

/** Versions of the reference servers the tests run. */
export const EVERYTHING = "npm:@modelcontextprotocol/server-everything@2026.8.31";
export const FILESYSTEM = "npm:@modelcontextprotocol/server-filesystem@2026.8.31";
const SDK = "npm:@modelcontextprotocol/sdk@1.32.2";

let cached: Promise<void> | undefined;

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
