// The live renderer (`penguin run`/`chat`) and the offline one (`trace show`,
// `trace follow`) print the same event records with the same labels.
import assert from "node:assert/strict";
import { builtinToolPreviews } from "../../lib/agent/tool_previews.ts";
import type { EventPayload, OmniMessage } from "../../lib/protocol/types.ts";
import { createRenderer as createLive, renderHistory } from "../../lib/cli/render/mod.ts";
import { createRenderer as createOffline } from "../../lib/inspect/render.ts";
import { makeStyle, paletteFor } from "../../lib/display/palette.ts";
import { join } from "node:path";
import { loadConversation } from "../../lib/inspect/conversation.ts";
import { renderMarkdown } from "../../lib/inspect/export_md.ts";
import { renderHtml } from "../../lib/inspect/export_html.ts";
import { sid, traceBuilder } from "../inspect/_support.ts";

let clock = Date.UTC(2026, 0, 1);
function event(payload: EventPayload, advanceMs = 0): OmniMessage {
  clock += advanceMs;
  return { timestamp: new Date(clock).toISOString(), type: "event_msg", payload };
}

function live(msgs: OmniMessage[]): string[] {
  let out = "";
  const r = createLive({
    write: (t) => (out += t),
    color: false,
    collapse: true,
    toolPreviews: builtinToolPreviews,
  });
  r.beginTask();
  for (const m of msgs) r.push(m);
  r.endTask();
  return out.split("\n").filter((l) => l !== "" && !l.startsWith("[stats]"));
}

function offline(msgs: OmniMessage[]): string[] {
  const r = createOffline({ style: makeStyle(false) });
  return msgs.map((m) => r.record(m)).join("").split("\n").filter((l) => l !== "");
}

const CASES: [string, EventPayload[]][] = [
  ["an abort with a reason", [{ type: "abort", reason: "interrupted by the user" }]],
  ["an abort without a reason", [{ type: "abort", reason: null }]],
  ["a summarizing compaction", [
    { type: "compaction_begin", mode: "summarize", reason: "context", context: 9000, turns: 4 },
    { type: "compaction_end", mode: "summarize", reason: "context", status: "completed" },
  ]],
  ["a failed discarding compaction", [
    { type: "compaction_begin", mode: "discard", reason: "manual", context: 9000, turns: 4 },
    {
      type: "compaction_end",
      mode: "discard",
      reason: "manual",
      status: "failed",
      error_message: "boom",
    },
  ]],
  ["a finished goal", [{
    type: "goal_finished",
    outcome: "budget_limited",
    rounds: 3,
    tokens_used: 1_234_567,
  }]],
  ["a moved workspace", [{ type: "workspace_moved", from: "/a", to: "/b" }]],
  ["a model switch", [{
    type: "model_switched",
    provider: "custom",
    model_id: "other",
    previous_provider: "custom",
    previous_model_id: "m",
  }]],
  ["an MCP connect with one server down", [
    { type: "mcp_connect_begin", servers: ["fs", "web"] },
    {
      type: "mcp_connect_end",
      status: "completed",
      results: [
        { server: "fs", transport: "stdio", status: "completed", duration_ms: 100 },
        {
          server: "web",
          transport: "http",
          status: "failed",
          error: "refused",
          duration_ms: 1500,
        },
      ],
    },
  ]],
];

for (const [name, payloads] of CASES) {
  Deno.test(`live and offline renderers print the same label for ${name}`, () => {
    const msgs = payloads.map((p) => event(p as EventPayload, 1500));
    const a = live(msgs);
    assert.ok(a.length > 0);
    assert.deepEqual(offline(msgs), a);
  });
}

Deno.test("live and offline renderers print the same [retry] line for a planned retry", () => {
  const end = {
    type: "request_end",
    status: "failed",
    error_message: "HTTP 503 from api.example.com: overloaded",
    attempt: 1,
    retry_in_ms: 2000,
  } as EventPayload;
  const a = live([event({ type: "request_begin" } as EventPayload), event(end, 100)]);
  const b = offline([event({ type: "request_begin" } as EventPayload), event(end, 100)]);
  assert.equal(a.length, 1, a.join("\n"));
  assert.ok(a[0]!.startsWith("[retry] "), a[0]);
  assert.ok(b.includes(`${a[0]} · 100ms`), b.join("\n"));
});

function toolCall(name: string, args: unknown, id: string): OmniMessage {
  return {
    timestamp: new Date(clock).toISOString(),
    type: "model_msg",
    payload: {
      type: "tool_call",
      role: "assistant",
      tool_call_id: id,
      name,
      arguments: JSON.stringify(args),
      stop_reason: "completed",
    },
  } as OmniMessage;
}

Deno.test("live history and trace show print the same tool-call line for every previewed tool", () => {
  const calls = [
    toolCall("exec_command", { cmd: "ls -la", description: "List files" }, "call_001"),
    toolCall("exec_command", { cmd: "seq 3" }, "call_002"),
    toolCall("input_command", { process_id: "p1", chars: "y\n" }, "call_003"),
    toolCall("run_subagent", { prompt: "Find the bug." }, "call_004"),
    toolCall("input_subagent", { subagent_id: "s1", prompt: "Go on." }, "call_005"),
    toolCall("read_file", { file_path: "/a/b/c/d.ts" }, "call_006"),
    toolCall("read_image", { source: "/img/x/y.png" }, "call_007"),
    toolCall("kill_command", { process_id: "p1" }, "call_008"),
  ];
  for (const c of calls) {
    const history = renderHistory([c], {
      palette: paletteFor(false),
      collapse: true,
      toolPreviews: builtinToolPreviews,
    });
    const shown = offline([c])[0];
    assert.equal(shown, history.split("\n")[0], JSON.stringify(c.payload));
  }
});

Deno.test("trace show and trace export (Markdown, HTML) print the same event labels", async () => {
  const dir = await Deno.makeTempDir({ prefix: "penguin-labels-" });
  try {
    const id = sid("1abe1001");
    const b = traceBuilder(id).meta().user("go")
      .begin().call("exec_command", { cmd: "ls" }, "call_1").approve("call_1", "deny").end()
      .begin().end("timeout", { error_message: "socket hang up", attempt: 1, retry_in_ms: 2000 })
      .begin().end("failed", { error_message: "HTTP 400: bad request", attempt: 1 })
      .abort("interrupted by the user");
    const path = join(dir, `${id}_001.jsonl`);
    await Deno.writeTextFile(path, b.jsonl());
    const shown = offline(b.records);
    const labels = shown.filter((l) => /^(× |\[retry\]|\[request |\[abort\])/.test(l))
      .map((l) => l.replace(/ \[#\d+\]$/, "").replace(/ · \d+ms$/, ""));
    assert.equal(labels.length, 4, shown.join("\n"));
    const conv = await loadConversation({ key: id, files: [{ path, index: 1 }] }, {
      family: false,
    });
    const md = renderMarkdown(conv);
    const html = renderHtml(conv);
    for (const label of labels) {
      assert.ok(md.includes(label), `${label}\n---\n${md}`);
      assert.ok(html.includes(escapeHtml(label)), `${label} in the HTML export`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
