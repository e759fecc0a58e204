import assert from "node:assert/strict";
import { join } from "node:path";
import { otlpFromSession, writeOtlp } from "../../lib/telemetry/export_file.ts";
import { groupSessions, type SessionFiles } from "../../lib/trace/session_files.ts";
import { REPO } from "../support/cli.ts";
import { PLANTED } from "../inspect/_secrets.ts";
import { FIXTURES, fixturesPresent, sid, traceBuilder, withTempDir } from "../inspect/_support.ts";
import { byId, decodeSpans, named, type Span } from "./_otlp.ts";
import { eventMsg } from "../../lib/protocol/builders.ts";

async function exportOf(paths: string[], opts = {}) {
  const sessions = await groupSessions(paths);
  assert.equal(sessions.length, 1);
  return await otlpFromSession(sessions[0]!, opts);
}

function roots(spans: Span[]): Span[] {
  return spans.filter((s) => s.parentSpanId === undefined);
}

Deno.test({
  name:
    "otlp: a PenguinHarness parent and its subagent child are one trace, the child under run_subagent",
  ignore: !fixturesPresent,
  async fn() {
    const body = await exportOf([join(FIXTURES, "05-subagent-parent.jsonl")]);
    const spans = decodeSpans(body);
    assert.equal(new Set(spans.map((s) => s.traceId)).size, 1, "one trace");
    assert.equal(roots(spans).length, 1, "one root");
    const sessions = named(spans, "session ");
    assert.equal(sessions.length, 2, "parent and child sessions");
    const child = sessions.find((s) => s.parentSpanId !== undefined)!;
    const spawn = byId(spans, child.parentSpanId)!;
    assert.equal(spawn.name, "execute_tool run_subagent");
    assert.equal(spawn.attrs["gen_ai.tool.call.id"], "run_subagent");
    assert.equal(spawn.attrs["penguin.subagent.session_id"], child.attrs["gen_ai.conversation.id"]);
    assert.equal(child.attrs["penguin.session.source"], "subagent");
    // parent: 3 requests, 2 tool calls; child: 3 requests, 2 tool calls
    assert.equal(named(spans, "chat mock").length, 6);
    assert.equal(named(spans, "execute_tool ").length, 4);
    assert.equal(named(spans, "invoke_agent ").length, 2);
    for (const r of named(spans, "chat ")) {
      assert.equal(r.kind, 3, "client");
      assert.equal(byId(spans, r.parentSpanId)!.name, "invoke_agent default_agent");
      assert.equal(r.attrs["gen_ai.operation.name"], "chat");
      assert.equal(r.attrs["gen_ai.provider.name"], "custom");
      assert.equal(r.attrs["gen_ai.request.model"], "mock");
      assert.equal(r.attrs["gen_ai.usage.input_tokens"], 120);
      assert.equal(r.attrs["gen_ai.usage.output_tokens"], 12);
      assert.ok(
        ["stop", "tool_calls"].includes(
          (r.attrs["gen_ai.response.finish_reasons"] as string[])[0]!,
        ),
      );
    }
    for (const t of named(spans, "execute_tool ")) {
      assert.equal(t.attrs["gen_ai.operation.name"], "execute_tool");
      assert.equal(t.attrs["penguin.tool.approval"], "allow");
      assert.equal(t.attrs["penguin.tool.status"], "completed");
      assert.equal(t.status.code, 0);
      assert.ok(t.end > t.start, "a tool call lasts from the call to its output");
    }
    const root = roots(spans)[0]!;
    assert.equal(root.attrs["gen_ai.usage.input_tokens"], 360);
    assert.equal(root.attrs["penguin.session.tool_calls"], 2);
    // Without children only the parent's spans remain.
    const alone = decodeSpans(
      await exportOf([join(FIXTURES, "05-subagent-parent.jsonl")], { children: false }),
    );
    assert.equal(named(alone, "session ").length, 1);
  },
});

Deno.test({
  name:
    "otlp: a compaction is a span holding its summary request, and the rotated file adds no root",
  ignore: !fixturesPresent,
  async fn() {
    const spans = decodeSpans(
      await exportOf([
        join(FIXTURES, "04-compaction_001.jsonl"),
        join(FIXTURES, "04-compaction_002.jsonl"),
      ]),
    );
    assert.equal(roots(spans).length, 1);
    const [compaction] = named(spans, "compaction ");
    assert.ok(compaction);
    assert.equal(compaction.attrs["penguin.compaction.reason"], "turns");
    assert.equal(compaction.attrs["penguin.compaction.status"], "completed");
    assert.equal(byId(spans, compaction.parentSpanId)!.name, "invoke_agent default_agent");
    const inside = spans.filter((s) => s.parentSpanId === compaction.spanId);
    assert.equal(inside.length, 1);
    assert.equal(inside[0]!.attrs["penguin.request.compaction"], true);
    assert.equal(named(spans, "execute_tool ").length, 6);
    assert.equal(named(spans, "invoke_agent ").length, 1, "the summary prompt starts no task");
  },
});

/** The parent session of penguin's own subagent sample (samples/subagents). */
async function subagentSampleParent(): Promise<SessionFiles> {
  const dir = join(REPO, "samples/subagents");
  const files: string[] = [];
  for await (const e of Deno.readDir(dir)) files.push(join(dir, e.name));
  const all = await groupSessions(files);
  const metas = await Promise.all(all.map((s) => Deno.readTextFile(s.files[0]!.path)));
  return all[metas.findIndex((m) => !m.includes('"parent":{'))]!;
}

Deno.test("otlp: penguin's own subagent sample links the child by its meta's parent, deterministically", async () => {
  const parentKey = await subagentSampleParent();
  const a = await otlpFromSession(parentKey);
  const b = await otlpFromSession(parentKey);
  assert.deepEqual(a, b, "same trace, same spans");
  const spans = decodeSpans(a);
  assert.equal(new Set(spans.map((s) => s.traceId)).size, 1);
  const child = named(spans, "session ").find((s) => s.parentSpanId !== undefined)!;
  assert.match(byId(spans, child.parentSpanId)!.name, /^execute_tool run_subagent$/);
});

Deno.test("otlp: the streamed export is byte for byte the whole request, with content and children", async () => {
  const parent = await subagentSampleParent();
  const opts = { includeContent: true };
  const pieces: string[] = [];
  await writeOtlp(parent, opts, (t) => {
    pieces.push(t);
    return Promise.resolve();
  });
  const whole = JSON.stringify(await otlpFromSession(parent, opts)) + "\n";
  assert.equal(pieces.join(""), whole);
  const spans = decodeSpans(JSON.parse(whole));
  assert.ok(pieces.length >= spans.length, `${pieces.length} writes for ${spans.length} spans`);
});

Deno.test("otlp: failures, denials and aborts are error spans; unfinished spans close at the end", async () => {
  const id = sid("0e1a0001");
  const b = traceBuilder(id, { provider: "google", modelId: "gemini-x" }).meta().tools()
    .user("first").begin().call("exec_command", { cmd: "rm -rf /" }, "c1").approve("c1", "deny")
    .usage(5, 10, 3).end("completed", { first_token_ms: 250 }).output("c1", "denied", "failed")
    .begin().end("failed", { error_message: "upstream 500", attempt: 1 })
    .abort("interrupted")
    .user("second").begin().call("read_file", { path: "x" }, "c2").approve("c2");
  await withTempDir(async (dir) => {
    const path = join(dir, `${id}_001.jsonl`);
    await Deno.writeTextFile(path, b.jsonl());
    const spans = decodeSpans(await exportOf([path]));
    const tasks = named(spans, "invoke_agent ");
    assert.equal(tasks.length, 2);
    assert.equal(tasks[0]!.status.code, 2);
    assert.equal(tasks[0]!.attrs["error.type"], "aborted");
    assert.equal(tasks[1]!.start - tasks[0]!.end, 100_000_000n, "a task ends at its last record");
    const [denied, open] = named(spans, "execute_tool ");
    assert.equal(denied!.attrs["penguin.tool.approval"], "deny");
    assert.equal(denied!.status.code, 2);
    assert.equal(denied!.attrs["error.type"], "approval_deny");
    assert.equal(open!.attrs["penguin.tool.status"], "unfinished");
    const reqs = named(spans, "chat gemini-x");
    assert.equal(reqs.length, 3);
    assert.equal(reqs[0]!.attrs["gen_ai.provider.name"], "gcp.gemini");
    assert.equal(reqs[0]!.attrs["gen_ai.usage.input_tokens"], 15);
    assert.equal(reqs[0]!.attrs["gen_ai.usage.cache_read.input_tokens"], 5);
    assert.equal(reqs[0]!.attrs["gen_ai.response.time_to_first_chunk"], 0.25);
    assert.equal(reqs[1]!.status.code, 2);
    assert.equal(reqs[1]!.status.message, "upstream 500");
    assert.equal(reqs[1]!.attrs["error.type"], "failed");
    assert.equal(reqs[2]!.attrs["error.type"], "unfinished");
  });
});

Deno.test("otlp: message contents stay out unless included, and included content is redacted", async () => {
  const id = sid("0e1a0002");
  const secret = PLANTED[0]!;
  const b = traceBuilder(id, { meta: { system_prompt: "SYSTEM-PROMPT-TEXT" } }).meta().tools()
    .user(`USER-PROMPT ${secret.text}`).begin().thinking("THINKING-TEXT")
    .call("exec_command", { cmd: `echo ${secret.text}` }, "c1").approve("c1").usage(0, 1, 1).end()
    .output("c1", `TOOL-OUTPUT ${secret.text}`).begin().text("ANSWER-TEXT").usage(0, 1, 1).end();
  await withTempDir(async (dir) => {
    const path = join(dir, `${id}_001.jsonl`);
    await Deno.writeTextFile(path, b.jsonl());
    const bare = JSON.stringify(await exportOf([path]));
    for (
      const word of [
        "SYSTEM-PROMPT",
        "USER-PROMPT",
        "THINKING-TEXT",
        "TOOL-OUTPUT",
        "ANSWER-TEXT",
        "echo",
        secret.secret,
      ]
    ) {
      assert.ok(!bare.includes(word), `${word} leaked without include_content`);
    }
    const full = await exportOf([path], { includeContent: true });
    const text = JSON.stringify(full);
    for (
      const word of ["SYSTEM-PROMPT", "USER-PROMPT", "THINKING-TEXT", "TOOL-OUTPUT", "ANSWER-TEXT"]
    ) {
      assert.ok(text.includes(word), `${word} missing with include_content`);
    }
    assert.ok(!text.includes(secret.secret), "redacted");
    assert.ok(text.includes(`[redacted:${secret.kind}]`));
    const spans = decodeSpans(full);
    const task = named(spans, "invoke_agent ")[0]!;
    const input = JSON.parse(String(task.attrs["gen_ai.input.messages"]));
    assert.equal(input[0].role, "user");
    assert.equal(input[0].parts[0].type, "text");
    const out = JSON.parse(String(named(spans, "chat ")[1]!.attrs["gen_ai.output.messages"]));
    assert.deepEqual(out[0].parts, [{ type: "text", content: "ANSWER-TEXT" }]);
    const raw = JSON.stringify(await exportOf([path], { includeContent: true, redact: false }));
    assert.ok(raw.includes(secret.secret.split("\n")[0]!));
  });
});

Deno.test("otlp: after a model_switched event, task and request spans name the new pair", async () => {
  const id = sid("0e1a0009");
  const b = traceBuilder(id, { provider: "custom", modelId: "old-model" }).meta().tools()
    .user("first").begin().usage(5, 10, 3).end("completed");
  const switched = eventMsg({
    type: "model_switched",
    provider: "deepseek",
    model_id: "new-model",
    previous_provider: "custom",
    previous_model_id: "old-model",
  });
  switched.timestamp = new Date(b.now() + 50).toISOString();
  b.records.push(switched);
  b.user("second").begin().usage(5, 10, 3).end("completed");
  await withTempDir(async (dir) => {
    const path = join(dir, `${id}_001.jsonl`);
    await Deno.writeTextFile(path, b.jsonl());
    const spans = decodeSpans(await exportOf([path]));
    const reqs = named(spans, "chat ");
    assert.deepEqual(reqs.map((r) => r.name), ["chat old-model", "chat new-model"]);
    assert.equal(reqs[1]!.attrs["gen_ai.request.model"], "new-model");
    assert.equal(reqs[1]!.attrs["gen_ai.provider.name"], "deepseek");
    const tasks = named(spans, "invoke_agent ");
    assert.equal(tasks[1]!.attrs["gen_ai.request.model"], "new-model");
  });
});
