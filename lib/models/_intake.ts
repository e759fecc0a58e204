/**
 * What one response's bytes become: framed as server-sent events (or
 * collected as a plain JSON body), parsed by the wire module and translated
 * into OmniMessage payloads, handed to `take` as they come. The read loop
 * (./_pump.ts) feeds it one network read at a time.
 *
 * One server-sent event is held up to {@linkcode MAX_SSE_EVENT} characters
 * and a plain JSON body up to {@linkcode MAX_JSON_BODY} bytes; past either
 * the request fails (not retried) without reading the rest.
 *
 * @module
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { ModelPayload } from "../protocol/types.ts";
import { classifyStreamError, describeError, type RequestTarget } from "./classify.ts";
import type { ModelOutcome } from "./outcome.ts";
import type { Translator } from "./translate.ts";
import type { SseEvent, WireDelta, WireModule } from "./wire.ts";
import { TextBuffer } from "./_text_buffer.ts";
import { jsonShapeError, MAX_JSON_BODY, MAX_SSE_EVENT, mib, TOO_LARGE_CODE } from "./limits.ts";

/** One response's intake. */
export interface Intake {
  /** Whether the response is server-sent events (else a plain JSON body). */
  readonly sse: boolean;
  /**
   * Take one read. Returns how many events it completed, and whether any
   * payload came of them; `over` when the response is to be read no further
   * (a limit, or an error the translator stopped at).
   */
  read(bytes: Uint8Array): { events: number; progressed: boolean; over: boolean };
  /**
   * Characters of the server-sent event under way (read since the last one ended), or bytes of
   * a plain body read: a body is held whole until it ends, so it takes the room for large events
   * as one does (eight bodies of 30 MB at once went past it: 431 MB, attack round 25 bounded C11).
   */
  assembling(): number;
  /** The stream ended: the outcome from what came (a limit passed, a body that does not parse, …). */
  end(target: RequestTarget): ModelOutcome;
}

/** An intake of `response` for `module`, its payloads handed to `take`. */
export function createIntake(
  module: WireModule,
  response: Response,
  translator: Translator,
  take: (ms: ModelPayload[]) => void,
): Intake {
  // Long because: the SSE framer, the wire parser and the translator feed each other through
  // shared locals; each inner function is short.
  const decoder = new TextDecoder();
  const ctype = response.headers.get("content-type") ?? "";
  const sse = ctype.includes("event-stream") || !ctype.includes("json");
  const wire = module.createParser();
  const events: SseEvent[] = [];
  let sinceEvent = 0;
  let tooLarge: string | undefined;
  const framer = createParser({
    onEvent: (m: EventSourceMessage) => {
      sinceEvent = 0;
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
  let progressed = false;
  const feed = (deltas: WireDelta[]): void => {
    for (const d of deltas) {
      const out = translator.push(d);
      if (out.length > 0) {
        progressed = true;
        take(out);
      }
      if (translator.state.error) {
        stopped = true;
        return;
      }
    }
  };
  const drain = (): number => {
    const n = events.length;
    for (const ev of events) {
      sawEvent = true;
      const costly = jsonShapeError(ev.data, "an event");
      if (costly) {
        // Judged before the wire parser parses it: not parsed at all.
        tooLarge = costly.message;
        stopped = true;
        break;
      }
      feed(wire.push(ev));
      if (stopped) break;
    }
    events.length = 0;
    return n;
  };
  const readBody = (bytes: Uint8Array) => {
    bodyBytes += bytes.length;
    if (bodyBytes > MAX_JSON_BODY) {
      tooLarge = `The model's response body is larger than ${mib(MAX_JSON_BODY)}; ` +
        "penguin stopped reading it (a limit on what one response may hold)";
    } else body.append(decoder.decode(bytes, { stream: true }));
    // A body is judged whole: the time bound applies, not the one on progress.
    return { events: 0, progressed: true, over: tooLarge !== undefined };
  };
  const endBody = (target: RequestTarget): ModelOutcome | undefined => {
    body.append(decoder.decode());
    let json: unknown;
    try {
      const text = body.text();
      body.clear();
      const costly = jsonShapeError(text, "a body");
      if (costly) return classifyStreamError(costly, target);
      json = JSON.parse(text);
    } catch (e) {
      return {
        status: "malformed",
        error_message: `Cannot parse the response body as JSON: ${describeError(e)}`,
      };
    }
    sawEvent = true;
    feed(module.parseBody(json));
    return undefined;
  };
  return {
    sse,
    read(bytes) {
      if (!sse) return readBody(bytes);
      progressed = false;
      const text = decoder.decode(bytes, { stream: true });
      sinceEvent += text.length; // an event ending in the feed sets it to 0 (the rest uncounted)
      framer.feed(text);
      const n = drain();
      return { events: n, progressed, over: stopped || tooLarge !== undefined };
    },
    assembling: () => sse ? sinceEvent : bodyBytes, // a body is one event (round 25 C11)
    end(target) {
      if (tooLarge !== undefined) {
        return classifyStreamError({ message: tooLarge, code: TOO_LARGE_CODE }, target);
      }
      if (!stopped && !sse) {
        const bad = endBody(target);
        if (bad) return bad;
      } else if (!stopped) {
        framer.reset({ consume: true });
        drain();
        if (!stopped) feed(wire.end());
      }
      return finalOutcome(translator, sawEvent, target);
    },
  };
}

/** The outcome of a stream that ended (or stopped at an error) after `sawEvent` events or none. */
export function finalOutcome(
  t: Translator,
  sawEvent: boolean,
  target: RequestTarget,
): ModelOutcome {
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
