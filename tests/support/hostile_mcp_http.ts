// A hostile MCP server over HTTP, on 127.0.0.1: it speaks just enough of the Streamable HTTP
// transport (POST, JSON or event-stream answers; no GET stream) or of the older SSE transport
// (a GET event stream announcing a POST endpoint) to be connected to and list one tool `j`, and
// answers a call of `j` the way its mode says: a body or one event holding `mb` MiB of "{},",
// an event stream that never ends, or (mode `notes`) an event stream of 3 notifications of
// 16 Mi - 4 Ki characters, then a result of 15 Mi: every event under the limit of one message.

/** How `tools/call` is answered. */
export type HostileMode =
  | "json" // an application/json body of mb MiB of "{}," in the result
  | "sse" // a Streamable HTTP event stream, one event of mb MiB
  | "legacy" // the older SSE transport: one event of mb MiB on the GET stream
  | "trickle" // a Streamable HTTP event stream: one comment, then nothing, never ending
  | "notes"; // a Streamable HTTP event stream: 3 notifications of 16 Mi - 4 Ki chars, a 15 Mi result

/** The server, and what it saw. */
export interface HostileServer {
  /** The URL to configure (`/mcp`, or `/sse` for mode `legacy`). */
  url: string;
  /** Resolves when a `tools/call` arrived. */
  readonly callArrived: Promise<void>;
  /** Resolves when the client stopped reading the answer to `tools/call` (it closed the stream). */
  readonly callStreamCancelled: Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const enc = new TextEncoder();
const CHUNK = enc.encode("{},".repeat(21_846)); // 64 KiB

/** A stream of `head`, `mb` MiB of "{},", then `tail`, in 64 KiB chunks. */
function junkStream(head: string, mb: number, tail: string, onCancel: () => void = () => {}) {
  let left = Math.floor(mb * 1024 * 1024 / CHUNK.length);
  let started = false;
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (!started) {
        started = true;
        return c.enqueue(enc.encode(head));
      }
      if (left-- > 0) return c.enqueue(CHUNK);
      c.enqueue(enc.encode(tail));
      c.close();
    },
    cancel: onCancel,
  }, { highWaterMark: 0 });
}

const N_CHUNK = enc.encode("N".repeat(64 * 1024));

/** Events of `head` + `chars` characters of "N" + `tail` each, one after the other, in 64 KiB chunks. */
function bigEvents(events: [head: string, chars: number, tail: string][], onCancel: () => void) {
  const parts: (Uint8Array | number)[] = events.flatMap(([head, chars, tail]) => [
    enc.encode(head),
    chars,
    enc.encode(tail),
  ]);
  return new ReadableStream<Uint8Array>({
    pull(c) {
      const next = parts[0];
      if (next === undefined) return c.close();
      if (typeof next !== "number") return void c.enqueue(parts.shift() as Uint8Array);
      const n = Math.min(next, N_CHUNK.length);
      parts[0] = next - n;
      if (next - n === 0) parts.shift();
      c.enqueue(N_CHUNK.subarray(0, n));
    },
    cancel: onCancel,
  }, { highWaterMark: 0 });
}

const TOOL = { name: "j", description: "junk", inputSchema: { type: "object", properties: {} } };

function resultOf(msg: { id: unknown; method: string; params?: { protocolVersion?: string } }) {
  if (msg.method === "initialize") {
    return {
      protocolVersion: msg.params?.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: "j", version: "1" },
    };
  }
  return msg.method === "tools/list" ? { tools: [TOOL] } : {};
}

const line = (id: unknown, result: unknown) => JSON.stringify({ jsonrpc: "2.0", id, result });
const HEAD = (id: unknown) =>
  `{"jsonrpc":"2.0","id":${
    JSON.stringify(id)
  },"result":{"content":[{"type":"text","text":"hi"}],"junk":[`;

/** Start the server in `mode`; `mb` MiB of junk for the modes that send it. */
export function startHostileMcpServer(mode: HostileMode, mb = 0): HostileServer {
  const ac = new AbortController();
  let cancelled!: () => void;
  const callStreamCancelled = new Promise<void>((resolve) => cancelled = resolve);
  let arrived!: () => void;
  const callArrived = new Promise<void>((resolve) => arrived = resolve);
  let legacy: ReadableStreamDefaultController<Uint8Array> | undefined;
  const send = (text: string) => legacy?.enqueue(enc.encode(text));

  const callAnswer = (id: unknown): Response => {
    const sse = { "content-type": "text/event-stream" };
    if (mode === "json") {
      return new Response(junkStream(HEAD(id), mb, "{}]}}", cancelled), {
        headers: { "content-type": "application/json" },
      });
    }
    if (mode === "sse") {
      return new Response(junkStream(`data: ${HEAD(id)}`, mb, "{}]}}\n\n", cancelled), {
        headers: sse,
      });
    }
    if (mode === "notes") {
      const note =
        `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`;
      const close = `"}}\n\n`;
      const noteChars = 16 * 1024 * 1024 - 4096;
      const result = `data: {"jsonrpc":"2.0","id":${
        JSON.stringify(id)
      },"result":{"content":[{"type":"text","text":"hi`;
      return new Response(
        bigEvents([
          [note, noteChars, close],
          [note, noteChars, close],
          [note, noteChars, close],
          [result, 15 * 1024 * 1024, `"}]}}\n\n`],
        ], cancelled),
        { headers: sse },
      );
    }
    // trickle: one comment, then the stream stays open until the client goes.
    const body = new ReadableStream<Uint8Array>({
      start: (c) => c.enqueue(enc.encode(": working\n\n")),
      cancel: cancelled,
    });
    return new Response(body, { headers: sse });
  };

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      if (req.method === "GET" && path === "/sse" && mode === "legacy") {
        const body = new ReadableStream<Uint8Array>({
          start(c) {
            legacy = c;
            c.enqueue(enc.encode("event: endpoint\ndata: /messages\n\n"));
          },
          cancel: cancelled,
        });
        return new Response(body, { headers: { "content-type": "text/event-stream" } });
      }
      if (req.method !== "POST") return new Response(null, { status: 405 });
      const msg = await req.json();
      if (msg.id === undefined) return new Response(null, { status: 202 });
      if (msg.method === "tools/call") arrived();
      if (mode === "legacy") {
        if (msg.method === "tools/call") {
          // The event is sent in pieces, as the junk stream makes them.
          const reader = junkStream(`event: message\ndata: ${HEAD(msg.id)}`, mb, "{}]}}\n\n")
            .getReader();
          (async () => {
            for (let r = await reader.read(); !r.done; r = await reader.read()) {
              try {
                legacy?.enqueue(r.value);
              } catch {
                return; // the client went away
              }
            }
          })();
        } else send(`event: message\ndata: ${line(msg.id, resultOf(msg))}\n\n`);
        return new Response(null, { status: 202 });
      }
      if (msg.method === "tools/call") return callAnswer(msg.id);
      return new Response(line(msg.id, resultOf(msg)), {
        headers: { "content-type": "application/json" },
      });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/${mode === "legacy" ? "sse" : "mcp"}`,
    callArrived,
    callStreamCancelled,
    async [Symbol.asyncDispose]() {
      try {
        legacy?.close();
      } catch {
        // Already closed.
      }
      ac.abort();
      await server.finished;
    },
  };
}
