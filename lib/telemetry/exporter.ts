/**
 * OTLP/HTTP JSON export of spans, off the task's path: `push` only queues
 * (a bounded queue; spans past it are dropped and counted), batches go out
 * one request at a time in the background, a failed batch is retried with
 * backoff (network errors, 429, 502, 503, 504), and a batch that still fails
 * is dropped and counted. The first failure is reported once; nothing here
 * throws at its caller or waits inside it. `shutdown` sends what is left,
 * each batch once, for at most `shutdownMs`, and returns the counts.
 *
 * @module
 */
import { errorMessage } from "../protocol/errors.ts";
import { shownEndpoint, withEndpointShown } from "./_endpoint_shown.ts";
import { exportRequest, type OtlpSpan } from "./otlp_json.ts";

/** Options of {@linkcode createSpanExporter}. */
export interface SpanExporterOptions {
  /** The traces URL (`…/v1/traces`). */
  url: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** Resource facts of every request. */
  resource: { serviceName: string; version: string };
  /** Where the one failure warning goes. */
  warn: (line: string) => void;
  /** Spans held at most (default 2048); more are dropped. */
  maxQueue?: number;
  /** Spans per request at most (default 256). */
  maxBatch?: number;
  /** How long a partial batch waits for more spans (default 1000 ms). */
  delayMs?: number;
  /** Attempts per batch (default 3). */
  attempts?: number;
  /** Wait before attempt n+1 (default 200 ms · 2^(n−1)). */
  backoffMs?: (n: number) => number;
  /** Timeout of one request (default 10 s). */
  timeoutMs?: number;
  /** The longest `shutdown` waits for the last batches (default 2 s). */
  shutdownMs?: number;
}

/** What an exporter did. */
export interface ExportStats {
  /** Spans the collector accepted. */
  sent: number;
  /** Spans dropped (queue full, collector unreachable or refusing, shutdown deadline). */
  dropped: number;
  /** The first failure, if any. */
  failure?: string;
}

/** A running exporter. */
export interface SpanExporter {
  /** Queue spans; never blocks, never throws. */
  push(spans: readonly OtlpSpan[]): void;
  /** Send what is queued (bounded by `shutdownMs`) and stop. */
  shutdown(): Promise<ExportStats>;
}

const RETRYABLE = new Set([429, 502, 503, 504]);

/** Wait `ms`, or less when `wake` aborts (at once when it already has). */
function pauseUnless(wake: AbortSignal, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (wake.aborted) return resolve();
    const id = setTimeout(done, ms);
    function done() {
      clearTimeout(id);
      wake.removeEventListener("abort", done);
      resolve();
    }
    wake.addEventListener("abort", done);
  });
}

/** One POST of an export request: accepted, or why not and whether another try may help. */
async function postOnce(
  url: string,
  headers: Record<string, string>,
  body: string,
  halt: AbortSignal,
  timeoutMs: number,
): Promise<{ ok: true } | { ok: false; why: string; retry: boolean }> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers,
      body,
      signal: AbortSignal.any([halt, AbortSignal.timeout(timeoutMs)]),
    });
    await res.body?.cancel();
    if (res.ok) return { ok: true };
    return { ok: false, why: `HTTP ${res.status}`, retry: RETRYABLE.has(res.status) };
  } catch (err) {
    return { ok: false, why: errorMessage(err), retry: true };
  }
}

/** The exporter's limits and timings: `options`, else the defaults. */
function limitsOf(options: SpanExporterOptions) {
  return {
    maxQueue: options.maxQueue ?? 2048,
    maxBatch: options.maxBatch ?? 256,
    delayMs: options.delayMs ?? 1000,
    attempts: Math.max(1, options.attempts ?? 3),
    backoff: options.backoffMs ?? ((n: number) => 200 * 2 ** (n - 1)),
    timeoutMs: options.timeoutMs ?? 10_000,
    shutdownMs: options.shutdownMs ?? 2000,
  };
}

/** Start an exporter. */
export function createSpanExporter(options: SpanExporterOptions): SpanExporter {
  // Long because: a closure-based exporter whose enqueue, flush and shutdown share the queue, the
  // timer and the drop count.
  const { maxQueue, maxBatch, delayMs, attempts, backoff, timeoutMs, shutdownMs } = limitsOf(
    options,
  );
  const headers = { "content-type": "application/json", ...(options.headers ?? {}) };
  const queue: OtlpSpan[] = [];
  const stats: ExportStats = { sent: 0, dropped: 0 };
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | null = null;
  let stopping = false;
  let stopped = false;
  // Aborted at the shutdown deadline: in-flight requests and backoff waits end at once.
  const halt = new AbortController();
  const wake = new AbortController();

  const fail = (why: string) => {
    if (stats.failure !== undefined) return;
    stats.failure = why;
    options.warn(
      `telemetry: cannot export spans to ${shownEndpoint(options.url)}: ${
        withEndpointShown(why, options.url)
      }; spans are dropped ` +
        `(the count is reported at exit) and tasks go on`,
    );
  };

  const pause = (ms: number) => pauseUnless(wake.signal, ms);

  async function send(batch: OtlpSpan[]): Promise<void> {
    const body = JSON.stringify(exportRequest(batch, options.resource));
    let why = "";
    const tries = stopping ? 1 : attempts;
    for (let n = 1; n <= tries; n++) {
      if (halt.signal.aborted) break;
      const posted = await postOnce(options.url, headers, body, halt.signal, timeoutMs);
      if (posted.ok) {
        stats.sent += batch.length;
        return;
      }
      why = posted.why;
      if (!posted.retry) break;
      if (n < tries && !stopping) await pause(backoff(n));
    }
    stats.dropped += batch.length;
    fail(why || "the export was stopped");
  }

  function drain(): void {
    if (running || queue.length === 0) return;
    running = (async () => {
      while (queue.length > 0 && !halt.signal.aborted) await send(queue.splice(0, maxBatch));
    })().finally(() => {
      running = null;
      if (!halt.signal.aborted && queue.length >= maxBatch) drain();
    });
  }

  function schedule(): void {
    if (queue.length >= maxBatch) {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      drain();
      return;
    }
    if (timer !== undefined) return;
    const t = setTimeout(() => {
      timer = undefined;
      drain();
    }, delayMs);
    // A pending batch never keeps the process alive; shutdown sends it.
    Deno.unrefTimer(t);
    timer = t;
  }

  return {
    push(spans) {
      if (stopped) {
        stats.dropped += spans.length;
        return;
      }
      for (const span of spans) {
        if (queue.length >= maxQueue) {
          stats.dropped++;
          fail(`more than ${maxQueue} spans are waiting`);
        } else queue.push(span);
      }
      if (spans.length > 0) schedule();
    },
    async shutdown() {
      if (stopped) return { ...stats };
      stopped = true;
      stopping = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      wake.abort();
      let deadline: ReturnType<typeof setTimeout> | undefined;
      const expired = new Promise<void>((resolve) => {
        deadline = setTimeout(resolve, shutdownMs);
      });
      const finish = (async () => {
        while (running || queue.length > 0) {
          drain();
          await running;
        }
      })();
      await Promise.race([finish, expired]);
      clearTimeout(deadline);
      if (running || queue.length > 0) {
        fail(`the collector did not answer within ${shutdownMs} ms at exit`);
        halt.abort();
        stats.dropped += queue.length;
        queue.length = 0;
        await finish.catch(() => {});
      }
      return { ...stats };
    },
  };
}
