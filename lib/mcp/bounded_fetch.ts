/**
 * The `fetch` penguin's HTTP MCP transports use: every response body of
 * the server is measured as it streams, before the SDK parses any of it.
 *
 * - A JSON body (one message, or a batch) is held to
 *   {@linkcode MAX_MESSAGE_CHARS} characters and its JSON shape is checked
 *   (`jsonShapeProblem`) before it is handed on.
 * - An event stream is cut into events (`boundedSseEvents`); each event is
 *   held to {@linkcode MAX_MESSAGE_CHARS} characters, its data's JSON shape
 *   is checked, and only then is it handed on, re-written with `\n` line
 *   ends. The whole stream is held to {@linkcode MAX_BODY_CHARS}.
 * - Any other body (an error page) is held to {@linkcode MAX_MESSAGE_CHARS}.
 *
 * Past a bound the request is aborted, the body the SDK reads fails, and
 * `onRefuse` is told why (the caller closes the connection). A request the
 * SDK gives up on (a tool call's timeout, the user's interrupt) is aborted
 * too: the SDK then sends `notifications/cancelled` naming its id, and that
 * request's HTTP response is stopped.
 *
 * A message under way (a JSON body, one event) that grows past
 * `LARGE_ANSWER_CHARS` waits for the process's answer gate before more of
 * the body is read (lib/mcp/answer_gate.ts); once it is handed on, the
 * gate's slot is left at the connection's desk for the call it answers.
 *
 * @module
 */
import { jsonShapeProblem } from "../protocol/json_shape.ts";
import {
  type AnswerDesk,
  type AnswerGate,
  createAnswerDesk,
  LARGE_ANSWER_CHARS,
  MCP_ANSWER_GATE,
  type Release,
} from "./answer_gate.ts";
import { boundedSseEvents } from "./sse_events.ts";
import { MAX_MESSAGE_CHARS } from "./stdio_transport.ts";

export { MAX_MESSAGE_CHARS };

/**
 * Most characters one response body may carry in all, in an event stream
 * of many messages: 24 Mi, room for one whole message of
 * {@linkcode MAX_MESSAGE_CHARS} and 8 Mi of others (progress notices are
 * small). Each event of 16 Mi is decoded, checked, re-encoded and parsed
 * again by the SDK; at 64 Mi in all, three such notifications and a 15 Mi
 * result took penguin to 350–480 MB.
 */
export const MAX_BODY_CHARS = 24 * 1024 * 1024;

/** The bounds a server's bodies are held to. */
export interface BodyBounds {
  /** Characters of one message (a JSON body, one event). */
  maxMessageChars: number;
  /** Characters of one response body in all. */
  maxBodyChars: number;
}

/** penguin's bounds. */
export const BODY_BOUNDS: Readonly<BodyBounds> = Object.freeze({
  maxMessageChars: MAX_MESSAGE_CHARS,
  maxBodyChars: MAX_BODY_CHARS,
});

/** The `fetch` the SDK's HTTP transports accept. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** How a body is read. */
type BodyKind = "json" | "sse" | "other";

function bodyKind(contentType: string | null): BodyKind {
  const essence = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (essence === "application/json") return "json";
  return essence === "text/event-stream" ? "sse" : "other";
}

/** A count of characters for messages: `16 Mi` when whole Mi, else the number. */
function mi(chars: number): string {
  return chars % (1024 * 1024) === 0 ? `${chars / 1024 / 1024} Mi` : String(chars);
}

/** A text transform that hands a JSON body on whole, once it is within the bounds. */
function jsonBody(
  bounds: BodyBounds,
  refuse: (why: string) => void,
  delivered: () => void,
): Transformer<string, string> {
  let parts: string[] = [];
  let chars = 0;
  return {
    transform(chunk) {
      chars += chunk.length;
      if (chars > bounds.maxMessageChars) {
        parts = [];
        return refuse(
          `sent a response longer than ${mi(bounds.maxMessageChars)} characters ` +
            `(the limit of one message)`,
        );
      }
      parts.push(chunk);
    },
    flush(controller) {
      const text = parts.join("");
      parts = [];
      const problem = jsonShapeProblem(text);
      if (problem !== undefined) return refuse(`sent a message with ${problem} (penguin's limit)`);
      controller.enqueue(text);
      delivered();
    },
  };
}

/** A text transform that hands an event stream on one checked event at a time. */
function sseBody(
  bounds: BodyBounds,
  refuse: (why: string) => void,
  delivered: () => void,
): Transformer<string, string> {
  let chars = 0;
  let out: TransformStreamDefaultController<string> | undefined;
  const feed = boundedSseEvents(bounds.maxMessageChars, {
    onEvent({ lines, data }) {
      const problem = data === "" ? undefined : jsonShapeProblem(data);
      if (problem !== undefined) return refuse(`sent a message with ${problem} (penguin's limit)`);
      out?.enqueue(lines.join("\n") + "\n\n");
      delivered();
    },
    onTooLong: () =>
      refuse(
        `sent an event longer than ${mi(bounds.maxMessageChars)} characters ` +
          `(the limit of one message)`,
      ),
  });
  return {
    transform(chunk, controller) {
      chars += chunk.length;
      if (chars > bounds.maxBodyChars) {
        return refuse(
          `sent more than ${mi(bounds.maxBodyChars)} characters in one response (penguin's limit)`,
        );
      }
      out = controller;
      feed(chunk);
    },
  };
}

/** A text transform that passes any other body on, up to the bound of one message. */
function otherBody(
  bounds: BodyBounds,
  refuse: (why: string) => void,
  _delivered: () => void,
): Transformer<string, string> {
  let chars = 0;
  return {
    transform(chunk, controller) {
      chars += chunk.length;
      if (chars > bounds.maxMessageChars) {
        return refuse(
          `sent a response longer than ${mi(bounds.maxMessageChars)} characters ` +
            `(the limit of one message)`,
        );
      }
      controller.enqueue(chunk);
    },
  };
}

const TRANSFORMS = { json: jsonBody, sse: sseBody, other: otherBody };

/** The gate large messages wait for, and where a delivered one's slot is left. */
export interface AnswerHandling {
  gate: AnswerGate;
  desk: AnswerDesk;
}

/** How one body waits for the answer gate. */
interface BodyGate {
  handling: AnswerHandling;
  /** Aborts the wait (the request was aborted). */
  signal: AbortSignal;
  /**
   * The body answers a request of penguin's (it ends with the answer): the
   * slot, once taken, is kept to the end of the body, notifications and
   * all. Else (the stream of a server's own messages) it is kept for one
   * message.
   */
  wholeBody: boolean;
  /** Set by {@linkcode boundedBody}: gives back a slot still held (the body ended or failed). */
  drop?: () => void;
}

/**
 * The body of `response` read through the bounds: a stream that fails
 * (and aborts the request with `abort`) once a bound is passed. A message
 * under way past the large size first waits for `gate`.
 */
function boundedBody(
  body: ReadableStream<Uint8Array>,
  kind: BodyKind,
  bounds: BodyBounds,
  fail: (why: string) => void,
  gate: BodyGate,
): ReadableStream<Uint8Array> {
  let failed = false;
  let controller: TransformStreamDefaultController<string> | undefined;
  let lease: Release | undefined;
  let underWay = 0;
  gate.drop = () => {
    lease?.();
    lease = undefined;
  };
  const refuse = (why: string) => {
    if (failed) return;
    failed = true;
    gate.drop?.();
    fail(why);
    controller?.error(new Error(why));
  };
  const handOn = () => {
    underWay = 0;
    if (lease !== undefined) gate.handling.desk.offer(lease);
    lease = undefined;
  };
  /** A large message of a whole-body holder was handed on: its garbage is collected before more is read. */
  let collectFirst = false;
  const delivered = () => {
    if (!gate.wholeBody) return handOn();
    if (lease !== undefined && underWay > LARGE_ANSWER_CHARS) collectFirst = true;
    underWay = 0;
  };
  const inner = TRANSFORMS[kind](bounds, refuse, delivered);
  const checked = new TransformStream<string, string>({
    start(c) {
      controller = c;
    },
    async transform(chunk, c) {
      if (failed) return;
      if (lease === undefined && underWay + chunk.length > LARGE_ANSWER_CHARS) {
        lease = await gate.handling.gate.acquire(gate.signal);
        if (lease === undefined || failed) return gate.drop?.();
      }
      if (collectFirst) gate.handling.gate.collect();
      collectFirst = false;
      underWay += chunk.length;
      inner.transform!(chunk, c);
    },
    flush: (c) => {
      if (!failed) inner.flush?.(c);
      handOn();
    },
  });
  return body
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(checked)
    .pipeThrough(new TextEncoderStream());
}

/** The JSON-RPC message a request of the SDK carries (its own, small), if any. */
function outgoing(init: RequestInit | undefined): Record<string, unknown> | undefined {
  if (typeof init?.body !== "string") return undefined;
  try {
    const message: unknown = JSON.parse(init.body);
    return typeof message === "object" && message !== null && !Array.isArray(message)
      ? message as Record<string, unknown>
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A `fetch` whose response bodies are held to `bounds`. `onRefuse` is
 * called (once per body) with why a body was refused, worded to follow the
 * server's name: `sent a response longer than 16 Mi characters (…)`.
 *
 * `pending` holds the requests under way, by JSON-RPC id: what stops their
 * HTTP response. An entry leaves it however its body ends: read to the end,
 * refused, failed, or cancelled by the reader. Tests pass their own map to
 * see that.
 */
export function boundedFetch(
  onRefuse: (why: string) => void,
  bounds: Readonly<BodyBounds> = BODY_BOUNDS,
  base: FetchLike = fetch,
  pending: Map<unknown, AbortController> = new Map(),
  handling: AnswerHandling = { gate: MCP_ANSWER_GATE, desk: createAnswerDesk() },
): FetchLike {
  return async (url, init) => {
    const message = outgoing(init);
    if (message?.method === "notifications/cancelled") {
      const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
      pending.get(id)?.abort(new Error("the request was cancelled"));
      pending.delete(id);
    }
    const ac = new AbortController();
    const id = message && "method" in message ? message.id : undefined;
    if (id !== undefined) pending.set(id, ac);
    const done = () => {
      if (pending.get(id) === ac) pending.delete(id);
    };
    const signal = init?.signal ? AbortSignal.any([init.signal, ac.signal]) : ac.signal;
    let response: Response;
    try {
      response = await base(url, { ...init, signal });
    } catch (err) {
      done();
      throw err;
    }
    if (response.body === null) {
      done();
      return response;
    }
    const gate: BodyGate = { handling, signal, wholeBody: id !== undefined };
    const body = boundedBody(
      response.body,
      bodyKind(response.headers.get("content-type")),
      bounds,
      (why) => {
        done();
        ac.abort(new Error(why));
        onRefuse(why);
      },
      gate,
    );
    // `flush` runs when the body ends; `cancel` when the reader cancels it or
    // it fails (a refusal, a network error).
    const end = () => {
      done();
      gate.drop?.();
    };
    const ended = new TransformStream<Uint8Array, Uint8Array>({ flush: end, cancel: end });
    const bounded = new Response(body.pipeThrough(ended), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    // The SDK names a redirect's target relative to the answering URL.
    Object.defineProperty(bounded, "url", { value: response.url });
    return bounded;
  };
}
