// A trace penguin writes now carries its background facts as typed fields
// (`penguin_subagent` on run_subagent outputs, `penguin_notice` on the
// harness notices), and the restore after a restart reads the same state
// from it with or without them (without: from the wording, as in
// PenguinHarness's traces).
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, type RecordedRequest, startModelServer, turn } from "../support/model_server.ts";
import { inRoot, spawnCli } from "../support/cli.ts";
import { assertGoodTrace, makeRoot, readSession, tracesDir } from "../agent/_support.ts";
import { turnOf, userTexts, whose } from "../agent/_subagent_support.ts";
import {
  type ChildFacts,
  childProgress,
  parentFacts,
  planRestore,
} from "../../lib/agent/subagents/mod.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { runSubagent } from "./_subagent_calls.ts";

/** The ids of the sessions traced under `root`, with the source of each. */
async function sessions(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const day of Deno.readDir(tracesDir(root))) {
    for await (const f of Deno.readDir(join(tracesDir(root), day.name))) {
      const text = await Deno.readTextFile(join(tracesDir(root), day.name, f.name));
      const meta = JSON.parse(text.slice(0, text.indexOf("\n")));
      out.set(meta.payload.session_id, String(meta.payload.source ?? ""));
    }
  }
  return out;
}

/** The records without penguin's typed background fields. */
function stripped(records: readonly OmniMessage[]): OmniMessage[] {
  return records.map((m) => {
    const { penguin_subagent: _s, penguin_notice: _n, penguin_process: _p, ...payload } = m
      .payload as Record<string, unknown>;
    return { ...m, payload } as OmniMessage;
  });
}

/** The payloads of `records` of payload type `type` that carry `field`. */
function carrying(records: readonly OmniMessage[], type: string, field: string) {
  return records.map((m) => m.payload as Record<string, unknown>)
    .filter((p) => p.type === type && p[field] !== undefined);
}

Deno.test("a run's trace carries typed subagent and notice facts, and restore reads the same state without them", async () => {
  // The child answers only once a parent request carries the command's notice,
  // so both notices are recorded whatever the order of the machine's events.
  const { promise: commandReported, resolve: sawCommandNotice } = Promise.withResolvers<void>();
  const handler = async (req: RecordedRequest) => {
    if (whose(req) === "child") {
      await commandReported;
      return turn.text("child result: 42");
    }
    if (/\[background_task_done\][\s\S]*kind: command/.test(userTexts(req).join("\n"))) {
      sawCommandNotice();
    }
    if (turnOf(req) === 0) {
      return turn.of(
        runSubagent("call_child", "background work", "[[child]] compute the answer", true),
        item.toolCall("exec_command", {
          description: "background command",
          cmd: "echo command-done",
          run_in_background: true,
        }, { id: "call_cmd" }),
      );
    }
    return turn.text(`round ${turnOf(req)}`);
  };
  const server = await startModelServer({ handler, maxRequests: 20 });
  const sb = await makeRoot(server);
  try {
    const child = spawnCli(inRoot(sb, "run", "-m", "[[parent]] delegate"));
    const [status, stderr] = await Promise.all([
      child.status,
      new Response(child.stderr).text(),
      new Response(child.stdout).text(),
    ]);
    assert.equal(status.code, 0, stderr);

    const ids = await sessions(sb.root);
    const parentId = [...ids].find(([, source]) => source !== "subagent")![0];
    const childId = [...ids].find(([, source]) => source === "subagent")![0];
    const records = await assertGoodTrace(sb.root, parentId);

    const spawned = carrying(records, "tool_call_output", "penguin_subagent");
    assert.equal(spawned.length, 1);
    const facts = spawned[0]!.penguin_subagent as Record<string, unknown>;
    assert.match(String(facts.id), /^subagent-[A-Za-z0-9]+$/);
    assert.deepEqual({ ...facts, id: "" }, {
      id: "",
      session_id: childId,
      kind: "background",
      state: "running",
      parent_tool_call_id: spawned[0]!.tool_call_id,
    });
    const notices = carrying(records, "text", "penguin_notice").map((p) => p.penguin_notice);
    const processId = (carrying(records, "tool_call_output", "penguin_process")[0]!
      .penguin_process as { id: string }).id;
    assert.deepEqual(
      new Set(notices.map((n) => JSON.stringify(n))),
      new Set([
        JSON.stringify({ kind: "command", id: processId, status: "completed" }),
        JSON.stringify({ kind: "subagent", id: facts.id, status: "completed" }),
      ]),
    );

    // The same state from the typed fields and from the wording alone.
    const kids = new Map<string, ChildFacts>([
      [childId, {
        ...childProgress(await readSession(sb.root, childId)),
        agentId: "default_agent",
      }],
    ]);
    const typed = parentFacts(records);
    const legacy = parentFacts(stripped(records));
    assert.deepEqual(legacy.notices, typed.notices);
    assert.equal(typed.notices.length, 2);
    const plan = planRestore(typed, kids);
    assert.deepEqual(planRestore(legacy, kids), plan);
    assert.deepEqual(plan.children.map((c) => [c.id, c.sessionId, c.state, c.background]), [[
      facts.id,
      childId,
      "idle",
      true,
    ]]);
    assert.deepEqual(plan.notices, [], "both tasks were reported before the run ended");
  } finally {
    await server.close();
    await sb.cleanup();
  }
});
