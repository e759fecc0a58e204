/**
 * Pumping one open response: read its bytes (each read guarded by the idle
 * timeout), frame them as SSE events (or collect a plain JSON body), parse
 * them with the wire module and translate them into OmniMessage payloads,
 * handed out as they complete. Returns the outcome of the stream.
 *
 * One server-sent event is held up to {@linkcode MAX_SSE_EVENT} characters
 * and a plain JSON body up to {@linkcode MAX_JSON_BODY} bytes; past either
 * the request fails (not retried) without reading the rest.
 *
 * The partial deltas of one read are merged (consecutive text, reasoning or
 * one call's argument deltas become one): the consumer of a turn takes
 * messages at its own pace, and a model streaming a few characters an event
 * would otherwise queue one message object per event.
 *
 * @module
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { ModelPayload } from "../protocol/types.ts";
import { classifyException, classifyStreamError, describeError } from "./classify.ts";
import type { ModelOutcome, ModelStreamItem } from "./outcome.ts";
import type { Translator } from "./translate.ts";
import type { SseEvent, WireDelta } from "./wire.ts";
import type { OpenedRequest, RequestSite } from "./_open.ts";
import type { RequestGuard } from "./_request_guard.ts";
import { TextBuffer } from "./_text_buffer.ts";
import { MAX_JSON_BODY, MAX_SSE_EVENT, mib, TOO_LARGE_CODE } from "./limits.ts";

/**
 * Read `opened` to its end through `translator`. Payloads go to `pending`
 * and are yielded after each read; what is still pending when this returns
 * (or throws) is the caller's to yield.
 */
export async function* pumpResponse(
  opened: OpenedRequest,
  translator: Translator,
  guard: RequestGuard,
  site: RequestSite,
  pending: ModelPayload[],
): AsyncGenerator<ModelStreamItem, ModelOutcome> {
  // Long because: one read loop over the response body; the SSE framer, the wire parser and the
  // translator feed each other through shared locals.
  const { module, response, reader } = opened;
  const decoder = new TextDecoder();
  const ctype = response.headers.get("content-type") ?? "";
  const sse = ctype.includes("event-stream") || !ctype.includes("json");
  const wire = module.createParser();
  const events: SseEvent[] = [];
  let tooLarge: string | undefined;
  const framer = createParser({
    onEvent: (m: EventSourceMessage) => {
      events.push(m.event === undefined ? { data: m.data } : { event: m.event, data: m.data });
    },
    onError: (e) => {
      if (e.type === "max-buffer-size-exceeded") {
        tooLarge = `The model's response has an event of more than ${mib(MAX_SSE_EVENT)}; ` +
          "penguin stopped reading it (a limit on what one response may hold)";
      }
    },
    maxBufferSize: MAX_SSE_EVENT,
  });
  const body = new TextBuffer();
  let bodyBytes = 0;
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
    guard.arm();
    try {
      r = await guard.race(reader.read());
    } catch (e) {
      return guard.interrupted(site.host) ?? classifyException(e, site.target);
    } finally {
      guard.disarm();
    }
    if (r.done) break;
    if (!sse) {
      bodyBytes += r.value.length;
      if (bodyBytes > MAX_JSON_BODY) {
        tooLarge = `The model's response body is larger than ${mib(MAX_JSON_BODY)}; ` +
          "penguin stopped reading it (a limit on what one response may hold)";
        break;
      }
      body.append(decoder.decode(r.value, { stream: true }));
      continue;
    }
    framer.feed(decoder.decode(r.value, { stream: true }));
    drain();
    if (tooLarge !== undefined) break;
    for (const m of coalesce(pending.splice(0))) yield { kind: "message", message: m };
    if (guard.userAborted) break;
  }
  const stop = guard.interrupted(site.host);
  if (stop) {
    return translator.state.finish === undefined ? stop : finalOutcome(translator, true, site);
  }
  if (tooLarge !== undefined) {
    return classifyStreamError({ message: tooLarge, code: TOO_LARGE_CODE }, site.target);
  }
  if (!stopped && !sse) {
    body.append(decoder.decode());
    let json: unknown;
    try {
      const text = body.text();
      body.clear();
      json = JSON.parse(text);
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
  return finalOutcome(translator, sawEvent, site);
}

/** The text a partial delta carries, when `m` is one that can merge with `prev`. */
function mergeable(prev: ModelPayload | undefined, m: ModelPayload): string | undefined {
  if (prev === undefined || prev.type !== m.type) return undefined;
  if (!("event_type" in m) || m.event_type !== "delta") return undefined;
  if (!("event_type" in prev) || prev.event_type !== "delta") return undefined;
  if (m.type === "partial_text") return m.text;
  if (m.type === "partial_thinking") return m.thinking;
  if (m.type === "partial_tool_call" && prev.type === "partial_tool_call") {
    return prev.tool_call_id === m.tool_call_id ? m.arguments : undefined;
  }
  return undefined;
}

/** `ms` with runs of consecutive partial deltas of one segment or call merged into one. */
export function coalesce(ms: ModelPayload[]): ModelPayload[] {
  const out: ModelPayload[] = [];
  let run: string[] = [];
  const flush = () => {
    const last = out.at(-1);
    if (run.length > 1 && last !== undefined) {
      const joined = run.join("");
      if (last.type === "partial_text") out[out.length - 1] = { ...last, text: joined };
      else if (last.type === "partial_thinking") {
        out[out.length - 1] = { ...last, thinking: joined };
      } else if (last.type === "partial_tool_call") {
        out[out.length - 1] = { ...last, arguments: joined };
      }
    }
    run = [];
  };
  for (const m of ms) {
    const piece = mergeable(out.at(-1), m);
    if (piece !== undefined) {
      run.push(piece);
      continue;
    }
    flush();
    out.push(m);
    const own = mergeable(m, m);
    if (own !== undefined) run.push(own);
  }
  flush();
  return out;
}

function finalOutcome(t: Translator, sawEvent: boolean, site: RequestSite): ModelOutcome {
  const s = t.state;
  if (s.error) return classifyStreamError(s.error, site.target);
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
