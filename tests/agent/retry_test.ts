import assert from "node:assert/strict";
import { join } from "node:path";
import { createAgent } from "../../lib/agent/mod.ts";
import { item, type ScriptedTurn, startModelServer, turn } from "../support/model_server.ts";
import { assertGoodTrace, collect, ofKind, requestMessages, type Sandbox } from "./_support.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { withModelRoot } from "../support/roots.ts";

interface Outcome {
  streams: OmniMessage[][];
  records: OmniMessage[];
  server: Awaited<ReturnType<typeof startModelServer>>;
  sb: Sandbox;
}

function scenario(
  turns: ScriptedTurn[],
  prompts: string[],
  check: (o: Outcome) => void | Promise<void>,
): Promise<void> {
  return withModelRoot({ turns }, async (sb, server) => {
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession({
      workspaceDir: sb.workspace,
      retryDelayMs: (n) => n,
    });
    const streams: OmniMessage[][] = [];
    for (const p of prompts) streams.push(await collect(session.run(p, { approve: "allow-all" })));
    await session.dispose();
    const records = await assertGoodTrace(sb.root, session.sessionId);
    await check({ streams, records, server, sb });
  });
}

Deno.test("a failed request is retried: request_end carries the status, attempt and wait, then success is stamped attempt 2", async () => {
  await scenario([turn.error(500), turn.text("recovered")], ["Hi."], ({ records, server }) => {
    const ends = ofKind(records, "request_end");
    assert.equal(ends.length, 2);
    assert.equal(ends[0]!.status, "timeout");
    assert.equal(ends[0]!.attempt, 1);
    assert.equal(ends[0]!.retry_in_ms, 1);
    assert.match(String(ends[0]!.error_message), /HTTP 500/);
    assert.deepEqual([ends[1]!.status, ends[1]!.attempt, ends[1]!.retry_in_ms], [
      "completed",
      2,
      undefined,
    ]);
    assert.deepEqual(
      requestMessages(server, 1).slice(1),
      requestMessages(server, 0).slice(1),
      "same input resent",
    );
    assert.equal(ofKind(records, "abort").length, 0);
  });
});

Deno.test("a retry resends the input plus a [turn_retried] transcript, never re-runs a tool, and never traces the block", async () => {
  const failing: ScriptedTurn = {
    items: [
      item.toolCall(
        "exec_command",
        { cmd: "echo ran >> log.txt; echo logged", description: "log" },
        { id: "t1" },
      ),
      item.toolCall("read_file", { file_path: "log.txt" }, { id: "t2" }),
    ],
    stream_error: { message: "upstream hiccup", code: "server_error" },
  };
  await scenario([failing, turn.text("all good")], ["Log it."], async ({ records, server, sb }) => {
    assert.equal(
      await Deno.readTextFile(join(sb.workspace, "log.txt")),
      "ran\n",
      "the tool ran once",
    );
    const retry = requestMessages(server, 1);
    const text = JSON.stringify(retry);
    assert.ok(!text.includes('"tool_calls"'), "the failed attempt is not in the history");
    const block = retry.flatMap((m) => Array.isArray(m.content) ? m.content : [{ text: m.content }])
      // The block follows the original input in the same user message.
      .map((c) => String((c as { text?: unknown }).text ?? ""))
      .map((t) => t.slice(Math.max(0, t.indexOf("[turn_retried]\n"))))
      .find((t) => t.startsWith("[turn_retried]\n"));
    assert.ok(block, "a [turn_retried] block is sent");
    assert.match(
      block!,
      /^\[turn_retried\]\n {2}\[tool_call name="exec_command" id="t1"\]\{.*\}\[\/tool_call\]\n/,
    );
    assert.match(
      block!,
      /\n {2}\[tool_call_output id="t1" status="completed"\][\s\S]*logged[\s\S]*\[\/tool_call_output\]\n\[\/turn_retried\]$/,
    );
    assert.ok(!block!.includes('id="t2"'), "an unfinished call is not transcribed");
    const traced = records.slice(1).map((r) => JSON.stringify(r)).join("\n");
    assert.ok(!traced.includes("turn_retried"), "the synthetic block is never traced");
    assert.deepEqual(ofKind(records, "request_end").map((e) => e.attempt), [1, 2]);
  });
});

Deno.test("retries stop after five with the exact exhaustion reason, and the input is carried to the next run", async () => {
  const six = Array.from({ length: 6 }, () => turn.error(503));
  await scenario(
    [...six, turn.text("finally")],
    ["First try.", "Again."],
    ({ streams, records, server }) => {
      const ends = ofKind(records, "request_end").slice(0, 6);
      assert.deepEqual(ends.map((e) => e.attempt), [1, 2, 3, 4, 5, 6]);
      assert.deepEqual(ends.map((e) => e.retry_in_ms), [1, 2, 3, 4, 5, undefined]);
      const abort = streams[0]!.at(-1)!.payload as Record<string, unknown>;
      const host = new URL(server.baseUrl("openai-chat")).host;
      assert.deepEqual([abort.type, abort.reason], [
        "abort",
        `reconnect failed after 5 retries: HTTP 503 from ${host}: scripted error (invalid_request_error)`,
      ]);
      const next = JSON.stringify(requestMessages(server, 6));
      assert.ok(
        next.indexOf("First try.") < next.indexOf("Again."),
        "the carried input goes first",
      );
    },
  );
});

Deno.test("malformed and failed exhaustion use their own reasons", async () => {
  const malformed = Array.from(
    { length: 6 },
    () => ({ ...turn.text("abcdefghijkl"), malformed_at: 1 }),
  );
  await scenario(malformed, ["x"], ({ streams, server }) => {
    const host = new URL(server.baseUrl("openai-chat")).host;
    assert.equal(
      (streams[0]!.at(-1)!.payload as { reason?: string }).reason,
      `malformed response failed after 5 retries: malformed response from ${host}: ` +
        `Cannot parse a chat.completion.chunk as JSON: Unexpected end of JSON input: ` +
        `"{\\"scripted_malformed_chunk\\": tru"`,
    );
  });
  const failed = Array.from({ length: 6 }, () => turn.streamError("odd state", "weird_code"));
  await scenario(failed, ["x"], ({ streams, records, server }) => {
    assert.equal(ofKind(records, "request_end")[0]!.status, "failed");
    assert.equal(
      (streams[0]!.at(-1)!.payload as { reason?: string }).reason,
      `llm request failed after 5 retries: error in the stream from ${
        new URL(server.baseUrl("openai-chat")).host
      }: odd state (weird_code)`,
    );
  });
});

Deno.test("an auth failure and a permanent 4xx are not retried and abort with llm request error", async () => {
  await scenario([turn.error(401), turn.text("never")], ["x"], ({ streams, server }) => {
    assert.equal(server.requests.length, 1);
    const abort = streams[0]!.at(-1)!.payload as { type: string; reason: string };
    assert.equal(abort.type, "abort");
    assert.match(abort.reason, /^llm request error: HTTP 401/);
  });
  await scenario([turn.error(400), turn.text("never")], ["x"], ({ streams, server, records }) => {
    assert.equal(server.requests.length, 1);
    assert.match(
      (streams[0]!.at(-1)!.payload as { reason: string }).reason,
      /^llm request error: HTTP 400/,
    );
    assert.equal(ofKind(records, "request_end")[0]!.retry_in_ms, undefined);
  });
});

Deno.test("skipRetryWait ends a long retry wait at once and is false when nothing waits", async () => {
  await withModelRoot({ turns: [turn.error(503), turn.text("back")] }, async (sb) => {
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession({
      workspaceDir: sb.workspace,
      retryDelayMs: () => 600_000,
    });
    assert.equal(session.skipRetryWait(), false);
    let skipped = false;
    const stream: OmniMessage[] = [];
    for await (const m of session.run("Hi.", { approve: "allow-all" })) {
      stream.push(m);
      if (m.payload.type === "request_end" && m.payload.status !== "completed") {
        // The wait starts once this turn is over; keep trying until it is there.
        const t = setInterval(() => {
          if (session.skipRetryWait()) {
            skipped = true;
            clearInterval(t);
          }
        }, 5);
      }
    }
    assert.ok(skipped);
    assert.equal((stream.at(-1)!.payload as { status?: string }).status, "completed");
    await session.dispose();
    await assertGoodTrace(sb.root, session.sessionId);
  });
});
