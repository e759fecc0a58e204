import assert from "node:assert/strict";
import { join } from "node:path";
import { createAgent, type Session } from "../../lib/agent/mod.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { setVaultEntry } from "../../lib/state/vault.ts";
import { item, turn } from "../support/model_server.ts";
import {
  assertGoodTrace,
  collect,
  completesOf,
  kinds,
  ofKind,
  requestMessages,
  waitFor,
  withAgentSession,
} from "./_support.ts";
import { withModelRoot } from "../support/roots.ts";

const withSession = withAgentSession;

const types = (stream: readonly OmniMessage[]) => completesOf(stream).map((m) => m.payload.type);

Deno.test("a plain answer streams partials, never echoes the prompt, and records usage then request_end", async () => {
  await withSession({ turns: [turn.text("Hello there, friend.")] }, async (session, sb) => {
    const stream = await collect(session.run("Say hello.", { approve: "allow-all" }));
    assert.deepEqual(types(stream), [
      "tool_list_ready",
      "request_begin",
      "text",
      "token_usage",
      "request_end",
    ]);
    const deltas = stream.filter((m) =>
      m.payload.type === "partial_text" && m.payload.event_type === "delta"
    )
      .map((m) => (m.payload as { text: string }).text).join("");
    assert.equal(deltas, "Hello there, friend.");
    assert.ok(!stream.some((m) => m.payload.type === "text" && m.payload.role === "user"));
    const records = await assertGoodTrace(sb.root, session.sessionId);
    assert.deepEqual(kinds(records), [
      "session_meta",
      "text",
      "tool_list_ready",
      "request_begin",
      "text",
      "token_usage",
      "request_end",
    ]);
    const usage = ofKind(records, "token_usage")[0]!;
    assert.deepEqual(usage.session, usage.request);
    assert.equal(session.usage().lastRequestTotal, (usage.request as { total: number }).total);
  });
});

Deno.test("a tool loop feeds each turn's outputs back and keeps session token totals running", async () => {
  await withSession({
    turns: [
      turn.toolCall("write_file", { file_path: "notes/a.txt", content: "one\ntwo\n" }),
      turn.toolCall("edit_file", {
        file_path: "notes/a.txt",
        old_string: "two",
        new_string: "three",
      }),
      turn.text("Edited."),
    ],
  }, async (session, sb, server) => {
    const stream = await collect(session.run("Write then edit a file.", { approve: "allow-all" }));
    assert.equal(await Deno.readTextFile(join(sb.workspace, "notes/a.txt")), "one\nthree\n");
    assert.equal(server.requests.length, 3);
    const second = requestMessages(server, 1);
    const tool = second.find((m) => m.role === "tool");
    assert.match(String(tool?.content), /^Created "notes\/a.txt"/);
    const third = requestMessages(server, 2);
    assert.match(String(third.at(-1)?.content), /^Replaced 1 occurrence/);
    const usages = stream.filter((m) => m.payload.type === "token_usage")
      .map((m) => m.payload as { session: { total: number }; request: { total: number } });
    assert.equal(usages.length, 3);
    assert.equal(usages[2]!.session.total, usages.reduce((n, u) => n + u.request.total, 0));
    const records = await assertGoodTrace(sb.root, session.sessionId);
    assert.equal(ofKind(records, "request_begin").length, 3);
  });
});

Deno.test("parallel tool calls run concurrently, stream in completion order and go back in call order", async () => {
  await withSession({
    turns: [
      turn.of(
        // The slow call ends only once the test has seen the fast call's output.
        item.toolCall("exec_command", {
          cmd: "until [ -e go ]; do sleep 0.02; done; echo slow",
          description: "slow",
        }, { id: "c_slow" }),
        item.toolCall("read_file", { file_path: "f.txt" }, { id: "c_fast" }),
      ),
      turn.text("Both done."),
    ],
  }, async (session, sb, server) => {
    await Deno.writeTextFile(join(sb.workspace, "f.txt"), "fast\n");
    const stream = [];
    for await (const m of session.run("Do both.", { approve: "allow-all" })) {
      stream.push(m);
      const p = m.payload as { type: string; tool_call_id?: string };
      if (p.type === "tool_call_output" && p.tool_call_id === "c_fast") {
        await Deno.writeTextFile(join(sb.workspace, "go"), "");
      }
    }
    const outputs = stream.filter((m) => m.payload.type === "tool_call_output")
      .map((m) => (m.payload as { tool_call_id: string }).tool_call_id);
    assert.deepEqual(outputs, ["c_fast", "c_slow"], "completion order on the stream");
    const fed = requestMessages(server, 1).filter((m) => m.role === "tool").map((m) =>
      m.tool_call_id
    );
    assert.deepEqual(fed, ["c_slow", "c_fast"], "call order in the next request");
    const records = await assertGoodTrace(sb.root, session.sessionId);
    const k = kinds(records);
    assert.ok(
      k.indexOf("request_end") < k.lastIndexOf("tool_call_output"),
      "the slow output lands after request_end",
    );
  });
});

Deno.test("max_turns stops with a failed assistant notice and carries the pending outputs over", async () => {
  await withSession({
    turns: [turn.toolCall("read_file", { file_path: "x.txt" }), turn.text("next task answer")],
  }, async (session, sb, server) => {
    const stream = await collect(session.run("Read x.", { approve: "allow-all" }));
    const note = stream.at(-1)!.payload as Record<string, unknown>;
    assert.deepEqual([note.type, note.role, note.text, note.stop_reason], [
      "text",
      "assistant",
      "[reached max turns (1); stopping]",
      "failed",
    ]);
    assert.ok(!stream.some((m) => m.payload.type === "abort"), "no abort event");
    await collect(session.run("Go on.", { approve: "allow-all" }));
    const next = requestMessages(server, 1);
    const i = next.findIndex((m) => m.role === "tool");
    assert.ok(i > 0, "the carried tool output is sent");
    assert.equal(next[i + 1]?.content, "Go on.");
    await assertGoodTrace(sb.root, session.sessionId);
  }, { maxTurns: 1 });
});

Deno.test("steering is delivered as [user_steering] at the next input, even after a no-tool turn", async () => {
  let session: Session | undefined;
  await withSession({
    handler: (_req, i) => {
      if (i === 0) {
        assert.ok(session!.steer("Also mention penguins."));
        return turn.text("First answer.");
      }
      return i === 1 ? turn.text("Penguins!") : undefined;
    },
  }, async (s, sb, server) => {
    session = s;
    assert.equal(s.steer("too early"), false, "steer is refused while idle");
    const stream = await collect(s.run("Answer.", { approve: "allow-all" }));
    const steering = stream.find((m) => m.payload.type === "text" && m.payload.role === "user");
    assert.equal(
      (steering?.payload as { text: string }).text,
      "[user_steering]\nAlso mention penguins.\n[/user_steering]",
    );
    assert.equal(server.requests.length, 2);
    assert.equal(
      requestMessages(server, 1).at(-1)?.content,
      "[user_steering]\nAlso mention penguins.\n[/user_steering]",
    );
    assert.equal(s.steer("after the end"), false);
    const records = await assertGoodTrace(sb.root, s.sessionId);
    assert.equal(ofKind(records, "text").filter((t) => t.role === "user").length, 2);
  });
});

Deno.test("a background command's completion notice rides the next run as a harness message", async () => {
  await withSession({
    turns: [
      turn.toolCall("exec_command", {
        cmd: "until [ -e go ]; do sleep 0.02; done; echo bg-finished",
        description: "bg",
        run_in_background: true,
      }),
      turn.text("Started it."),
      turn.text("Saw the notice."),
    ],
  }, async (session, sb, server) => {
    let arrived = false;
    session.onBackgroundNotice(() => (arrived = true));
    await collect(session.run("Start it in the background.", { approve: "allow-all" }));
    // Only now may the command finish: its notice cannot ride the first run.
    await Deno.writeTextFile(join(sb.workspace, "go"), "");
    await waitFor(() => arrived, "the background notice");
    const stream = await collect(session.run("Anything new?", { approve: "allow-all" }));
    const notice = stream.find((m) => m.payload.type === "text" && m.payload.role === "user");
    assert.equal((notice?.payload as { sender?: string }).sender, "harness");
    assert.match(
      (notice?.payload as { text: string }).text,
      /\[background_task_done\][\s\S]*bg-finished/,
    );
    const sent = requestMessages(server, 2).map((m) => JSON.stringify(m.content));
    assert.ok(sent.some((c) => c.includes("bg-finished")), "the notice reaches the model");
    await assertGoodTrace(sb.root, session.sessionId);
  });
});

Deno.test("a running command is polled to completion with input_command", async () => {
  await withSession({
    handler: (req, i) => {
      if (i === 0) {
        return turn.toolCall("exec_command", {
          cmd: "sleep 0.6; echo polled-done",
          description: "slow",
          yield_time_ms: 250,
        });
      }
      if (i === 1) {
        const msgs = (req.body as { messages: { role: string; content: string }[] }).messages;
        const id = /proc-[0-9a-f]{8}/.exec(msgs.at(-1)!.content)?.[0];
        return turn.toolCall("input_command", { process_id: id ?? "missing", description: "poll" });
      }
      return i === 2 ? turn.text("It finished.") : undefined;
    },
  }, async (session, sb, server) => {
    await collect(session.run("Run it and wait.", { approve: "allow-all" }));
    const first = String(requestMessages(server, 1).at(-1)?.content);
    assert.match(first, /process running with process_id proc-[0-9a-f]{8}/);
    const second = String(requestMessages(server, 2).at(-1)?.content);
    assert.match(second, /polled-done/);
    await assertGoodTrace(sb.root, session.sessionId);
  });
});

Deno.test("commands get vault values (masked in their output) but never provider keys or PENGUIN_* variables", async () => {
  await withModelRoot({
    turns: [
      turn.toolCall("exec_command", {
        cmd: '[ "$DEPLOY_TOKEN" = tok-123 ] && echo "vault-ok vault=$DEPLOY_TOKEN ' +
          'key=${OPENAI_API_KEY:-none} home=${PENGUIN_HOME:-none}"',
        description: "env",
      }),
      turn.text("ok"),
    ],
  }, async (sb) => {
    const first = await createAgent({ root: sb.root });
    await setVaultEntry(first.paths.vault, "DEPLOY_TOKEN", "tok-123");
    const agent = await createAgent({
      root: sb.root,
      env: { ...Deno.env.toObject(), OPENAI_API_KEY: "sk-secret", PENGUIN_HOME: sb.root },
    });
    const session = await agent.createSession({ workspaceDir: sb.workspace });
    const stream = await collect(session.run("Show env.", { approve: "allow-all" }));
    await session.dispose();
    const out = stream.find((m) => m.payload.type === "tool_call_output")!.payload as {
      output: string;
    };
    assert.match(
      out.output,
      /vault-ok vault=\[redacted:vault:DEPLOY_TOKEN\] key=none home=none/,
    );
    assert.ok(!out.output.includes("tok-123"));
    await assertGoodTrace(sb.root, session.sessionId);
  });
});
