// One suite over every wire protocol: the same agent scenarios (a text
// reply, a tool call round trip, usage, an error event) run against the
// scripted model server speaking each protocol, with the model configured
// for that protocol. A protocol whose request building or stream parsing
// drifts from the others fails here under its own name.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createAgent } from "../../lib/agent/mod.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { ENCODERS, type ModelServer, type ScriptedTurn, turn } from "../support/model_server.ts";
import { type Sandbox, withModelRoot } from "../support/roots.ts";
import { assertGoodTrace, collect, ofKind } from "./_support.ts";

/** What one scenario's session produced. */
interface Outcome {
  /** The run's stream. */
  stream: OmniMessage[];
  /** Every trace record of the session. */
  records: OmniMessage[];
  server: ModelServer;
  sb: Sandbox;
}

/** One scenario: the model's script, the setup of the workspace, and what must hold. */
interface Scenario {
  name: string;
  turns: ScriptedTurn[];
  prompt: string;
  setup?: (sb: Sandbox) => Promise<void>;
  check: (o: Outcome) => void | Promise<void>;
}

/** The texts of the complete assistant text records. */
function texts(records: readonly OmniMessage[]): string[] {
  return ofKind(records, "text").filter((p) => p.role === "assistant").map((p) => String(p.text));
}

const SCENARIOS: Scenario[] = [
  {
    name: "a text reply completes the run",
    turns: [turn.text("Hello from the model.")],
    prompt: "Say hello.",
    check: ({ stream, records, server }) => {
      assert.deepEqual(texts(records), ["Hello from the model."]);
      assert.equal(server.requests.length, 1);
      assert.match(JSON.stringify(server.requests[0]!.body), /Say hello\./);
      assert.equal(ofKind(stream, "abort").length, 0);
    },
  },
  {
    name: "a tool call runs and its output goes back in the next request",
    turns: [
      turn.toolCall("read_file", { file_path: "note.txt" }),
      turn.text("The note says it."),
    ],
    prompt: "Read note.txt.",
    setup: (sb) => Deno.writeTextFile(join(sb.workspace, "note.txt"), "marker-7f3a\n"),
    check: ({ records, server }) => {
      const calls = ofKind(records, "tool_call");
      assert.deepEqual(calls.map((c) => c.name), ["read_file"]);
      const outputs = ofKind(records, "tool_call_output");
      assert.equal(outputs.length, 1);
      assert.equal(outputs[0]!.tool_call_id, calls[0]!.tool_call_id);
      assert.match(String(outputs[0]!.output), /marker-7f3a/);
      assert.equal(server.requests.length, 2);
      const second = JSON.stringify(server.requests[1]!.body);
      assert.match(second, /marker-7f3a/, "the tool output is sent back");
      assert.match(second, /read_file/, "with the call it answers");
      assert.deepEqual(texts(records), ["The note says it."]);
    },
  },
  {
    name: "usage is recorded per request and summed over the session",
    turns: [
      {
        ...turn.toolCall("list_dir", { path: "." }),
        usage: { input: 120, cached_input: 20, output: 30 },
      },
      { ...turn.text("Done."), usage: { input: 200, cached_input: 100, output: 10 } },
    ],
    prompt: "List the workspace.",
    check: ({ records }) => {
      const usage = ofKind(records, "token_usage");
      assert.equal(usage.length, 2);
      assert.deepEqual(usage[0]!.request, {
        cache_read: 20,
        cache_write: 100,
        output: 30,
        total: 150,
      });
      assert.deepEqual(usage[1]!.request, {
        cache_read: 100,
        cache_write: 100,
        output: 10,
        total: 210,
      });
      assert.deepEqual(usage[1]!.session, {
        cache_read: 120,
        cache_write: 200,
        output: 40,
        total: 360,
      });
    },
  },
  {
    name: "an error event in the stream fails the request, which is retried",
    turns: [
      turn.streamError("upstream hiccup", "odd_state"),
      turn.text("Recovered."),
    ],
    prompt: "Try.",
    check: ({ stream, records, server }) => {
      const ends = ofKind(records, "request_end");
      // Gemini's in-stream errors carry an HTTP-like code (500 by default),
      // which classifies as transient ("timeout"); the others' as "failed".
      assert.equal(ends.length, 2);
      assert.ok(["failed", "timeout"].includes(String(ends[0]!.status)), String(ends[0]!.status));
      assert.equal(ends[1]!.status, "completed");
      assert.match(String(ends[0]!.error_message), /upstream hiccup/);
      assert.equal(server.requests.length, 2);
      assert.deepEqual(texts(records), ["Recovered."]);
      assert.equal(ofKind(stream, "abort").length, 0);
    },
  },
];

for (const { protocol } of ENCODERS) {
  for (const s of SCENARIOS) {
    Deno.test(`${protocol}: ${s.name}`, async () => {
      await withModelRoot({ turns: [...s.turns] }, async (sb, server) => {
        await s.setup?.(sb);
        const agent = await createAgent({ root: sb.root });
        const session = await agent.createSession({
          workspaceDir: sb.workspace,
          retryDelayMs: (n) => n,
        });
        const stream = await collect(session.run(s.prompt, { approve: "allow-all" }));
        await session.dispose();
        const records = await assertGoodTrace(sb.root, session.sessionId);
        for (const r of server.requests) assert.equal(r.protocol, protocol);
        await s.check({ stream, records, server, sb });
      }, { protocol });
    });
  }
}

// The table covers every protocol the models layer speaks.
Deno.test("the protocol suite runs over all four wire protocols", () => {
  assert.deepEqual(
    ENCODERS.map((e) => e.protocol).sort(),
    ["anthropic-messages", "gemini", "openai-chat", "openai-responses"],
  );
});
