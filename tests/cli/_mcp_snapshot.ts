/**
 * What `penguin agent snapshot` packed of MCP servers added through the CLI:
 * the `mcp add` argv of a server started by `npx -y mcp-remote <url>`, and
 * the text of the default agent's one snapshot.
 *
 * @module
 */
import { join } from "node:path";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import { readTar } from "../../lib/state/_tar.ts";
import { mcpAddArgs } from "../support/cli.ts";

/** `--root <root> mcp add <name> --no-test -- npx -y mcp-remote <url> ...extra`. */
export function mcpRemoteArgs(
  root: string,
  name: string,
  url: string,
  ...extra: string[]
): string[] {
  return mcpAddArgs(root, name, "--no-test", "--", "npx", "-y", "mcp-remote", url, ...extra);
}

/**
 * The default agent's one snapshot under `root`: every packed file's text
 * joined by newlines (`all`) and its `agent_state/system_config.yaml`
 * (`config`).
 */
export async function packedText(root: string): Promise<{ all: string; config: string }> {
  const dir = join(root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID, "snapshots");
  const [snap] = (await Array.fromAsync(Deno.readDir(dir))).map((e) => join(dir, e.name));
  const stream = (await Deno.open(snap!)).readable.pipeThrough(new DecompressionStream("gzip"));
  const entries = readTar(new Uint8Array(await new Response(stream).arrayBuffer()));
  const config = entries.find((e) => e.path === "agent_state/system_config.yaml")!;
  return {
    all: entries.map((e) => new TextDecoder().decode(e.data)).join("\n"),
    config: new TextDecoder().decode(config.data),
  };
}
