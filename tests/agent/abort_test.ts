import assert from "node:assert/strict";
import { createAgent, type Session } from "../../lib/agent/mod.ts";
import { goalRoundText } from "../../lib/agent/goal.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { type ScriptedTurn, startModelServer, turn } from "../support/model_server.ts";
import {
  assertGoodTrace,
  collect,
  completesOf,
  ofKind,
  requestMessages,
  type Sandbox,
} from "./_support.ts";
import { withModelRoot } from "../support/roots.ts";

async function withSession(
  turns: ScriptedTurn[],
  body: (
    s: Session,
    server: Awaited<ReturnType<typeof startModelServer>>,
    sb: Sandbox,
  ) => Promise<void>,
): Promise<OmniMessage[]> {
  return await withModelRoot({ turns, maxHoldMs: 20_000 }, async (sb, server) => {
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession({ workspaceDir: sb.workspace });
    try {
      await body(session, server, sb);
    } finally {
      await session.dispose();
    }
    return await assertGoodTrace(sb.root, session.sessionId);
  });
}

/** Run until `when` holds for a yielded message, then abort; returns everything yielded. */
async function runAndAbortWhen(
  session: Session,
  prompt: string,
  when: (m: OmniMessage) => boolean,
): Promise<OmniMessage[]> {
  const ctl = new AbortController();
  const out: OmniMessage[] = [];
  for await (const m of session.run(prompt, { signal: ctl.signal, approve: "allow-all" })) {
    out.push(m);
    if (!ctl.signal.aborted && when(m)) ctl.abort();
  }
  return out;
}

const userTexts = (msgs: Record<string, unknown>[]) =>
  msgs.filter((m) => m.role === "user").flatMap((m) =>
    Array.isArray(m.content)
      ? m.content.map((c: { text?: string }) => c.text ?? "")
      : [String(m.content)]
  );

Deno.test("an abort mid-stream ends the run with an abort event and carries a [turn_aborted] transcript", async () => {
  const records = await withSession([
    { ...turn.text("Once upon a time there was a penguin"), chunk: 5, stall_after: 4 },
    turn.text("The end."),
  ], async (session, server) => {
    const first = await runAndAbortWhen(
      session,
      "Tell me a story.",
      (m) => m.payload.type === "partial_text" && m.payload.event_type === "delta",
    );
    const tail = completesOf(first).slice(-2)
      .map((m) => m.payload as Record<string, unknown>);
    assert.deepEqual([tail[0]!.type, tail[0]!.status], ["request_end", "aborted"]);
    assert.deepEqual([tail[1]!.type, tail[1]!.reason], ["abort", "aborted by user"]);
    await collect(session.run("Continue.", { approve: "allow-all" }));
    // The carry-over block and the new prompt go out as one user message,
    // separated by a blank line.
    const texts = userTexts(requestMessages(server, 1));
    assert.equal(texts.length, 1);
    assert.match(
      texts[0]!,
      /^\[turn_aborted\]\n {2}\[user_input\]Tell me a story\.\[\/user_input\]\n {2}\[text\]Once[^[]*\[\/text\]\n\[\/turn_aborted\]\n\nContinue\.$/,
    );
  });
  const body = records.slice(1).map((r) => JSON.stringify(r)).join("\n");
  assert.ok(!body.includes("turn_aborted"), "carry-over is never traced");
  assert.equal(ofKind(records, "abort").length, 1);
});

Deno.test("an abort mid-tool stops the command, records its aborted output and carries it to the next run", async () => {
  const records = await withSession([
    turn.toolCall("exec_command", { cmd: "echo started; sleep 30", description: "long" }),
    turn.text("Okay."),
  ], async (session, server) => {
    const started = Date.now();
    const first = await runAndAbortWhen(
      session,
      "Wait a while.",
      (m) => m.payload.type === "partial_tool_call_output" && m.payload.event_type === "delta",
    );
    assert.ok(Date.now() - started < 25_000, "the 30 s command did not run to its end");
    const out = first.find((m) => m.payload.type === "tool_call_output")!.payload as Record<
      string,
      unknown
    >;
    assert.equal(out.stop_reason, "aborted");
    assert.match(String(out.output), /\[interrupted: tool aborted by user\]$/);
    assert.equal((first.at(-1)!.payload as { reason?: string }).reason, "aborted by user");
    await collect(session.run("Never mind.", { approve: "allow-all" }));
    const next = requestMessages(server, 1);
    const tool = next.find((m) => m.role === "tool");
    assert.match(String(tool?.content), /interrupted: tool aborted by user/);
    assert.equal(userTexts(next).at(-1), "Never mind.");
  });
  assert.equal(ofKind(records, "tool_call_output").length, 1);
});

Deno.test("an abort while a call awaits approval leaves no decision and carries a placeholder output", async () => {
  const records = await withSession([
    turn.toolCall("read_file", { file_path: "a.txt" }),
    turn.text("Fine."),
  ], async (session, server) => {
    const ctl = new AbortController();
    const stream = await collect(session.run("Read a.", {
      signal: ctl.signal,
      approve: "always-ask",
      ask: () => {
        ctl.abort();
        return new Promise((r) => setTimeout(() => r(true), 20));
      },
    }));
    assert.ok(!stream.some((m) => m.payload.type === "approval_decision"));
    assert.equal((stream.at(-1)!.payload as { type: string }).type, "abort");
    await collect(session.run("Go on.", { approve: "allow-all" }));
    const tool = requestMessages(server, 1).find((m) => m.role === "tool");
    assert.equal(tool?.content, "[interrupted: tool aborted by user]");
  });
  assert.equal(ofKind(records, "approval_decision").length, 0);
  assert.equal(ofKind(records, "tool_call_output").length, 0, "placeholders are never traced");
});

Deno.test("a run whose signal is already aborted keeps its input for the next run and sends nothing", async () => {
  await withSession([turn.text("Hello.")], async (session, server) => {
    const ctl = new AbortController();
    ctl.abort();
    const stream = await collect(
      session.run("First.", { signal: ctl.signal, approve: "allow-all" }),
    );
    assert.equal((stream.at(-1)!.payload as { reason?: string }).reason, "aborted by user");
    assert.equal(server.requests.length, 0);
    await collect(session.run("Second.", { approve: "allow-all" }));
    assert.deepEqual(userTexts(requestMessages(server, 0)), ["First.\n\nSecond."]);
  });
});

Deno.test("stopping iteration early cancels the request, and the session takes the next task", async () => {
  await withSession([
    { ...turn.text("This answer will never finish streaming"), chunk: 4, stall_after: 3 },
    turn.text("Fresh answer."),
  ], async (session, server) => {
    for await (const m of session.run("First.", { approve: "allow-all" })) {
      if (m.payload.type === "partial_text" && m.payload.event_type === "delta") break;
    }
    await server.requests[0]!.disconnected;
    assert.equal(session.running, false);
    const stream = await collect(session.run("Second.", { approve: "allow-all" }));
    assert.ok(stream.some((m) => m.payload.type === "text" && m.payload.role === "assistant"));
  });
});

Deno.test("a goal round kept as carry-over reaches the next run downgraded: one line, then its body", async () => {
  await withSession([turn.text("Hello.")], async (session, server) => {
    const ctl = new AbortController();
    ctl.abort();
    const round = goalRoundText({
      round: 3,
      objective: "Ship it",
      path: "/x/GOAL.yaml",
      used: 0,
      body: "Ship it",
    });
    await collect(session.run(round, { signal: ctl.signal, approve: "allow-all" }));
    await collect(session.run("Next.", { approve: "allow-all" }));
    assert.deepEqual(userTexts(requestMessages(server, 0)), [
      "[goal round 3 of an ended goal run — protocol omitted; do not act on it]\nShip it\n\nNext.",
    ]);
  });
});
