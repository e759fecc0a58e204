// The built-in scripted model (lib/models/scripted) speaks real Chat Completions over 127.0.0.1:
// penguin's own openai-chat wire module and driver read it like any provider.
import assert from "node:assert/strict";
import {
  DEMO_GREETING,
  demoScript,
  type Script,
  startScriptedModel,
} from "../../lib/models/scripted/mod.ts";
import type { WireRequest } from "../../lib/models/wire.ts";
import type { CompleteMessage } from "../../lib/protocol/types.ts";
import { assistantText, toolCall, toolCallOutput, userText } from "../../lib/protocol/builders.ts";
import { assertPartialDiscipline, collect } from "./_support.ts";

function request(baseUrl: string, history: CompleteMessage[]): WireRequest {
  return {
    endpoint: {
      provider: "scripted",
      model_id: "penguin-demo",
      protocol: "openai-chat",
      base_url: baseUrl,
    },
    system_prompt: "system",
    tools: [],
    history,
  };
}

Deno.test("the scripted model streams its text and tool calls through the openai-chat driver", async () => {
  const script: Script = (req) =>
    req.turn === 0
      ? {
        text: "looking around first",
        calls: [
          { name: "exec_command", arguments: { cmd: "ls" } },
          { name: "read_file", arguments: { file_path: "a.txt" } },
        ],
      }
      : { text: `turn ${req.turn}, last message from ${req.messages.at(-1)?.role}` };
  const model = startScriptedModel(script);
  try {
    const first = await collect(request(model.baseUrl, [userText("go")]));
    assert.equal(first.outcome.status, "completed");
    assert.equal(first.outcome.finish_reason, "tool_call");
    assertPartialDiscipline(first.messages);
    assert.deepEqual(
      first.completes.map((m) =>
        m.type === "tool_call" ? `${m.name} ${m.arguments}` : m.type === "text" ? m.text : m.type
      ),
      ["looking around first", 'exec_command {"cmd":"ls"}', 'read_file {"file_path":"a.txt"}'],
    );
    assert.ok(
      first.usage && first.usage.output > 0 && first.usage.cache_write > 0,
      "usage is reported",
    );

    const second = await collect(request(model.baseUrl, [
      userText("go"),
      assistantText("looking around first"),
      toolCall("exec_command", '{"cmd":"ls"}', "call_0_0"),
      toolCallOutput("call_0_0", "a.txt"),
    ]));
    assert.deepEqual(
      second.completes.filter((m) => m.type === "text").map((m) => (m as { text: string }).text),
      ["turn 1, last message from tool"],
    );
    assert.equal(model.requests(), 2);
  } finally {
    await model.close();
  }
});

Deno.test("the demo script answers with what cat printed, and says so when it did not", () => {
  const at = (turn: number, lastTool: string) => ({
    turn,
    messages: [{ role: "user", text: "task" }, { role: "assistant", text: "" }, {
      role: "tool",
      text: lastTool,
    }],
  });
  assert.deepEqual(demoScript(at(0, "")).calls?.map((c) => c.name), ["exec_command"]);
  assert.deepEqual(demoScript(at(1, "")).calls?.map((c) => c.name), ["write_file"]);
  assert.deepEqual(demoScript(at(2, "")).calls?.[0]?.arguments, { cmd: "cat hello.txt" });
  const ok = demoScript(at(3, `${DEMO_GREETING}\n`));
  assert.equal(ok.calls, undefined);
  assert.match(ok.text!, /Done: `cat hello\.txt` printed/);
  const failed = demoScript(at(3, "bwrap: setting up uid map: Permission denied"));
  assert.match(
    failed.text!,
    /did not print the greeting.*Permission denied.*penguin sandbox check/,
  );
});

Deno.test("the scripted model refuses other paths with a 404 that names what it serves", async () => {
  const model = startScriptedModel(() => ({ text: "x" }));
  try {
    const r = await fetch(model.baseUrl.replace(/\/v1$/, "/v1/responses"), {
      method: "POST",
      body: "{}",
    });
    assert.equal(r.status, 404);
    assert.match((await r.json()).error.message, /only serves POST \/v1\/chat\/completions/);
    assert.equal(model.requests(), 0);
  } finally {
    await model.close();
  }
});
