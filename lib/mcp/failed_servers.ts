/**
 * Which MCP servers failed to connect in an agent's last run: a small JSON
 * file beside the session logs (`<agent>/mcp_logs/failed_servers.json`, in
 * the hidden data root) mapping a server's name to a fingerprint of how it
 * is started. A server listed with its current fingerprint is waited for at
 * most {@linkcode RETRY_GRACE_MS} at the next session start, and retried in
 * the background; one whose entry changed (a new command, other variables)
 * is waited for in full again.
 *
 * @module
 */
import { dirname, join } from "node:path";
import type { McpServerConfig } from "../state/mod.ts";
import { hexOf } from "../protocol/hex.ts";

/** Longest wait at session start for a server that failed in the previous run. */
export const RETRY_GRACE_MS = 1000;

/** Largest memory file read; anything bigger is treated as empty. */
const MAX_BYTES = 1 << 20;

/** The memory file of the sessions whose server logs go to `logDir` (`<agent>/mcp_logs/<session>`). */
export function failedServersPath(logDir: string): string {
  return join(dirname(logDir), "failed_servers.json");
}

/** A fingerprint of how `server` is started or reached (not its timeouts or permission). */
export async function serverFingerprint(server: McpServerConfig): Promise<string> {
  const facts = server.transport === "stdio"
    ? [server.command, server.args, server.env, server.cwd ?? null, server.sandbox]
    : [server.transport, server.url, server.headers];
  const bytes = new TextEncoder().encode(JSON.stringify(facts));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return hexOf(digest.subarray(0, 16));
}

/** The servers that failed last time: name → fingerprint (an unreadable file: none). */
export async function readFailedServers(path: string): Promise<Map<string, string>> {
  try {
    const info = await Deno.stat(path);
    if (!info.isFile || info.size > MAX_BYTES) return new Map();
    const data = JSON.parse(await Deno.readTextFile(path)) as unknown;
    if (typeof data !== "object" || data === null || Array.isArray(data)) return new Map();
    return new Map(
      Object.entries(data).filter((e): e is [string, string] => typeof e[1] === "string"),
    );
  } catch {
    return new Map();
  }
}

/**
 * Note how each server of `outcomes` fared (true: connected), keeping the
 * other entries. Best effort: a failure to write only costs the next run its
 * shortcut.
 */
export async function noteServerOutcomes(
  path: string,
  outcomes: ReadonlyArray<{ server: McpServerConfig; ok: boolean }>,
): Promise<void> {
  if (outcomes.length === 0) return;
  try {
    const failed = await readFailedServers(path);
    for (const { server, ok } of outcomes) {
      if (ok) failed.delete(server.name);
      else failed.set(server.name, await serverFingerprint(server));
    }
    await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const tmp = `${path}.${crypto.randomUUID()}.tmp`;
    await Deno.writeTextFile(tmp, JSON.stringify(Object.fromEntries(failed)) + "\n", {
      mode: 0o600,
    });
    await Deno.rename(tmp, path);
  } catch {
    // The memory is an optimisation only.
  }
}
