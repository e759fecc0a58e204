/**
 * The scripted model server: a 127.0.0.1 HTTP server that answers model
 * requests of all four wire protocols from a script of {@linkcode ScriptedTurn}s,
 * recording every request, and misbehaving on demand (HTTP errors, delays,
 * stalls, disconnects, malformed chunks).
 *
 * @module
 */
import type { ModelEndpoint, WireProtocol } from "../../../lib/models/wire.ts";
import { ENCODERS } from "./encoders.ts";
import type { Encoder, ScriptedTurn } from "./script.ts";

/** One request the server received. */
export interface RecordedRequest {
  /** HTTP method. */
  method: string;
  /** Path and query, e.g. `/v1beta/models/m:streamGenerateContent?alt=sse`. */
  path: string;
  /** Request headers, lower-case names. */
  headers: Record<string, string>;
  /** Parsed JSON body (the raw text when it is not JSON). */
  body: unknown;
  /** The protocol whose path matched, if any. */
  protocol?: WireProtocol | undefined;
  /** The model named in the body or path. */
  model: string;
  /** 0-based arrival index. */
  index: number;
  /** Resolves when the client went away before the response was complete. */
  disconnected: Promise<void>;
  /** Whether the client went away before the response was complete. */
  clientGone: boolean;
  /** When the request arrived (`performance.timeOrigin + performance.now()`, ms). */
  arrivedAt?: number;
  /** When the response was completely sent (same clock), once it was. */
  respondedAt?: number;
}

/** Pick the turn for a request (or undefined = script exhausted). */
export type TurnHandler = (
  req: RecordedRequest,
  index: number,
) => ScriptedTurn | undefined | Promise<ScriptedTurn | undefined>;

/** Options of {@linkcode startModelServer}. */
export interface ModelServerOptions {
  /** Turns served in order, one per request. */
  turns?: ScriptedTurn[];
  /** Or: a function of the request. */
  handler?: TurnHandler;
  /** Longest a stalled response is held open (default 30000 ms). */
  maxHoldMs?: number;
  /** Requests served at most in handler mode (default 200); later ones get a 500. */
  maxRequests?: number;
}

/** A running scripted server. */
export interface ModelServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** The bound port. */
  port: number;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** The base URL a wire module should use for `protocol`. */
  baseUrl(protocol: WireProtocol): string;
  /** An endpoint pointing at this server. */
  endpoint(protocol: WireProtocol, model?: string, apiKey?: string): ModelEndpoint;
  /** Stop serving (releases held responses) and wait until closed. */
  close(): Promise<void>;
}

/** Text of a malformed SSE chunk. */
export const MALFORMED_CHUNK = 'data: {"scripted_malformed_chunk": tru\n\n';

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

function modelOf(pathname: string, body: unknown): string {
  if (
    typeof body === "object" && body !== null &&
    typeof (body as { model?: unknown }).model === "string"
  ) {
    return (body as { model: string }).model;
  }
  return /\/models\/([^/:]+)/.exec(pathname)?.[1] ?? "";
}

/** Split an SSE body into events, each keeping its terminating blank line. */
export function splitEvents(body: string): string[] {
  return body.match(/[\s\S]*?(?:\r\n\r\n|\n\n)|[\s\S]+$/g) ?? [];
}

function jsonResponse(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  return new Response(typeof body === "string" ? body : JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** Start a scripted server on 127.0.0.1 (random port). */
export function startModelServer(opts: ModelServerOptions = {}): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const queue = [...(opts.turns ?? [])];
  const scripted = queue.length;
  const maxHold = opts.maxHoldMs ?? 30_000;
  const maxRequests = opts.maxRequests ?? 200;
  const stopping = new AbortController();
  const enc = new TextEncoder();

  async function pick(rec: RecordedRequest): Promise<ScriptedTurn | undefined> {
    if (opts.handler) {
      return rec.index < maxRequests ? await opts.handler(rec, rec.index) : undefined;
    }
    return queue.shift();
  }

  function stream(
    turn: ScriptedTurn,
    events: string[],
    rec: RecordedRequest,
    gone: () => void,
    selfError: () => void,
  ): Response {
    let cancelled = false;
    const limit = Math.min(
      events.length,
      turn.stall_after ?? Infinity,
      turn.disconnect_after ?? Infinity,
    );
    let i = 0;
    let held = false;
    // Pull-based, one event per pull: an event is handed to the socket before
    // the next pull, so a scripted disconnect or stall happens after exactly
    // `limit` events have been delivered.
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (cancelled) return;
        if (turn.hold_after !== undefined && i === turn.hold_after.events && !held) {
          held = true;
          await Promise.race([turn.hold_after.until.catch(() => {}), rec.disconnected]);
          if (cancelled) return;
        }
        if (i < limit) {
          c.enqueue(enc.encode(i === turn.malformed_at ? MALFORMED_CHUNK : events[i]!));
          i++;
          return;
        }
        if (turn.stall_after !== undefined && turn.stall_after < events.length) {
          await Promise.race([sleep(maxHold, stopping.signal), rec.disconnected]);
          if (!cancelled) {
            selfError();
            c.error(new Error("scripted stall ended"));
          }
          return;
        }
        if (turn.disconnect_after !== undefined && turn.disconnect_after < events.length) {
          selfError();
          c.error(new Error("scripted disconnect"));
          return;
        }
        c.close();
      },
      cancel() {
        cancelled = true;
        gone();
      },
    }, { highWaterMark: 0 });
    return new Response(body, {
      headers: {
        "content-type": turn.content_type ?? "text/event-stream",
        "cache-control": "no-cache",
      },
    });
  }

  async function serve(req: Request, info: Deno.ServeHandlerInfo): Promise<Response> {
    const arrivedAt = performance.timeOrigin + performance.now();
    const url = new URL(req.url);
    const text = await req.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // keep the text
    }
    const headers: Record<string, string> = {};
    req.headers.forEach((v, k) => (headers[k] = v));
    const encoder: Encoder | undefined = ENCODERS.find((e) => e.matches(url.pathname));
    let gone!: () => void;
    const disconnected = new Promise<void>((r) => (gone = r));
    const rec: RecordedRequest = {
      method: req.method,
      path: url.pathname + url.search,
      headers,
      body,
      protocol: encoder?.protocol,
      model: modelOf(url.pathname, body),
      index: requests.length,
      disconnected,
      clientGone: false,
    };
    let selfErrored = false;
    const markGone = () => {
      if (selfErrored) return;
      rec.clientGone = true;
      gone();
    };
    rec.arrivedAt = arrivedAt;
    info.completed.then(
      () => (rec.respondedAt = performance.timeOrigin + performance.now()),
      () => markGone(),
    );
    requests.push(rec);
    if (!encoder) {
      return jsonResponse(404, {
        error: { message: `scripted model server: no protocol serves ${url.pathname}` },
      });
    }
    const turn = await pick(rec);
    if (!turn) {
      const n = opts.handler ? "its handler" : `${scripted} scripted turn(s)`;
      return jsonResponse(500, {
        error: {
          message: `scripted model server: script exhausted after ${n}`,
          type: "script_exhausted",
        },
      });
    }
    if (turn.delay_ms) await Promise.race([sleep(turn.delay_ms, stopping.signal), disconnected]);
    if (turn.http_error) {
      const e = turn.http_error;
      const errBody = e.body ??
        encoder.httpErrorBody(e.status, e.message ?? "scripted error", e.code);
      return jsonResponse(e.status, errBody, e.headers);
    }
    if (turn.raw_body !== undefined) {
      const raw = typeof turn.raw_body === "string"
        ? enc.encode(turn.raw_body)
        : new Uint8Array(turn.raw_body);
      if (
        turn.stall_after === undefined && turn.disconnect_after === undefined &&
        turn.malformed_at === undefined
      ) {
        return new Response(raw, {
          headers: { "content-type": turn.content_type ?? "text/event-stream" },
        });
      }
      const events = splitEvents(new TextDecoder().decode(raw));
      return stream(turn, events, rec, markGone, () => (selfErrored = true));
    }
    if (turn.event_source !== undefined) return streamSource(turn.event_source(), markGone);
    const events = turn.raw_events ?? encoder.encodeTurn(turn, rec.model);
    return stream(turn, events, rec, markGone, () => (selfErrored = true));
  }

  /** Events made as they are pulled, some 16 KiB of them per pull. */
  function streamSource(source: Iterator<string>, gone: () => void): Response {
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        const batch: string[] = [];
        let size = 0;
        for (let next = source.next();; next = source.next()) {
          if (next.done) {
            if (size > 0) c.enqueue(enc.encode(batch.join("")));
            c.close();
            return;
          }
          batch.push(next.value);
          size += next.value.length;
          if (size >= 16 * 1024) break;
        }
        c.enqueue(enc.encode(batch.join("")));
      },
      cancel() {
        gone();
      },
    }, { highWaterMark: 0 });
    return new Response(body, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  }

  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: () => {},
      onError: (e) =>
        jsonResponse(500, { error: { message: `scripted model server failed: ${e}` } }),
    }, serve);
    const port = server.addr.port;
    const url = `http://127.0.0.1:${port}`;
    const baseUrl = (p: WireProtocol) =>
      p === "gemini" ? `${url}/v1beta` : p === "anthropic-messages" ? url : `${url}/v1`;
    resolve({
      url,
      port,
      requests,
      baseUrl,
      endpoint: (protocol, model = "scripted-model", apiKey) => {
        const ep: ModelEndpoint = {
          provider: "scripted",
          model_id: model,
          protocol,
          base_url: baseUrl(protocol),
        };
        if (apiKey !== undefined) ep.api_key = apiKey;
        return ep;
      },
      async close() {
        stopping.abort();
        await server.shutdown();
      },
    });
  });
}

/** Run `fn` with a scripted server started from `opts`, closed afterwards. */
export async function withModelServer<T>(
  opts: ModelServerOptions,
  fn: (server: ModelServer) => Promise<T>,
): Promise<T> {
  const server = await startModelServer(opts);
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}
