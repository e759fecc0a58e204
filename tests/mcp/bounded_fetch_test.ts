// boundedFetch, the fetch of penguin's HTTP MCP transports: bodies within the bounds pass, an
// event stream past its total is refused, a request leaves the pending map however its body
// ends, and a request the SDK cancels has its HTTP response
// aborted; through connectServer, a real server answering in event streams works, and an
// interrupted call stops a server's never-ending answer.
import assert from "node:assert/strict";
import { type BodyBounds, boundedFetch, type FetchLike } from "../../lib/mcp/bounded_fetch.ts";
import { connectServer } from "../../lib/mcp/mod.ts";
import { createPolicy } from "../../lib/sandbox/mod.ts";
import { parseMcpServers } from "../../lib/state/mod.ts";
import { startHostileMcpServer } from "../support/hostile_mcp_http.ts";
import { withTestHttpServer } from "./_test_http_server.ts";

/** A base fetch answering `body` with `contentType`, recording each request's signal. */
function fake(body: string | (() => ReadableStream<Uint8Array>), contentType: string) {
  const signals: AbortSignal[] = [];
  const base: FetchLike = (_url, init) => {
    signals.push(init!.signal!);
    const stream = typeof body === "string" ? body : body();
    return Promise.resolve(new Response(stream, { headers: { "content-type": contentType } }));
  };
  return { base, signals };
}

const post = (message: unknown): RequestInit => ({
  method: "POST",
  body: JSON.stringify(message),
});

Deno.test("bodies within the bounds reach the reader as they were sent", async () => {
  const refused: string[] = [];
  const json = '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}';
  const f1 = fake(json, "application/json");
  const r1 = await boundedFetch((w) => refused.push(w), undefined, f1.base)("http://h/", post({}));
  assert.equal(await r1.text(), json);
  const f2 = fake('retry: 10\r\nid: 7\r\n: ping\r\ndata: {"a":1}\r\n\r\n', "text/event-stream");
  const r2 = await boundedFetch((w) => refused.push(w), undefined, f2.base)("http://h/", post({}));
  assert.equal(await r2.text(), 'retry: 10\nid: 7\ndata: {"a":1}\n\n');
  assert.deepEqual(refused, []);
});

Deno.test("an event stream past its total is refused, though each event is small", async () => {
  const bounds: BodyBounds = { maxMessageChars: 100, maxBodyChars: 1000 };
  const event = new TextEncoder().encode('data: {"jsonrpc":"2.0","method":"n"}\n\n');
  const f = fake(
    () => new ReadableStream({ pull: (c) => c.enqueue(event) }), // never ends
    "text/event-stream",
  );
  const refused: string[] = [];
  const res = await boundedFetch((w) => refused.push(w), bounds, f.base)("http://h/", post({}));
  await assert.rejects(
    res.text(),
    /sent more than 1000 characters in one response \(penguin's limit\)/,
  );
  assert.equal(refused.length, 1);
  assert.ok(f.signals[0]!.aborted, "the request was not aborted");
});

Deno.test("notifications/cancelled aborts the HTTP response of that request only", async () => {
  const f = fake(() => new ReadableStream(), "text/event-stream");
  const fetch = boundedFetch(() => {}, undefined, f.base);
  await fetch("http://h/", post({ jsonrpc: "2.0", id: 4, method: "tools/call" }));
  await fetch("http://h/", post({ jsonrpc: "2.0", id: 5, method: "tools/call" }));
  assert.deepEqual(f.signals.map((s) => s.aborted), [false, false]);
  await fetch(
    "http://h/",
    post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 5 } }),
  );
  assert.deepEqual(f.signals.map((s) => s.aborted), [false, true, false]);
});

Deno.test("a request leaves the pending map however its body ends", async () => {
  const pending = new Map<unknown, AbortController>();
  const bounds: BodyBounds = { maxMessageChars: 100, maxBodyChars: 1000 };
  const event = new TextEncoder().encode('data: {"jsonrpc":"2.0","method":"n"}\n\n');
  const bodies: Record<string, () => ReadableStream<Uint8Array>> = {
    "/never-ends": () => new ReadableStream({ pull: (c) => c.enqueue(event) }),
    "/fails": () =>
      new ReadableStream({
        start: (c) => c.enqueue(event),
        pull: (c) => c.error(new Error("connection reset")),
      }),
    "/ends": () => new ReadableStream({ start: (c) => (c.enqueue(event), c.close()) }),
  };
  const base: FetchLike = (url) =>
    Promise.resolve(
      new Response(bodies[new URL(url).pathname]!(), {
        headers: { "content-type": "text/event-stream" },
      }),
    );
  const fetch = boundedFetch(() => {}, bounds, base, pending);
  const call = (path: string, id: number) =>
    fetch(`http://h${path}`, post({ jsonrpc: "2.0", id, method: "tools/call" }));

  // Cancelled by the reader (the SDK giving up on a stream that never ends).
  const cancelled = await call("/never-ends", 1);
  assert.deepEqual([...pending.keys()], [1]);
  const reader = cancelled.body!.getReader();
  await reader.read();
  await reader.cancel();
  assert.equal(pending.size, 0, "a cancelled body stays pending");

  // Refused past the total bound.
  const refused = await call("/never-ends", 2);
  await assert.rejects(refused.text(), /sent more than 1000 characters/);
  assert.equal(pending.size, 0, "a refused body stays pending");

  // Failed by the network.
  const failed = await call("/fails", 3);
  await assert.rejects(failed.text(), /connection reset/);
  assert.equal(pending.size, 0, "a failed body stays pending");

  // Read to the end.
  const ended = await call("/ends", 4);
  assert.match(await ended.text(), /"method":"n"/);
  assert.equal(pending.size, 0, "an ended body stays pending");
});

Deno.test("an interrupted call to a server whose answer never ends stops the HTTP response", async () => {
  await using hostile = startHostileMcpServer("trickle");
  const { servers } = await parseMcpServers([{ name: "t", config: { url: hostile.url } }], "test");
  const dir = await Deno.makeTempDir({ prefix: "penguin-mcph-" });
  try {
    const policy = createPolicy({ workspace: dir, dataRoot: dir });
    const conn = await connectServer(servers[0]!, { policy });
    const ac = new AbortController();
    const calling = conn.callTool("j", {}, { signal: ac.signal, timeoutMs: 0 });
    await hostile.callArrived;
    ac.abort(new Error("tool timed out"));
    await assert.rejects(calling, /tool timed out/);
    // The connection stays open: only that request's response is stopped.
    await hostile.callStreamCancelled;
    await conn.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a real server answering every request in an event stream works through the bounds", async () => {
  await withTestHttpServer({ json: false, prefix: "penguin-mcph-" }, async (conn) => {
    assert.ok(conn.tools.some((t) => t.name === "echo"));
    const result = await conn.callTool("echo", { message: "streamed" }, {
      signal: new AbortController().signal,
      timeoutMs: 0,
    });
    assert.match(JSON.stringify(result), /echo: streamed/);
  });
});
