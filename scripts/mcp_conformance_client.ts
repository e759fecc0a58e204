// Drives penguin's MCP client (lib/mcp) for the client scenarios of the
// official conformance suite:
//   deno run -A npm:@modelcontextprotocol/conformance@0.1.16 client \
//     --command "deno run -A scripts/mcp_conformance_client.ts" --scenario tools_call
// The suite appends the server URL and names the scenario in
// MCP_CONFORMANCE_SCENARIO. The client connects over Streamable HTTP, lists
// the tools and calls each one with arguments made from its input schema.
import { connectServer, renderCallResult } from "../lib/mcp/mod.ts";
import { createPolicy } from "../lib/sandbox/mod.ts";
import { parseMcpServers } from "../lib/state/mod.ts";

const url = Deno.args.at(-1);
if (!url) throw new Error("usage: mcp_conformance_client.ts <server-url>");
const scenario = Deno.env.get("MCP_CONFORMANCE_SCENARIO") ?? "?";

function sample(schema: Record<string, unknown> | undefined): unknown {
  switch (schema?.type) {
    case "number":
    case "integer":
      return 2;
    case "boolean":
      return true;
    case "array":
      return [];
    case "object": {
      const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, sample(v)]));
    }
    default:
      return "x";
  }
}

const { servers } = await parseMcpServers(
  [{ name: "conformance", config: { url } }],
  "(conformance)",
);
const conn = await connectServer(servers[0]!, { policy: createPolicy({ workspace: Deno.cwd() }) });
try {
  console.log(`[${scenario}] connected; tools: ${conn.tools.map((t) => t.name).join(", ")}`);
  for (const tool of conn.tools) {
    const args = sample(tool.inputSchema as Record<string, unknown>) as Record<string, unknown>;
    const result = await conn.callTool(tool.name, args, {
      signal: AbortSignal.timeout(20_000),
      timeoutMs: 20_000,
    });
    console.log(`[${scenario}] ${tool.name}: ${renderCallResult(result).text}`);
  }
} finally {
  await conn.close();
}
