/**
 * One conformance suite over the four wire protocols: every case describes
 * one model response abstractly (a scripted turn), the scripted model
 * server's per-protocol encoder turns it into that protocol's real SSE or
 * JSON over HTTP on 127.0.0.1, and `streamModel` must yield the same
 * protocol-neutral result for each: streaming text, tool calls, parallel
 * calls, malformed JSON arguments, usage, HTTP error bodies, in-stream
 * errors, malformed chunks, stalls, disconnects, aborts, and responses that
 * stream without content or without end.
 *
 * A case that a protocol's wire format makes different says so in the case
 * itself (`only`), with the reason.
 */
import assert from "node:assert/strict";
import { streamModel } from "../../lib/models/stream.ts";
import { CLIENT_TYPES } from "../../lib/state/project_config_types.ts";
import type { WireProtocol, WireRequest } from "../../lib/models/wire.ts";
import type { ModelStreamItem } from "../../lib/models/outcome.ts";
import type { ToolCallMessage } from "../../lib/protocol/types.ts";
import {
  ENCODERS,
  item,
  type ModelServer,
  type ScriptedTurn,
  turn,
  withModelServer,
} from "../support/model_server.ts";
import { assertPartialDiscipline, collect, type Collected } from "./_support.ts";

/** The four protocols, from the one list of protocol ids. */
const PROTOCOLS: readonly WireProtocol[] = CLIENT_TYPES;

function request(server: ModelServer, protocol: WireProtocol): WireRequest {
  return {
    endpoint: server.endpoint(protocol, "scripted-model", "sk-test"),
    system_prompt: "You are terse.",
    tools: [{ name: "exec_command", description: "Run a command", parameters: { type: "object" } }],
    history: [{ type: "text", role: "user", text: "hi", stop_reason: "completed" }],
  };
}

/** Events `protocol`'s encoder sends up to and including the one carrying `needle`. */
function eventsThrough(protocol: WireProtocol, t: ScriptedTurn, needle: string): number {
  const encoder = ENCODERS.find((e) => e.protocol === protocol)!;
  const events = encoder.encodeTurn(t, "scripted-model");
  const at = events.findIndex((e) => e.includes(needle));
  assert.ok(at >= 0, `${protocol}: no event carries ${JSON.stringify(needle)}`);
  return at + 1;
}

/** How many events `protocol`'s encoder sends before the first text delta of a response. */
function preamble(protocol: WireProtocol): number {
  const encoder = ENCODERS.find((e) => e.protocol === protocol)!;
  const events = encoder.encodeTurn(turn.text("QZ", { chunk: 1 }), "scripted-model");
  return events.findIndex((e) => e.includes('"Q"'));
}

/**
 * An endless response: `protocol`'s events up to its first text delta, then
 * that delta for ever — with its text as sent (`"Q"`), or emptied (`""`: an
 * event without content). The server writes until the client is gone.
 */
function endless(protocol: WireProtocol, text: "Q" | ""): ScriptedTurn {
  const encoder = ENCODERS.find((e) => e.protocol === protocol)!;
  const events = encoder.encodeTurn(turn.text("QZ", { chunk: 1 }), "scripted-model");
  const at = preamble(protocol);
  const repeated = events[at]!.replace('"Q"', JSON.stringify(text));
  return {
    items: [],
    event_source: function* () {
      yield* events.slice(0, at);
      for (;;) yield repeated;
    },
  };
}

/**
 * A `fetch` whose response body is handed to the reader in reads the test
 * chooses: read `i` holds exactly the next `reads[i]` server-sent events
 * (whatever the network split), and `onRead(i)` runs as it is handed on;
 * after the last, bytes pass as they come. Cancelling the body cancels the
 * real one, so the connection closes.
 */
function readsOf(reads: number[], onRead: (i: number) => void): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    const inner = res.body!.getReader();
    let held = new Uint8Array(0);
    let i = 0;
    /** The end of the `n`th event in `held` (after its blank line, `\n\n` or `\r\n\r\n`), or -1. */
    const endOf = (n: number): number => {
      if (n === 0) return 0;
      for (let at = 0; at + 1 < held.length; at++) {
        if (held[at] !== 10) continue;
        const blank = held[at + 1] === 10 ? 2 : held[at + 1] === 13 && held[at + 2] === 10 ? 3 : 0;
        if (blank > 0 && --n === 0) return at + blank;
      }
      return -1;
    };
    const body = new ReadableStream<Uint8Array>({
      async pull(ctl) {
        if (i >= reads.length) {
          if (held.length > 0) {
            ctl.enqueue(held);
            held = new Uint8Array(0);
            return;
          }
          const r = await inner.read();
          if (r.done) ctl.close();
          else ctl.enqueue(r.value);
          return;
        }
        let end = endOf(reads[i]!);
        while (end < 0) {
          const r = await inner.read();
          if (r.done) throw new Error(`the response ended before read ${i} was complete`);
          const more = new Uint8Array(held.length + r.value.length);
          more.set(held);
          more.set(r.value, held.length);
          held = more;
          end = endOf(reads[i]!);
        }
        const chunk = held.slice(0, end);
        held = held.slice(end);
        onRead(i++);
        ctl.enqueue(chunk);
      },
      cancel: (reason) => inner.cancel(reason),
    }, { highWaterMark: 0 });
    return new Response(body, { status: res.status, headers: res.headers });
  };
}

/**
 * `protocol`'s text response "QZ" whose event carrying "Q" also holds an
 * unused field of `count` empty objects (`"junk":[{},{},…]`).
 */
function junkEvent(protocol: WireProtocol, count: number): ScriptedTurn {
  const encoder = ENCODERS.find((e) => e.protocol === protocol)!;
  const events = encoder.encodeTurn(turn.text("QZ", { chunk: 1 }), "scripted-model");
  const junk = `"junk":[${Array(count).fill("{}").join(",")}],`;
  const at = events.findIndex((e) => e.includes('"Q"'));
  events[at] = events[at]!.replace("data: {", `data: {${junk}`);
  return { items: [], event_source: () => events.values() };
}

/**
 * `protocol`'s events of one `exec_command` call whose arguments are
 * `{"cmd": [[[…]]]}`, arrays nested `depth` deep (encoded here: the server
 * walks a scripted turn's values recursively).
 */
function deepCall(protocol: WireProtocol, depth: number): ScriptedTurn {
  let v: unknown[] = [];
  for (let i = 1; i < depth; i++) v = [v];
  const encoder = ENCODERS.find((e) => e.protocol === protocol)!;
  const events = encoder.encodeTurn(turn.toolCall("exec_command", { cmd: v }), "scripted-model");
  return { items: [], event_source: () => events.values() };
}

function calls(c: Collected): ToolCallMessage[] {
  return c.completes.filter((m): m is ToolCallMessage => m.type === "tool_call");
}

/** One conformance case: a response described once, and what every protocol must yield. */
interface Case {
  name: string;
  /** The scripted responses, served one per request (`protocol` only for wire-specific counts). */
  turns(protocol: WireProtocol): ScriptedTurn[];
  /** Run the requests and check them. */
  check(server: ModelServer, protocol: WireProtocol): Promise<void>;
}

const CASES: Case[] = [
  {
    name: "streaming text arrives in several deltas and completes with usage",
    turns: () => [turn.text("Hello, conformance world!", { chunk: 5 })],
    async check(s, protocol) {
      const c = await collect(request(s, protocol));
      assertPartialDiscipline(c.messages);
      assert.equal(c.outcome.status, "completed");
      assert.equal(c.outcome.finish_reason, "stop");
      assert.deepEqual(c.completes, [
        {
          type: "text",
          role: "assistant",
          text: "Hello, conformance world!",
          stop_reason: "completed",
        },
      ]);
      // Deltas of one network read are merged, so only "at least one" is certain.
      assert.ok(c.messages.some((m) => m.type === "partial_text"));
      assert.ok(c.usage, "usage on success");
      assert.equal(s.requests[0]!.protocol, protocol);
      assert.equal(s.requests[0]!.model, "scripted-model");
    },
  },
  {
    name: "usage: input with a cached part and output come out as cache read/write, output, total",
    turns: () => [{ ...turn.text("ok"), usage: { input: 50, cached_input: 20, output: 9 } }],
    async check(s, protocol) {
      const c = await collect(request(s, protocol));
      assert.equal(c.outcome.status, "completed");
      assert.deepEqual(c.usage, { cache_read: 20, cache_write: 30, output: 9, total: 59 });
    },
  },
  {
    name: "a tool call after text completes with its arguments, name and a call id",
    turns: () => [
      turn.of(
        item.text("Running it."),
        item.toolCall("exec_command", { cmd: "ls -la", workdir: "src" }, { id: "call_a" }),
      ),
    ],
    async check(s, protocol) {
      const c = await collect(request(s, protocol));
      assertPartialDiscipline(c.messages);
      assert.equal(c.outcome.status, "completed");
      assert.equal(c.outcome.finish_reason, "tool_call");
      assert.deepEqual(c.completes.map((m) => m.type), ["text", "tool_call"]);
      const [call] = calls(c);
      assert.equal(call!.name, "exec_command");
      assert.deepEqual(JSON.parse(call!.arguments), { cmd: "ls -la", workdir: "src" });
      assert.equal(call!.tool_call_id, "call_a");
      assert.equal(call!.stop_reason, "completed");
    },
  },
  {
    name: "parallel tool calls complete in order, each with its own arguments and id",
    turns: () => [
      turn.of(
        item.toolCall("exec_command", { cmd: "ls" }, { id: "call_1" }),
        item.toolCall("read_file", { file_path: "a.txt" }, { id: "call_2" }),
        item.toolCall("exec_command", { cmd: "pwd" }, { id: "call_3" }),
      ),
    ],
    async check(s, protocol) {
      const c = await collect(request(s, protocol));
      assertPartialDiscipline(c.messages);
      assert.equal(c.outcome.status, "completed");
      const got = calls(c).map((m) => [m.name, JSON.parse(m.arguments), m.tool_call_id]);
      assert.deepEqual(got, [
        ["exec_command", { cmd: "ls" }, "call_1"],
        ["read_file", { file_path: "a.txt" }, "call_2"],
        ["exec_command", { cmd: "pwd" }, "call_3"],
      ]);
    },
  },
  {
    name: "tool-call arguments that are not JSON complete the call verbatim; the request completes",
    turns: () => [turn.toolCall("exec_command", '{"cmd": "ls"', { chunk: 4 })],
    async check(s, protocol) {
      const c = await collect(request(s, protocol));
      assert.equal(c.outcome.status, "completed");
      const [call] = calls(c);
      // Gemini sends `args` as a JSON value inside the chunk, never as text, so the nearest
      // it gets to bad arguments is a string where an object belongs: kept JSON-encoded.
      const sent = '{"cmd": "ls"';
      assert.equal(call!.arguments, protocol === "gemini" ? JSON.stringify(sent) : sent);
      assert.equal(call!.stop_reason, "completed");
    },
  },
  {
    name: "finish by length completes the request and marks the last segment failed",
    turns: () => [turn.text("cut off", { finish: "length" })],
    async check(s, protocol) {
      const c = await collect(request(s, protocol));
      assert.equal(c.outcome.status, "completed");
      assert.equal(c.outcome.finish_reason, "length");
      // Anthropic closes the text block (content_block_stop) before message_delta brings
      // max_tokens, so the segment is already complete when the finish arrives.
      const last = protocol === "anthropic-messages" ? "completed" : "failed";
      assert.equal(c.completes.at(-1)?.stop_reason, last);
    },
  },
  {
    name:
      "HTTP error bodies: 401 is auth, 429 honours Retry-After, 500 is transport, 400 is permanent",
    turns: () => {
      const unauthorized = turn.error(401);
      unauthorized.http_error!.code = "invalid_api_key";
      unauthorized.http_error!.message = "Incorrect API key provided";
      const bad = turn.error(400);
      bad.http_error!.message = "bad field: temperature";
      return [
        unauthorized,
        turn.error(429, undefined, { "retry-after": "7" }),
        turn.error(500),
        bad,
      ];
    },
    async check(s, protocol) {
      const a = await collect(request(s, protocol));
      assert.equal(a.outcome.status, "auth");
      assert.equal(a.outcome.http_status, 401);
      assert.match(a.outcome.error_message!, /Incorrect API key provided/);
      const b = await collect(request(s, protocol));
      assert.equal(b.outcome.status, "timeout");
      assert.equal(b.outcome.retry_after_ms, 7000);
      const c = await collect(request(s, protocol));
      assert.equal(c.outcome.status, "timeout");
      assert.equal(c.outcome.http_status, 500);
      const d = await collect(request(s, protocol));
      assert.equal(d.outcome.status, "failed");
      assert.equal(d.outcome.permanent, true);
      assert.match(d.outcome.error_message!, /bad field: temperature/);
      for (const x of [a, b, c, d]) {
        assert.equal(x.messages.length, 0);
        assert.equal(x.usage, undefined);
      }
    },
  },
  {
    name: "an HTTP error body that is not JSON is reported as its text",
    turns: () => [turn.error(503, "upstream connect error")],
    async check(s, protocol) {
      const c = await collect(request(s, protocol));
      assert.equal(c.outcome.status, "timeout");
      assert.match(c.outcome.error_message!, /upstream connect error/);
    },
  },
  {
    name:
      "in-stream errors: a rate limit is retryable (timeout) and closes the open text; another fails",
    turns: () => [
      turn.streamError("Rate limit reached, slow down", "rate_limit_exceeded", "some text"),
      {
        items: [],
        stream_error: {
          message: "The model produced invalid content",
          code: "invalid_content",
          status: 400,
        },
      },
    ],
    async check(s, protocol) {
      const a = await collect(request(s, protocol));
      assertPartialDiscipline(a.messages);
      assert.equal(a.outcome.status, "timeout");
      assert.match(a.outcome.error_message!, /Rate limit reached/);
      // Anthropic's encoder ends the text block before its `error` event: the text is complete.
      const closed = protocol === "anthropic-messages" ? "completed" : "timeout";
      assert.deepEqual(a.completes, [
        { type: "text", role: "assistant", text: "some text", stop_reason: closed },
      ]);
      assert.equal(a.usage, undefined, "no usage on failure");
      const b = await collect(request(s, protocol));
      assert.equal(b.outcome.status, "failed");
      assert.equal(b.outcome.permanent, undefined);
      assert.match(b.outcome.error_message!, /invalid content/);
    },
  },
  {
    name: "a malformed chunk ends the request as malformed",
    turns: () => [{ ...turn.text("hello there"), malformed_at: 1 }],
    async check(s, protocol) {
      const c = await collect(request(s, protocol));
      assert.equal(c.outcome.status, "malformed");
      assert.match(c.outcome.error_message!, /Cannot parse/);
      assertPartialDiscipline(c.messages);
    },
  },
  {
    name: "a stall mid-text ends in an idle timeout with the open text closed",
    turns: (p) => {
      const t = turn.text("a long answer that stalls");
      return [{ ...t, stall_after: eventsThrough(p, t, "nswer th") }];
    },
    async check(s, protocol) {
      const c = await collect(request(s, protocol), { idleTimeoutMs: 1_000 });
      assert.equal(c.outcome.status, "timeout");
      assert.match(c.outcome.error_message!, /idle timeout/);
      assert.equal(c.usage, undefined);
      assertPartialDiscipline(c.messages);
      assert.deepEqual(c.completes, [
        { type: "text", role: "assistant", text: "a long answer th", stop_reason: "timeout" },
      ]);
    },
  },
  {
    name: "a disconnect mid-text is transport-shaped (timeout)",
    turns: (p) => {
      const t = turn.text("partial answer here");
      return [{ ...t, disconnect_after: eventsThrough(p, t, "answer h") }];
    },
    async check(s, protocol) {
      const c = await collect(request(s, protocol));
      assert.equal(c.outcome.status, "timeout");
      assert.equal(c.usage, undefined);
      assertPartialDiscipline(c.messages);
      assert.equal(c.completes.at(-1)?.stop_reason, "timeout");
    },
  },
  {
    name: "an abort mid-stream ends the request aborted at once and closes the connection",
    turns: (p) => {
      const t = turn.of(
        item.text("streaming forever"),
        item.toolCall("exec_command", { cmd: "x" }),
      );
      return [{ ...t, stall_after: eventsThrough(p, t, "streamin") }];
    },
    async check(s, protocol) {
      const ctl = new AbortController();
      const items: ModelStreamItem[] = [];
      for await (const it of streamModel(request(s, protocol), { signal: ctl.signal })) {
        items.push(it);
        const m = it.kind === "message" ? it.message : undefined;
        if (m?.type === "partial_text" && (m as { event_type: string }).event_type === "delta") {
          ctl.abort();
        }
      }
      const end = items.at(-1);
      assert.equal(end?.kind === "end" && end.outcome.status, "aborted");
      assert.ok(!items.some((i) => i.kind === "usage"));
      const messages = items.flatMap((i) => (i.kind === "message" ? [i.message] : []));
      assertPartialDiscipline(messages);
      assert.deepEqual(messages.filter((m) => !m.type.startsWith("partial_")), [
        { type: "text", role: "assistant", text: "streamin", stop_reason: "aborted" },
      ]);
      await s.requests[0]!.disconnected;
      assert.equal(s.requests[0]!.clientGone, true);
    },
  },
  {
    name: "events without content for the idle timeout stop the response like an idle stream",
    turns: (p) => [endless(p, "")],
    async check(s, protocol) {
      // The clock moves past the bound only as the read of 10 empty events is handed on; the
      // idle timeout is far beyond what a loaded machine leaves the stream idle.
      let t = 0;
      const c = await collect(request(s, protocol), {
        idleTimeoutMs: 60_000,
        now: () => t,
        fetch: readsOf([preamble(protocol), 10], (i) => {
          if (i === 1) t = 60_000;
        }),
      });
      assert.equal(c.outcome.status, "timeout");
      assert.equal(c.outcome.failure, "timeout");
      assert.match(
        c.outcome.error_message!,
        /^timed out waiting for 127\.0\.0\.1:\d+ \(no content for 60 s\): the provider sent \d+ events in 60 s without any content \(text, reasoning or tool calls\); penguin stopped reading it as an idle stream$/,
      );
      assert.equal(c.usage, undefined);
      assert.deepEqual(c.completes, []);
      await s.requests[0]!.disconnected;
      assert.equal(s.requests[0]!.clientGone, true, "the response was not read on");
    },
  },
  {
    name: "a response that keeps streaming content is stopped at its overall time bound",
    turns: (p) => [endless(p, "Q")],
    async check(s, protocol) {
      // The server streams until the client is gone. The first read holds exactly 512 text
      // events (a run of held deltas is joined into one piece at 512), and the clock passes the
      // bound as that read is handed on: the response stops right after it, whatever the speed.
      let t = 0;
      const c = await collect(request(s, protocol), {
        idleTimeoutMs: 60_000,
        responseTimeoutMs: 300,
        now: () => t,
        fetch: readsOf([preamble(protocol) + 512], () => (t = 10_000)),
      });
      assert.equal(c.outcome.status, "timeout");
      assert.match(
        c.outcome.error_message!,
        /\(response longer than 300 ms\): the response was still streaming after 10 s; penguin stopped reading it \(a response may take 30 × model\.timeoutMs/,
      );
      assertPartialDiscipline(c.messages);
      const text = c.completes.find((m) => m.type === "text") as {
        text: string;
        stop_reason: string;
      };
      const deltas = c.messages.flatMap((m) =>
        m.type === "partial_text" && m.event_type === "delta" ? [m.text] : []
      );
      assert.equal(deltas.join(""), "Q".repeat(512), "every text event read was streamed");
      assert.equal(text.text, deltas.join(""));
      assert.equal(text.stop_reason, "timeout");
      await s.requests[0]!.disconnected;
      assert.equal(s.requests[0]!.clientGone, true);
    },
  },
  {
    name: "an event whose JSON holds 200 000 empty objects stops the response, not retried",
    turns: (p) => [junkEvent(p, 200_000)],
    async check(s, protocol) {
      const c = await collect(request(s, protocol));
      assert.equal(c.outcome.status, "failed");
      assert.equal(c.outcome.permanent, true);
      assert.match(
        c.outcome.error_message!,
        /: The model's response has an event with more than 100000 JSON objects and arrays; penguin stopped reading it \(a limit on what one response may hold\)$/,
      );
      assert.equal(c.usage, undefined);
      assert.ok(!c.completes.some((m) => m.type === "text" && m.stop_reason === "completed"));
    },
  },
  {
    name: "a plain JSON body holding 200 000 empty objects fails unparsed, not retried",
    // Whatever the protocol, the body is judged by its brackets before it is parsed.
    turns:
      () => [turn.raw(`{"junk":[${Array(200_000).fill("{}").join(",")}]}`, "application/json")],
    async check(s, protocol) {
      const c = await collect(request(s, protocol));
      assert.equal(c.outcome.status, "failed");
      assert.equal(c.outcome.permanent, true);
      assert.match(
        c.outcome.error_message!,
        /: The model's response has a body with more than 100000 JSON objects and arrays; penguin stopped reading it/,
      );
      assert.deepEqual(c.completes, []);
    },
  },
  {
    name: "tool-call arguments nested 10 000 deep stop the response; no call completes",
    turns: (p) => [deepCall(p, 10_000)],
    async check(s, protocol) {
      const c = await collect(request(s, protocol));
      assert.equal(c.outcome.status, "failed");
      assert.equal(c.outcome.permanent, true);
      // Gemini sends the arguments inside the event's JSON: the event is judged, unparsed.
      const what = protocol === "gemini"
        ? "an event"
        : "arguments in a tool call \\(exec_command\\)";
      assert.match(
        c.outcome.error_message!,
        new RegExp(
          `: The model's response has ${what} with JSON objects and arrays nested more than 256 deep; penguin stopped reading it`,
        ),
      );
      for (const call of calls(c)) {
        assert.equal(call.stop_reason, "failed");
        assert.equal(call.arguments, "");
      }
    },
  },
];

for (const c of CASES) {
  for (const protocol of PROTOCOLS) {
    Deno.test(`${protocol}: ${c.name}`, async () => {
      await withModelServer({ turns: c.turns(protocol) }, (s) => c.check(s, protocol));
    });
  }
}

Deno.test("the suite runs over every protocol the server can encode, from the one id list", () => {
  assert.deepEqual([...PROTOCOLS].sort(), ENCODERS.map((e) => e.protocol).sort());
  assert.equal(PROTOCOLS.length, 4);
});
