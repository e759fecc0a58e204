/**
 * The scripted model: an in-process HTTP server on 127.0.0.1 that speaks the
 * Chat Completions protocol (`POST …/chat/completions`, streamed) and answers
 * every request from a fixed {@linkcode Script}. No key, no network beyond
 * loopback; `penguin demo` points a `scripted` model entry at it.
 *
 * @module
 */
import { chatCompletionEvents } from "./chat_sse.ts";
import { requestOf, type Script } from "./reply.ts";

/** A running scripted model. */
export interface ScriptedModel {
  /** Base URL for a model entry, e.g. `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  /** How many model requests it answered. */
  requests(): number;
  /** Stop serving and wait until the listener is closed. */
  close(): Promise<void>;
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

/** Start the scripted model on a free 127.0.0.1 port. */
export function startScriptedModel(script: Script): ScriptedModel {
  let answered = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = new URL(req.url).pathname;
    if (req.method !== "POST" || !path.endsWith("/chat/completions")) {
      return json(404, {
        error: { message: `the scripted model only serves POST /v1/chat/completions, not ${path}` },
      });
    }
    let body: unknown;
    try {
      body = JSON.parse(await req.text());
    } catch {
      return json(400, { error: { message: "the request body is not JSON" } });
    }
    const request = requestOf(body);
    const reply = script(request);
    const model = typeof (body as { model?: unknown }).model === "string"
      ? (body as { model: string }).model
      : "scripted";
    const promptChars = request.messages.reduce((n, m) => n + m.text.length, 0);
    const replyChars = (reply.text ?? "").length +
      (reply.calls ?? []).reduce((n, c) => n + JSON.stringify(c.arguments).length, 0);
    const events = chatCompletionEvents(reply, model, request.turn, {
      prompt: Math.ceil(promptChars / 4),
      completion: Math.max(1, Math.ceil(replyChars / 4)),
    });
    answered++;
    const enc = new TextEncoder();
    return new Response(
      new ReadableStream<Uint8Array>({
        start(c) {
          for (const e of events) c.enqueue(enc.encode(e));
          c.close();
        },
      }),
      { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } },
    );
  });
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    requests: () => answered,
    close: () => server.shutdown(),
  };
}
