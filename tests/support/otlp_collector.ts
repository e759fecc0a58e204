/**
 * A loopback OTLP/HTTP receiver for tests: `POST /v1/traces` bodies are
 * kept (with their headers) and answered 200, or with the statuses queued
 * in `failFirst`. Waiting is on received requests, never on time.
 *
 * @module
 */

/** One received export. */
export interface ReceivedExport {
  path: string;
  headers: Headers;
  body: unknown;
}

/** A running receiver. */
export interface Collector {
  /** `http://127.0.0.1:<port>` (the OTLP base endpoint). */
  endpoint: string;
  /** Requests so far. */
  received: ReceivedExport[];
  /** Resolves once `n` requests arrived. */
  waitFor(n: number): Promise<void>;
  close(): Promise<void>;
}

/** Start a receiver; the first requests get the statuses in `failFirst`. */
export function startCollector(failFirst: number[] = []): Collector {
  const received: ReceivedExport[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const statuses = [...failFirst];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = await req.json();
    const status = statuses.shift();
    if (status !== undefined) return new Response("no", { status });
    received.push({ path: new URL(req.url).pathname, headers: req.headers, body });
    for (const w of waiters.filter((w) => received.length >= w.n)) w.resolve();
    return Response.json({});
  });
  return {
    endpoint: `http://127.0.0.1:${server.addr.port}`,
    received,
    waitFor(n) {
      if (received.length >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    close: () => server.shutdown(),
  };
}

/** A port nothing listens on (bound, then closed). */
export function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}
