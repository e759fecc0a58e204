import assert from "node:assert/strict";
import { join } from "node:path";
import { createAgent, type Session } from "../../lib/agent/mod.ts";
import { createChildRegistry, createRunSubagentTool } from "../../lib/agent/subagents/mod.ts";
import { executeTool } from "../../lib/tools/mod.ts";
import { toolCall } from "../../lib/protocol/builders.ts";
import { addModel } from "../../lib/state/project_config.ts";
import { listSessionFiles } from "../../lib/trace/paths.ts";
import { validateTraceFiles } from "../../lib/trace/validate.ts";
import { item, type RecordedRequest, startModelServer, turn } from "../support/model_server.ts";
import { assertGoodTrace, collect, makeRoot, ofKind, tracesDir, waitFor } from "./_support.ts";
import { childIds, turnOf, whose } from "./_subagent_support.ts";
import { withModelRoot } from "../support/roots.ts";

Deno.test("run_subagent validation failures are [run_subagent error: …] outputs and start no child", async () => {
  const bad: Record<string, unknown>[] = [
    { description: "no prompt" },
    { description: "half pair", prompt: "[[x]] hi", model_id: "m" },
    { description: "half pair", prompt: "[[x]] hi", provider: "custom" },
    { description: "bad level", prompt: "[[x]] hi", thinking_level: "extreme" },
    { description: "no such agent", prompt: "[[x]] hi", agent_id: "nobody" },
    { description: "unknown pair", prompt: "[[x]] hi", provider: "custom", model_id: "zzz" },
  ];
  await withModelRoot({
    turns: [
      turn.of(...bad.map((a, i) => item.toolCall("run_subagent", a, { id: `bad_${i}` }))),
      turn.text("ok"),
    ],
  }, async (sb) => {
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession({ workspaceDir: sb.workspace });
    const stream = await collect(session.run("[[parent]] go", { approve: "allow-all" }));
    await session.dispose();
    assert.deepEqual(childIds(stream), []);
    const records = await assertGoodTrace(sb.root, session.sessionId);
    assert.deepEqual(ofKind(records, "subagent"), []);
    const out = ofKind(records, "tool_call_output");
    assert.equal(out.length, bad.length);
    // Parallel calls: their outputs are recorded as each ends; read them by call id.
    const byId = new Map(out.map((p) => [String(p.tool_call_id), String(p.output)]));
    const texts = bad.map((_, i) => byId.get(`bad_${i}`) ?? "");
    for (const p of out) assert.equal(p.stop_reason, "failed");
    for (const t of texts) assert.match(t, /^\[run_subagent error: .*\]$/s);
    assert.match(texts[0]!, /"prompt" is missing/);
    assert.match(texts[1]!, /model_id and provider must be given together.*model_id alone/);
    assert.match(texts[2]!, /got provider alone/);
    assert.match(texts[3]!, /thinking_level must be one of low, medium, high, xhigh, max/);
    assert.match(texts[4]!, /agent "nobody" does not exist/);
    assert.match(texts[5]!, /could not be started: .*\(custom, zzz\)/);
    // Only the parent has a trace.
    const names: string[] = [];
    for await (const d of Deno.readDir(tracesDir(sb.root))) {
      if (d.name.startsWith(".")) continue;
      for await (const f of Deno.readDir(join(tracesDir(sb.root), d.name))) names.push(f.name);
    }
    assert.deepEqual(names, [`${session.sessionId}_001.jsonl`]);
  });
});

Deno.test("a child takes the call's explicit model pair and level, else the parent's pair and effective level", async () => {
  const handler = (req: RecordedRequest) => {
    const who = whose(req);
    if (who === "parent") {
      if (turnOf(req) > 0) return turn.text("done");
      return turn.of(
        item.toolCall("run_subagent", {
          description: "explicit",
          prompt: "[[explicit]] hi",
          provider: "custom",
          model_id: "m2",
          thinking_level: "high",
        }, { id: "c_explicit" }),
        item.toolCall("run_subagent", { description: "inherit", prompt: "[[inherit]] hi" }, {
          id: "c_inherit",
        }),
      );
    }
    return turn.text(`${who} answer`);
  };
  await withModelRoot({ handler, maxRequests: 10 }, async (sb, server) => {
    await addModel(join(sb.root, "default_project", ".project_config.toml"), {
      provider: "custom",
      model_id: "m2",
      base_url: server.baseUrl("openai-chat"),
      client_type: "openai-chat",
    });
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession({ workspaceDir: sb.workspace });
    const stream = await collect(
      session.run("[[parent]] go", { approve: "allow-all", thinkingLevel: "low" }),
    );
    await session.dispose();
    const req = (who: string) => server.requests.find((r) => whose(r) === who)!;
    const body = (who: string) => req(who).body as { model: string; reasoning_effort?: string };
    assert.equal(body("explicit").model, "m2");
    assert.equal(body("explicit").reasoning_effort, "high");
    assert.equal(body("inherit").model, "m");
    assert.equal(body("inherit").reasoning_effort, "low");
    const metas = childIds(stream).map((id) =>
      stream.find((m) => m.origin?.[0] === id && m.type === "session_meta")!.payload
    );
    assert.deepEqual(metas.map((m) => m.model_id).sort(), ["m", "m2"]);
    const records = await assertGoodTrace(sb.root, session.sessionId);
    const out = new Map(ofKind(records, "tool_call_output").map((p) => [p.tool_call_id, p.output]));
    assert.equal(out.get("c_explicit"), "explicit answer");
    assert.equal(out.get("c_inherit"), "inherit answer");
  });
});

Deno.test("a session at the depth cap refuses run_subagent with the depth limit error", async () => {
  const registry = createChildRegistry({ parentSessionId: "session-x", depth: 1 });
  const tool = createRunSubagentTool(registry);
  const items = await Array.fromAsync(
    executeTool(tool, toolCall("run_subagent", JSON.stringify({ prompt: "hi" }), "c1"), {
      workspace: "/tmp",
      sessionId: "session-x",
    }),
  );
  const out = items.at(-1) as { output: string; stop_reason: string };
  assert.equal(out.stop_reason, "failed");
  assert.match(out.output, /^\[run_subagent error: subagent depth limit 1 reached/);
});

Deno.test("at most 8 subagents are registered: a ninth background spawn is refused while all run", async () => {
  let session: Session | undefined;
  const handler = async (req: RecordedRequest) => {
    const who = whose(req);
    if (who === "parent") {
      const n = turnOf(req);
      if (n === 0) {
        return turn.of(
          ...Array.from({ length: 8 }, (_, i) =>
            item.toolCall("run_subagent", {
              description: "busy",
              prompt: `[[busy-${i}]] work`,
              run_in_background: true,
            }, { id: `bg_${i}` })),
        );
      }
      if (n === 1) {
        await waitFor(
          () => server.requests.filter((r) => whose(r).startsWith("busy-")).length === 8,
          "eight children asking their model",
        );
        return turn.of(item.toolCall("run_subagent", {
          description: "one more",
          prompt: "[[ninth]] work",
          run_in_background: true,
        }, { id: "bg_9" }));
      }
      return turn.text("done");
    }
    // The busy children hold their request open until they are stopped.
    return { ...turn.text("never"), stall_after: 0 };
  };
  const server = await startModelServer({ handler, maxRequests: 30, maxHoldMs: 20_000 });
  const sb = await makeRoot(server);
  try {
    const agent = await createAgent({ root: sb.root });
    session = await agent.createSession({ workspaceDir: sb.workspace });
    await collect(session.run("[[parent]] go", { approve: "allow-all" }));
    const tasks = session.backgroundTasks().filter((t) => t.kind === "subagent");
    assert.equal(tasks.length, 8);
    assert.ok(tasks.every((t) => t.state === "running" && t.notify));
    assert.ok(session.hasRunningBackgroundSubagents());
    const records = await assertGoodTrace(sb.root, session.sessionId);
    const ninth = ofKind(records, "tool_call_output").find((p) => p.tool_call_id === "bg_9")!;
    assert.equal(ninth.stop_reason, "failed");
    assert.match(
      String(ninth.output),
      /^\[run_subagent error: 8 subagents are registered and none of them is idle/,
    );
    assert.equal(ofKind(records, "subagent").length, 8);
    await session.dispose();
    assert.equal(session.backgroundTasks().length, 0);
    // Disposing the parent stopped every child: each trace ends with its abort.
    for (const p of ofKind(records, "subagent")) {
      const files = await listSessionFiles(tracesDir(sb.root), String(p.session_id));
      const text = await Deno.readTextFile(files.at(-1)!.path);
      assert.match(text.trimEnd().split("\n").at(-1)!, /"type":"abort"/);
    }
  } finally {
    await session?.dispose();
    await server.close();
    await sb.cleanup();
  }
});

Deno.test("a cross-agent child runs as the named agent, with its own state and traces, and its pointer resolves", async () => {
  const handler = (req: RecordedRequest) => {
    if (whose(req) === "parent") {
      if (turnOf(req) > 0) return turn.text("done");
      return turn.toolCall("run_subagent", {
        description: "ask the helper agent",
        prompt: "[[helper]] hi",
        agent_id: "helper",
      });
    }
    return turn.text("helper answer");
  };
  await withModelRoot({ handler, maxRequests: 10 }, async (sb) => {
    const helper = await createAgent({ root: sb.root, agentId: "helper" });
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession({ workspaceDir: sb.workspace });
    const stream = await collect(session.run("[[parent]] go", { approve: "allow-all" }));
    await session.dispose();
    const [kid] = childIds(stream);
    const meta = stream.find((m) => m.origin?.[0] === kid && m.type === "session_meta")!.payload;
    assert.equal(meta.agent_state, helper.paths.agentState);
    assert.equal(meta.workspace, sb.workspace);
    assert.equal((await listSessionFiles(tracesDir(sb.root, "helper"), kid!)).length, 1);
    assert.equal((await listSessionFiles(tracesDir(sb.root), kid!)).length, 0);
    const records = await assertGoodTrace(sb.root, session.sessionId);
    assert.equal(ofKind(records, "tool_call_output")[0]!.output, "helper answer");
    const report = await validateTraceFiles([join(sb.root, "default_project")]);
    assert.deepEqual(report.problems, [], "the pointer resolves in the sibling agent's traces");
  });
});
