/**
 * The shared streaming driver: one model request over `fetch`, framed with
 * `eventsource-parser`, parsed by the protocol's wire module and translated
 * into OmniMessage partials and complete messages.
 *
 * Failures are values, never throws: the stream always ends with one
 * `{kind: "end", outcome}` item, classified per §5.12. On a non-completed
 * outcome open segments are closed with that status and no usage is yielded.
 *
 * @module
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { ModelPayload } from "../protocol/types.ts";
import {
  classifyException,
  classifyHttpError,
  classifyStreamError,
  describeError,
  type RequestTarget,
} from "./classify.ts";
import { displayUrl, failureHeadline, hostOf } from "./failure.ts";
import type { ModelOutcome, ModelStreamItem } from "./outcome.ts";
import { wireModule } from "./protocols/mod.ts";
import type { ToolCallIds } from "./tool_call_ids.ts";
import { historyChars, jsonBodyStream } from "./_json_body.ts";
import { createTranslator, type Translator } from "./translate.ts";
import type { SseEvent, WireDelta, WireModule, WireRequest } from "./wire.ts";

/** Histories with more content characters than this are sent as a streamed body. */
const STREAM_BODY_CHARS = 8 * 1024 * 1024;

/** Default idle timeout between upstream events (§5.10). */
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

/** Most bytes of an HTTP error body read for its message. */
const MAX_ERROR_BODY = 64 * 1024;

/** Options of {@linkcode streamModel}. */
export interface StreamModelOptions {
  /** User abort: cancels the HTTP request at once; the outcome is `aborted`. */
  signal?: AbortSignal;
  /** Longest wait for the next upstream bytes (default 120000; ≤ 0 disables). */
  idleTimeoutMs?: number;
  /** The fetch implementation (default: global `fetch`). */
  fetch?: typeof fetch;
  /** Session-wide tool-call id set (default: a fresh one per request). */
  toolCallIds?: ToolCallIds;
  /** Override the wire module chosen by `req.endpoint.protocol`. */
  module?: WireModule;
}

class Idle extends Error {
  override name = "IdleTimeout";
}

/**
 * Stream one model request. Yields message items (partials, and each complete
 * message right after its partial stop), then one usage item when the outcome
 * is completed, then the `end` item. Never throws.
 */
export async function* streamModel(
  req: WireRequest,
  opts: StreamModelOptions = {},
): AsyncGenerator<ModelStreamItem> {
  const idleMs = opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const translator = createTranslator(opts.toolCallIds);
  const ctl = new AbortController();
  const user = opts.signal;
  const onUserAbort = () => ctl.abort(user?.reason);
  user?.addEventListener("abort", onUserAbort, { once: true });
  if (user?.aborted) ctl.abort(user.reason);
  let idleFired = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    clearTimeout(timer);
    if (idleMs > 0) {
      timer = setTimeout(() => {
        idleFired = true;
        ctl.abort(new Idle(`No data from the provider for ${idleMs} ms (idle timeout)`));
      }, idleMs);
    }
  };
  const disarm = () => clearTimeout(timer);
  const aborted = new Promise<never>((_, reject) => {
    const fail = () => reject(ctl.signal.reason);
    if (ctl.signal.aborted) fail();
    else ctl.signal.addEventListener("abort", fail, { once: true });
  });
  aborted.catch(() => {});
  const race = <T>(p: Promise<T>): Promise<T> => Promise.race([p, aborted]);

  // Where the request goes, once built: names the host in every failure.
  let target: RequestTarget = {};
  let host: string | undefined;
  const interrupted = (): ModelOutcome | undefined => {
    if (user?.aborted) {
      return {
        status: "aborted",
        error_message: "Request aborted by the user",
        failure: "aborted",
      };
    }
    if (idleFired) {
      const idle = `No data from the provider for ${idleMs} ms (idle timeout)`;
      return {
        status: "timeout",
        error_message: host === undefined
          ? idle
          : `${failureHeadline("timeout", { host, reason: `idle ${idleMs} ms` })}: ${idle}`,
        failure: "timeout",
        ...(host !== undefined ? { host } : {}),
      };
    }
    return undefined;
  };

  const pending: ModelPayload[] = [];
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;

  async function* run(): AsyncGenerator<ModelStreamItem, ModelOutcome> {
    let module: WireModule;
    let http;
    try {
      module = opts.module ?? wireModule(req.endpoint.protocol);
      http = module.buildRequest(req);
    } catch (e) {
      const ep = req.endpoint;
      return {
        status: "failed",
        permanent: true,
        error_message:
          `Cannot build the ${ep.protocol} request for ${ep.provider}/${ep.model_id}: ${
            describeError(e)
          }`,
      };
    }
    target = { url: http.url };
    host = hostOf(http.url);
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
    const early = interrupted();
    if (early) return early;
    const doFetch = opts.fetch ?? fetch;
    let res: Response;
    arm();
    try {
      res = await race(doFetch(http.url, {
        method: "POST",
        headers: http.headers,
        // A very large history is streamed rather than built as one string.
        body: http.json !== undefined && historyChars(req.history) > STREAM_BODY_CHARS
          ? jsonBodyStream(http.json)
          : http.body,
        signal: ctl.signal,
      }));
    } catch (e) {
      return interrupted() ?? classifyException(e, target);
    } finally {
      disarm();
    }
    if (!res.body) {
      return {
        status: "malformed",
        error_message: "Streaming response yielded no events (no body)",
      };
    }
    reader = res.body.getReader();
    const decoder = new TextDecoder();

    if (!res.ok) {
      let text = "";
      try {
        while (text.length < MAX_ERROR_BODY) {
          arm();
          const r = await race(reader.read());
          disarm();
          if (r.done) break;
          text += decoder.decode(r.value, { stream: true });
        }
      } catch {
        // keep what arrived; the status says enough
      } finally {
        disarm();
      }
      return interrupted() ??
        classifyHttpError(
          res.status,
          module.parseError(res.status, text),
          res.headers.get("retry-after"),
          target,
        );
    }

    const ctype = res.headers.get("content-type") ?? "";
    const sse = ctype.includes("event-stream") || !ctype.includes("json");
    const wire = module.createParser();
    const events: SseEvent[] = [];
    const framer = createParser({
      onEvent: (m: EventSourceMessage) => {
        events.push(m.event === undefined ? { data: m.data } : { event: m.event, data: m.data });
      },
    });
    let body = "";
    let sawEvent = false;
    let stopped = false;
    const feed = (deltas: WireDelta[]): void => {
      for (const d of deltas) {
        pending.push(...translator.push(d));
        if (translator.state.error) {
          stopped = true;
          return;
        }
      }
    };
    const drain = (): void => {
      for (const ev of events) {
        sawEvent = true;
        feed(wire.push(ev));
        if (stopped) break;
      }
      events.length = 0;
    };
    while (!stopped) {
      let r: ReadableStreamReadResult<Uint8Array>;
      arm();
      try {
        r = await race(reader.read());
      } catch (e) {
        return interrupted() ?? classifyException(e, target);
      } finally {
        disarm();
      }
      if (r.done) break;
      const chunk = decoder.decode(r.value, { stream: true });
      if (!sse) {
        body += chunk;
        continue;
      }
      framer.feed(chunk);
      drain();
      for (const m of pending.splice(0)) yield { kind: "message", message: m };
      if (user?.aborted) break;
    }
    const stop = interrupted();
    if (stop) {
      return translator.state.finish === undefined ? stop : finalOutcome(translator, true, target);
    }
    if (!stopped && !sse) {
      body += decoder.decode();
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch (e) {
        return {
          status: "malformed",
          error_message: `Cannot parse the response body as JSON: ${describeError(e)}`,
        };
      }
      sawEvent = true;
      feed(module.parseBody(json));
    } else if (!stopped) {
      framer.reset({ consume: true });
      drain();
      if (!stopped) feed(wire.end());
    }
    return finalOutcome(translator, sawEvent, target);
  }

  let outcome: ModelOutcome;
  try {
    outcome = yield* run();
  } catch (e) {
    outcome = {
      status: "failed",
      error_message: `The model stream stopped unexpectedly: ${describeError(e)}`,
    };
  } finally {
    disarm();
    user?.removeEventListener("abort", onUserAbort);
    if (reader) reader.cancel().catch(() => {});
  }
  if (outcome.status === "malformed" && host !== undefined) {
    // Name the host like every other failure (./failure.ts).
    const text = outcome.error_message ?? "unreadable response";
    if (!text.startsWith("malformed response from ")) {
      outcome.error_message = `${failureHeadline("malformed", { host })}: ${text}`;
    }
    outcome.failure = "malformed";
    outcome.host = host;
  }
  for (const m of pending.splice(0)) yield { kind: "message", message: m };
  for (const m of translator.close(outcome.status)) yield { kind: "message", message: m };
  if (outcome.status === "completed") {
    const usage = translator.state.usage ?? { cache_read: 0, cache_write: 0, output: 0, total: 0 };
    yield { kind: "usage", usage };
  }
  if (translator.state.finish !== undefined) outcome.finish_reason ??= translator.state.finish;
  yield { kind: "end", outcome };
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

function finalOutcome(t: Translator, sawEvent: boolean, target: RequestTarget): ModelOutcome {
  const s = t.state;
  if (s.error) return classifyStreamError(s.error, target);
  if (!sawEvent) {
    return { status: "malformed", error_message: "Streaming response yielded no events" };
  }
  if (s.finish === undefined) {
    return {
      status: "malformed",
      error_message: "The stream ended without a finish event (truncated response)",
    };
  }
  return { status: "completed" };
}
