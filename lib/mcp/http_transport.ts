/**
 * penguin's HTTP MCP transports: the SDK's Streamable HTTP and SSE client
 * transports, given {@linkcode boundedFetch} so that what a server answers
 * is measured before the SDK parses it. A server that passes a bound has
 * its connection closed, which fails every request under way;
 * {@linkcode BoundedTransport.refusal} says why, naming the server and the
 * bound.
 *
 * @module
 */
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { McpServerConfig } from "../state/mod.ts";
import { createAnswerDesk, MCP_ANSWER_GATE } from "./answer_gate.ts";
import { BODY_BOUNDS, type BodyBounds, boundedFetch } from "./bounded_fetch.ts";
import type { BoundedTransport } from "./stdio_transport.ts";

/** An MCP server reached over HTTP. */
export type RemoteServer = McpServerConfig & { transport: "http" | "sse" };

/** The transport of `server`, its answers held to `bounds`. Starting it reaches the server. */
export function boundedHttpTransport(
  server: RemoteServer,
  bounds: Readonly<BodyBounds> = BODY_BOUNDS,
): BoundedTransport {
  const url = new URL(server.url);
  const requestInit = { headers: server.headers };
  let refusal: string | undefined;
  const desk = createAnswerDesk();
  const fetch = boundedFetch(
    (why) => {
      if (refusal !== undefined) return;
      refusal = `MCP server ${JSON.stringify(server.name)} ${why}; the connection was closed`;
      transport.onerror?.(new Error(refusal));
      void transport.close();
    },
    bounds,
    undefined,
    undefined,
    { gate: MCP_ANSWER_GATE, desk },
  );
  const transport = server.transport === "sse"
    ? new SSEClientTransport(url, { requestInit, fetch })
    : new StreamableHTTPClientTransport(url, { requestInit, fetch });
  Object.defineProperty(transport, "desk", { value: desk });
  return Object.defineProperty(transport, "refusal", { get: () => refusal }) as
    & typeof transport
    & BoundedTransport;
}
