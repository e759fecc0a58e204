/**
 * The SDK-based test server over streamable HTTP on 127.0.0.1, reached through penguin's own
 * `connectServer`: the set-up of the tests of a real HTTP MCP connection.
 *
 * @module
 */
import { connectServer, type McpConnection } from "../../lib/mcp/mod.ts";
import { createPolicy } from "../../lib/sandbox/mod.ts";
import { parseMcpServers } from "../../lib/state/mod.ts";
import { WebStandardStreamableHTTPServerTransport } from "npm:@modelcontextprotocol/sdk@1.32.2/server/webStandardStreamableHttp.js";
import { createTestServer } from "../support/mcp_test_server.ts";

/**
 * Serve the test server (answering in plain JSON when `json`, else in event streams), connect
 * to it with a policy over a temp dir named `prefix…`, and give `fn` the connection; the
 * connection, the server and the dir are gone afterwards.
 */
export async function withTestHttpServer(
  opts: { json: boolean; prefix: string },
  fn: (conn: McpConnection) => Promise<void>,
): Promise<void> {
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    async (req) => {
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: opts.json,
      });
      await createTestServer().connect(transport);
      return await transport.handleRequest(req);
    },
  );
  const url = `http://127.0.0.1:${server.addr.port}/mcp`;
  const { servers } = await parseMcpServers([{ name: "s", config: { url } }], "test");
  const dir = await Deno.makeTempDir({ prefix: opts.prefix });
  try {
    const conn = await connectServer(servers[0]!, {
      policy: createPolicy({ workspace: dir, dataRoot: dir }),
    });
    try {
      await fn(conn);
    } finally {
      await conn.close();
    }
  } finally {
    ac.abort();
    await server.finished;
    await Deno.remove(dir, { recursive: true });
  }
}
