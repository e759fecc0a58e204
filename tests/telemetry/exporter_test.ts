import assert from "node:assert/strict";
import { createSpanExporter } from "../../lib/telemetry/exporter.ts";
import type { OtlpSpan } from "../../lib/telemetry/otlp_json.ts";
import { spanIdOf, traceIdOf } from "../../lib/telemetry/otlp_json.ts";
import { closedPort, startCollector } from "../support/otlp_collector.ts";
import { decodeSpans } from "./_otlp.ts";

function spans(n: number): OtlpSpan[] {
  return Array.from({ length: n }, (_, i) => ({
    traceId: traceIdOf("t"),
    spanId: spanIdOf("s", String(i)),
    name: `span ${i}`,
    kind: 1,
    startTimeUnixNano: "1000000",
    endTimeUnixNano: "2000000",
    attributes: [],
    status: { code: 0 },
  }));
}

const resource = { serviceName: "penguin", version: "0.1.0" };

Deno.test("exporter: full batches go out at once, the rest at shutdown, with the headers", async () => {
  const c = startCollector();
  const warnings: string[] = [];
  try {
    const ex = createSpanExporter({
      url: `${c.endpoint}/v1/traces`,
      headers: { authorization: "Bearer tok" },
      resource,
      warn: (l) => warnings.push(l),
      maxBatch: 4,
      delayMs: 3_600_000,
    });
    ex.push(spans(4));
    await c.waitFor(1); // a full batch does not wait for the timer
    ex.push(spans(6).slice(4));
    const stats = await ex.shutdown();
    assert.deepEqual(stats, { sent: 6, dropped: 0 });
    assert.equal(c.received.length, 2);
    assert.equal(c.received[0]!.path, "/v1/traces");
    assert.equal(c.received[0]!.headers.get("authorization"), "Bearer tok");
    assert.equal(c.received[0]!.headers.get("content-type"), "application/json");
    assert.equal(decodeSpans(...c.received.map((r) => r.body)).length, 6);
    assert.deepEqual(warnings, []);
  } finally {
    await c.close();
  }
});

Deno.test("exporter: a 503 is retried with backoff; a 400 drops the batch with one warning", async () => {
  const c = startCollector([503, 503]);
  try {
    const ex = createSpanExporter({
      url: `${c.endpoint}/v1/traces`,
      resource,
      warn: () => {},
      maxBatch: 2,
      backoffMs: () => 0,
    });
    ex.push(spans(2));
    await c.waitFor(1);
    assert.deepEqual(await ex.shutdown(), { sent: 2, dropped: 0 });
  } finally {
    await c.close();
  }
  const bad = startCollector([400]);
  const warnings: string[] = [];
  try {
    const ex = createSpanExporter({
      url: `${bad.endpoint}/v1/traces`,
      resource,
      warn: (l) => warnings.push(l),
      backoffMs: () => 0,
    });
    ex.push(spans(3));
    const stats = await ex.shutdown();
    assert.equal(stats.sent, 0);
    assert.equal(stats.dropped, 3);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /cannot export spans to .*: HTTP 400/);
    assert.equal(bad.received.length, 0, "a 400 is not retried");
  } finally {
    await bad.close();
  }
});

Deno.test("exporter: an unreachable collector drops and counts, warns once; a full queue drops the excess", async () => {
  const warnings: string[] = [];
  const ex = createSpanExporter({
    url: `http://127.0.0.1:${closedPort()}/v1/traces`,
    resource,
    warn: (l) => warnings.push(l),
    maxQueue: 5,
    maxBatch: 100,
    delayMs: 3_600_000,
    backoffMs: () => 0,
  });
  ex.push(spans(8));
  ex.push(spans(2));
  const stats = await ex.shutdown();
  assert.equal(stats.sent, 0);
  assert.equal(stats.dropped, 10);
  assert.equal(warnings.length, 1, warnings.join("\n"));
  ex.push(spans(1));
  assert.deepEqual(
    await ex.shutdown(),
    { ...stats, dropped: 11 },
    "a span after shutdown is dropped",
  );
});

Deno.test("exporter: a collector that never answers costs at most shutdownMs at exit, then drops", async () => {
  let release!: () => void;
  const hold = new Promise<void>((r) => release = r);
  let arrived!: () => void;
  const first = new Promise<void>((r) => arrived = r);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    await req.arrayBuffer();
    arrived();
    await hold;
    return new Response("late");
  });
  const warnings: string[] = [];
  try {
    const ex = createSpanExporter({
      url: `http://127.0.0.1:${server.addr.port}/v1/traces`,
      resource,
      warn: (l) => warnings.push(l),
      maxBatch: 2,
      shutdownMs: 50,
    });
    ex.push(spans(3)); // one full batch goes out now and hangs; one span waits
    await first;
    const stats = await ex.shutdown();
    assert.deepEqual([stats.sent, stats.dropped], [0, 3]);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /cannot export spans .*: the collector did not answer within 50 ms/);
  } finally {
    release();
    await server.shutdown();
  }
});
