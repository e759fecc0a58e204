// Live OpenTelemetry export from `penguin run`: the spans of a scripted run
// (a parent that starts a subagent) arrive at a loopback OTLP/HTTP receiver
// with the right parent/child structure, the same spans `trace export
// --format otlp` writes afterwards; a dead collector changes nothing for the task.
import assert from "node:assert/strict";
import {
  item,
  type ModelServerOptions,
  type RecordedRequest,
  turn,
} from "../support/model_server.ts";
import { inRoot, runCli } from "../support/cli.ts";
import { type Sandbox, withModelRoot } from "../support/roots.ts";
import { closedPort, type Collector, startCollector } from "../support/otlp_collector.ts";
import { turnOf, whose } from "../agent/_subagent_support.ts";
import { patchAgentConfig } from "../agent/_resume_support.ts";
import { createAgent } from "../../lib/agent/mod.ts";
import { byId, decodeSpans, named, type Span } from "../telemetry/_otlp.ts";

const handler = (req: RecordedRequest) => {
  const who = whose(req);
  if (who === "parent") {
    if (turnOf(req) === 0) {
      return turn.of(
        item.toolCall("run_subagent", { description: "a", prompt: "[[child]] do the part" }),
        item.toolCall("exec_command", { cmd: "echo hi" }),
      );
    }
    return turn.text("parent done");
  }
  return turn.text("child answer");
};

function sessionIdOf(stderr: string): string {
  const id = /^Session: (session-\S+)$/m.exec(stderr)?.[1];
  assert.ok(id, stderr);
  return id;
}

/** Run `body` with a root whose model is scripted by `model` and a loopback OTLP collector. */
async function withCollector(
  model: ModelServerOptions,
  body: (sb: Sandbox, collector: Collector) => Promise<void>,
): Promise<void> {
  const collector = startCollector();
  try {
    await withModelRoot(model, (sb) => body(sb, collector));
  } finally {
    await collector.close();
  }
}

function sortById(spans: Span[]): Span[] {
  return [...spans].sort((a, b) => (a.spanId < b.spanId ? -1 : 1));
}

Deno.test("run exports its spans live to an OTLP/HTTP collector, subagent under its tool call", async () => {
  await withCollector({ handler, maxRequests: 10 }, async (sb, collector) => {
    const r = await runCli(
      inRoot(sb, "run", "--approve", "allow-all", "-m", "[[parent]] go"),
      {
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
          OTEL_EXPORTER_OTLP_HEADERS: "x-team=penguin%20ops",
        },
      },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /telemetry/);
    // The run flushed before it exited: every span is already here.
    assert.ok(collector.received.length >= 1);
    for (const x of collector.received) {
      assert.equal(x.path, "/v1/traces");
      assert.equal(x.headers.get("x-team"), "penguin ops");
    }
    // Every batch is valid OTLP/JSON, and every parent is among the spans received.
    const spans = decodeSpans(...collector.received.map((x) => x.body));
    assert.equal(new Set(spans.map((s) => s.traceId)).size, 1, "one trace");
    const roots = spans.filter((s) => !s.parentSpanId);
    assert.equal(roots.length, 1);
    const sid = sessionIdOf(r.stderr);
    assert.equal(roots[0]!.attrs["gen_ai.conversation.id"], sid);
    const sessions = named(spans, "session ");
    assert.equal(sessions.length, 2);
    const child = sessions.find((s) => s.parentSpanId)!;
    const spawn = byId(spans, child.parentSpanId)!;
    assert.equal(spawn.name, "execute_tool run_subagent");
    assert.equal(byId(spans, spawn.parentSpanId)!.name, "invoke_agent default_agent");
    const exec = named(spans, "execute_tool exec_command")[0]!;
    assert.equal(exec.attrs["penguin.tool.approval"], "allow");
    assert.equal(exec.attrs["penguin.tool.status"], "completed");
    const chats = named(spans, "chat ");
    assert.equal(chats.length, 3, "two parent requests and one child request");
    for (const c of chats) {
      assert.equal(c.attrs["gen_ai.operation.name"], "chat");
      assert.equal(typeof c.attrs["gen_ai.response.time_to_first_chunk"], "number");
      assert.ok((c.attrs["gen_ai.usage.output_tokens"] as number) >= 0);
    }
    assert.ok(
      !JSON.stringify(collector.received.map((x) => x.body)).includes("[[parent]] go"),
      "no contents by default",
    );
    // The file export of the finished session gives the very same spans.
    const file = await runCli(["--root", sb.root, "trace", "export", sid, "--format", "otlp"]);
    assert.equal(file.code, 0, file.stderr);
    assert.deepEqual(sortById(decodeSpans(JSON.parse(file.stdout))), sortById(spans));
  });
});

Deno.test("run with an unreachable collector completes as usual: one warning, spans dropped with a count", async () => {
  await withModelRoot({
    turns: [turn.toolCall("exec_command", { cmd: "echo hi" }), turn.text("Done.")],
  }, async (sb) => {
    const port = closedPort();
    const r = await runCli(
      inRoot(sb, "run", "--approve", "allow-all", "-m", "go"),
      { env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${port}/v1/traces` } },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Done\./);
    const lines = r.stderr.split("\n").filter((l) => l.includes("telemetry"));
    assert.equal(lines.length, 2, r.stderr);
    assert.match(
      lines[0]!,
      /^\[penguin\] warning: telemetry: cannot export spans to http:\/\/127\.0\.0\.1:\d+\/v1\/traces: /,
    );
    assert.match(lines[1]!, /^\[penguin\] warning: telemetry: \d+ span\(s\) dropped, 0 sent to /);
    const dropped = Number(/(\d+) span\(s\) dropped/.exec(lines[1]!)![1]);
    assert.equal(dropped, 5, "session, task, two requests and a tool call");
  });
});

Deno.test("run with telemetry.otlp in system_config.yaml exports there, contents included when asked", async () => {
  await withCollector(
    { turns: [turn.text("Warm."), turn.text("The answer.")] },
    async (sb, collector) => {
      const init = await runCli(inRoot(sb, "run", "-m", "warm up"));
      assert.equal(init.code, 0, init.stderr);
      assert.equal(collector.received.length, 0);
      const path = `${sb.root}/default_project/agents/default_agent/agent_state/system_config.yaml`;
      const yaml = await Deno.readTextFile(path);
      await Deno.writeTextFile(
        path,
        `${yaml}\ntelemetry:\n  otlp:\n    endpoint: ${collector.endpoint}\n    headers:\n      authorization: Bearer cfg-token\n  include_content: true\n`,
      );
      const r = await runCli(inRoot(sb, "run", "-m", "the question"));
      assert.equal(r.code, 0, r.stderr);
      assert.ok(collector.received.length >= 1);
      assert.equal(collector.received[0]!.headers.get("authorization"), "Bearer cfg-token");
      const spans = decodeSpans(...collector.received.map((x) => x.body));
      const task = named(spans, "invoke_agent ")[0]!;
      assert.match(String(task.attrs["gen_ai.input.messages"]), /the question/);
      assert.match(
        String(named(spans, "chat ")[0]!.attrs["gen_ai.output.messages"]),
        /The answer\./,
      );
    },
  );
});

Deno.test("chat exports one session span with a task span per message, and a resumed run continues the trace", async () => {
  await withCollector(
    { turns: [turn.text("One."), turn.text("Two."), turn.text("Three.")] },
    async (sb, collector) => {
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint };
      const r = await runCli(inRoot(sb, "chat"), {
        stdin: "first\nsecond\n",
        env,
      });
      assert.equal(r.code, 0, r.stderr);
      const spans = decodeSpans(...collector.received.map((x) => x.body));
      const [root] = named(spans, "session ");
      assert.ok(root);
      const tasks = named(spans, "invoke_agent ");
      assert.equal(tasks.length, 2);
      for (const t of tasks) assert.equal(t.parentSpanId, root.spanId);
      assert.ok(tasks[0]!.end <= tasks[1]!.start, "a task ends by the next prompt");
      const sid = String(root.attrs["gen_ai.conversation.id"]);
      const before = collector.received.length;
      const resumed = await runCli(
        ["--root", sb.root, "run", "--resume", sid, "--approve", "allow-all", "-m", "third"],
        { env },
      );
      assert.equal(resumed.code, 0, resumed.stderr);
      const more = decodeSpans(...collector.received.slice(before).map((x) => x.body));
      assert.equal(new Set(more.map((s) => s.traceId)).size, 1);
      assert.equal(more[0]!.traceId, root.traceId, "the same session, the same trace");
      assert.equal(named(more, "invoke_agent ").length, 1);
      const ids = new Set(spans.map((s) => s.spanId));
      assert.ok(
        more.every((s) => !ids.has(s.spanId)),
        "a resumed run adds spans, it repeats none",
      );
    },
  );
});

Deno.test("a compaction mid-task is a live span holding its summary request", async () => {
  const write = (name: string) => turn.toolCall("write_file", { file_path: name, content: name });
  await withCollector(
    {
      turns: [
        write("a.txt"),
        write("b.txt"),
        turn.text("[summary]Wrote a.txt and b.txt.[/summary]"),
        turn.text("All done."),
      ],
    },
    async (sb, collector) => {
      await createAgent({ root: sb.root }); // writes the default config
      await patchAgentConfig(sb.root, { compaction: { max_session_turns: 2 } });
      const r = await runCli(
        inRoot(sb, "run", "--approve", "allow-all", "-m", "Write two files."),
        { env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint } },
      );
      assert.equal(r.code, 0, r.stderr);
      const spans = decodeSpans(...collector.received.map((x) => x.body));
      assert.equal(named(spans, "session ").length, 1, "the rotated file adds no session span");
      const [compaction] = named(spans, "compaction ");
      assert.ok(compaction, "a compaction span");
      assert.equal(compaction.attrs["penguin.compaction.status"], "completed");
      assert.equal(byId(spans, compaction.parentSpanId)!.name, "invoke_agent default_agent");
      const inside = spans.filter((s) => s.parentSpanId === compaction.spanId);
      assert.deepEqual(inside.map((s) => s.name), ["chat m"]);
      assert.equal(typeof inside[0]!.attrs["gen_ai.response.time_to_first_chunk"], "number");
      assert.equal(named(spans, "chat ").length, 4);
      assert.equal(named(spans, "execute_tool write_file").length, 2);
    },
  );
});

Deno.test("a collector's token in the endpoint's query is never printed (round 31 s02b)", async () => {
  await withModelRoot({
    turns: [turn.toolCall("exec_command", { cmd: "echo hi" }), turn.text("Done.")],
  }, async (sb) => {
    const port = closedPort();
    const token = "telQry9Hn4Bv7Ck2Mx6Pz8";
    const r = await runCli(
      inRoot(sb, "run", "--approve", "allow-all", "-m", "go"),
      {
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://u:pw1234@127.0.0.1:${port}/x?token=${token}` },
      },
    );
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stderr.split("\n").filter((l) => l.includes("telemetry"));
    assert.equal(lines.length, 2, r.stderr);
    // The path goes before the query; the query and the user information are not shown.
    assert.match(lines[0]!, /cannot export spans to http:\/\/127\.0\.0\.1:\d+\/x\/v1\/traces\?…: /);
    assert.ok(!r.stderr.includes(token.slice(0, 8)) && !r.stderr.includes("pw1234"), r.stderr);
  });
});
