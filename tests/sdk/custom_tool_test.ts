// docs/sdk.md's SDK example, run for real: a tool defined in one file is
// offered to the model next to the built-ins, called, and recorded in the
// trace like any other tool.
import assert from "node:assert/strict";
import { agent as penguin, tools } from "../../lib/mod.ts";
import { turn } from "../support/model_server.ts";
import { assertGoodTrace, collect } from "../agent/_support.ts";
import { wordCountTool } from "./word_count.ts";
import { withModelRoot } from "../support/roots.ts";

Deno.test("word_count counts words, and explains bad arguments without running", async () => {
  const tool = wordCountTool.create();
  const ctx = { sessionId: "s", toolCallId: "c", signal: new AbortController().signal };
  const events = [];
  for await (const e of tool.run({ text: "one two  three" }, ctx)) events.push(e);
  assert.deepEqual(events, [{ type: "delta", text: "3 words" }]);

  const bad = [];
  for await (const e of tool.run({ text: 3 }, ctx)) bad.push(e);
  assert.match((bad[0] as { text: string }).text, /^word_count was not run: argument "text"/);
  assert.deepEqual(bad[1], { type: "result", status: "failed" });
  const previews = (name: string) => name === "word_count" ? wordCountTool.preview : undefined;
  const shown = (json: string, final: boolean) =>
    tools.toolCallPreview("word_count", json, { final, previews });
  assert.equal(shown('{"text": "count these words"}', true), "word_count <- count these words");
  assert.equal(shown('{"text": "count th', false), null, "nothing while it streams");
});

Deno.test("a session given a tool source offers its tool after the built-ins, runs it and traces it", async () => {
  await withModelRoot({
    turns: [turn.toolCall("word_count", { text: "one two three" }), turn.text("three")],
  }, async (sb, server) => {
    const agent = await penguin.createAgent({ root: sb.root });
    const session = await agent.createSession({
      workspaceDir: sb.workspace,
      tools: [tools.toolSource("example", [wordCountTool])],
    });
    assert.equal(session.tools.at(-1)!.name, "word_count");
    assert.equal(session.toolPermission("word_count"), "r");
    assert.equal(session.toolPreview("word_count", { text: "one two" }), "word_count <- one two");
    assert.equal(session.toolPreview("exec_command", { cmd: "ls" }), "exec_command <- $ ls");
    assert.equal(session.toolPreview("no_such_tool", {}), undefined);
    await collect(session.run("How many words?", { approve: "read-only" }));
    await session.dispose();

    const records = await assertGoodTrace(sb.root, session.sessionId);
    const list = records.find((m) => m.payload.type === "tool_list_ready")!.payload as {
      tools: { name: string; description: string; parameters: Record<string, unknown> }[];
    };
    const offered = list.tools.find((t) => t.name === "word_count");
    assert.deepEqual(offered, {
      name: "word_count",
      description: "Count the words of a text.",
      parameters: {
        type: "object",
        properties: { text: { type: "string", description: "The text to count." } },
        required: ["text"],
      },
    });
    assert.ok(list.tools.findIndex((t) => t.name === "read_file") < list.tools.length - 1);
    const decision = records.find((m) => m.payload.type === "approval_decision")!.payload;
    assert.equal((decision as { decision: string }).decision, "allow");
    const output = records.find((m) => m.payload.type === "tool_call_output")!
      .payload as unknown as { output: string; stop_reason: string };
    assert.deepEqual([output.output, output.stop_reason], ["3 words", "completed"]);
    const sent = server.requests[0]!.body as { tools: { function: { name: string } }[] };
    assert.ok(sent.tools.some((t) => t.function.name === "word_count"));
  });
});
