/**
 * Opening one model request: build it with the wire module, check the URL,
 * send it, and turn an HTTP error response into its classified outcome
 * (./classify.ts: retryable or not, with the provider's message). What is left is an open 2xx response for the pump (./_pump.ts).
 *
 * @module
 */
import type { WireModule, WireRequest } from "./wire.ts";
import { loadWireModule } from "./protocols/load.ts";
import {
  classifyException,
  classifyHttpError,
  describeError,
  type RequestTarget,
} from "./classify.ts";
import { displayUrl, failureHeadline, hostOf } from "./failure.ts";
import { historyChars, jsonBodyStream } from "./_json_body.ts";
import type { ModelOutcome } from "./outcome.ts";
import type { RequestGuard } from "./_request_guard.ts";
import { type BodyReader, bodyReader } from "./_body_reader.ts";
import { claimWholeBody } from "./_body_room.ts";

/**
 * Release the bytes of a sent request body (built for this request alone)
 * now rather than at the next full garbage collection: fetch has taken its
 * own copy by the time it settles. A long session sends a body the size of its
 * whole history every turn, and V8 frees such buffers only when the one
 * holding them is collected; a body that lived through two young
 * collections (a turn's stream is read meanwhile) waits for a full one, which
 * comes after some 64 MB of them.
 */
function releaseBody(bytes: Uint8Array<ArrayBuffer>): void {
  if (bytes.buffer.resizable || bytes.buffer.detached) return;
  bytes.buffer.transfer(0);
}

/** Most bytes of an HTTP error body read for its message. */
const MAX_ERROR_BODY = 64 * 1024;

/** Where a request went, filled in as it is opened: failures name the host, and the body reader is cancelled at the end. */
export interface RequestSite {
  /** The URL, once built. */
  target: RequestTarget;
  /** Its host, once built. */
  host?: string | undefined;
  /** The response body reader, once there is one. */
  reader?: BodyReader;
}

/** An open 2xx response. */
export interface OpenedRequest {
  /** The wire module that built the request (and parses the response). */
  module: WireModule;
  /** The response. */
  response: Response;
  /** Its body reader (also in the {@linkcode RequestSite}). */
  reader: BodyReader;
}

/** How to open: the fetch implementation and a wire module override. */
export interface OpenOptions {
  /** Default: global `fetch`. */
  fetch?: typeof fetch | undefined;
  /** Default: the module of `req.endpoint.protocol`. */
  module?: WireModule;
}

/** Open `req`: the response to pump, or the outcome that ends the request now. */
export async function openRequest(
  req: WireRequest,
  opts: OpenOptions,
  guard: RequestGuard,
  site: RequestSite,
): Promise<OpenedRequest | ModelOutcome> {
  let module: WireModule;
  let http;
  try {
    module = opts.module ?? await loadWireModule(req.endpoint.protocol);
    http = module.buildRequest(req);
  } catch (e) {
    const ep = req.endpoint;
    return {
      status: "failed",
      permanent: true,
      error_message: `Cannot build the ${ep.protocol} request for ${ep.provider}/${ep.model_id}: ${
        describeError(e)
      }`,
    };
  }
  site.target = { url: http.url };
  site.host = hostOf(http.url);
  const host = site.host;
  const badUrl = checkUrl(http.url);
  if (badUrl !== undefined) {
    return {
      status: "failed",
      permanent: true,
      failure: "bad_url",
      error_message: `${
        failureHeadline("bad_url", { url: http.url, reason: badUrl })
      }: set an http:// or https:// base URL for ${req.endpoint.provider}/${req.endpoint.model_id}`,
      ...(host !== undefined ? { host } : {}),
    };
  }
  const early = guard.interrupted(host);
  if (early) return early;
  const doFetch = opts.fetch ?? fetch;
  // A very large history, or one the process has no room to build whole, is streamed.
  const whole = http.json === undefined ? () => {} : claimWholeBody(historyChars(req.history));
  const streamed = whole === undefined;
  const bytes = streamed ? undefined : http.bytes;
  let response: Response;
  guard.arm();
  try {
    response = await guard.race(doFetch(http.url, {
      method: "POST",
      headers: http.headers,
      body: streamed ? jsonBodyStream(http.json!) : bytes ?? http.body,
      signal: guard.signal,
    }));
  } catch (e) {
    return guard.interrupted(host) ?? classifyException(e, site.target);
  } finally {
    guard.disarm();
    if (bytes !== undefined) releaseBody(bytes);
    whole?.();
  }
  if (!response.body) {
    return { status: "malformed", error_message: "Streaming response yielded no events (no body)" };
  }
  const reader = bodyReader(response.body);
  site.reader = reader;
  if (response.ok) return { module, response, reader };

  const text = await readErrorBody(reader, guard);
  return guard.interrupted(host) ??
    classifyHttpError(
      response.status,
      module.parseError(response.status, text),
      response.headers.get("retry-after"),
      site.target,
    );
}

/** The start of an error response's body (at most {@linkcode MAX_ERROR_BODY} chars; what arrived before a failure). */
async function readErrorBody(
  reader: BodyReader,
  guard: RequestGuard,
): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (text.length < MAX_ERROR_BODY) {
      guard.arm();
      const r = await guard.race(reader.read());
      guard.disarm();
      if (r.done) break;
      text += decoder.decode(r.value, { stream: true });
    }
  } catch {
    // keep what arrived; the status says enough
  } finally {
    guard.disarm();
  }
  return text;
}

/** Why `url` cannot be fetched (not a URL, not http/https), or undefined when it can. */
function checkUrl(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `not a URL: ${JSON.stringify(displayUrl(url))}`;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    return `scheme ${JSON.stringify(u.protocol.replace(/:$/, ""))} is not http or https`;
  }
  return undefined;
}
