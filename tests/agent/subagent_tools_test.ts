import assert from "node:assert/strict";
import { createAgent, type Session } from "../../lib/agent/mod.ts";
import type { ToolCallMessage } from "../../lib/protocol/types.ts";
import {
  type ModelServer,
  type RecordedRequest,
  startModelServer,
  turn,
} from "../support/model_server.ts";
import { assertGoodTrace, collect, makeRoot, ofKind, readSession, waitFor } from "./_support.ts";
import { toolResults, turnOf, whose } from "./_subagent_support.ts";
import { withModelRoot } from "../support/roots.ts";

const SUBAGENT_ID = /subagent_id (subagent-[0-9a-f]{8})/;

/** The subagent id named by the latest tool result of a parent request. */
function idFrom(req: RecordedRequest): string {
  for (const r of [...toolResults(req)].reverse()) {
    const m = SUBAGENT_ID.exec(r.text);
    if (m) return m[1]!;
  }
  throw new Error("no subagent id in the tool results");
}

function gate(): { open(): void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

Deno.test("a child still running at the window end is registered; input_subagent polls, refuses a prompt while running, takes a follow-up; kill_subagent removes it", async () => {
  const slow = gate();
  let id = "";
  const handler = async (req: RecordedRequest) => {
    const who = whose(req);
    const n = turnOf(req);
    if (who === "slow") {
      if (n === 0) {
        await slow.opened;
        return turn.text("slow answer");
      }
      return turn.text("second answer");
    }
    const call = (name: string, args: Record<string, unknown>) =>
      turn.toolCall(name, { description: name, ...args });
    switch (n) {
      case 0:
        return call("run_subagent", { prompt: "[[slow]] take your time", yield_time_ms: 250 });
      case 1:
        id = idFrom(req);
        return call("input_subagent", { subagent_id: id, prompt: "[[x]] too early" });
      case 2:
        slow.open();
        return call("input_subagent", { subagent_id: id, yield_time_ms: 20_000 });
      case 3:
        return call("input_subagent", { subagent_id: id, prompt: "a follow-up" });
      case 4:
        return call("input_subagent", { subagent_id: id });
      case 5:
        return call("kill_subagent", { subagent_id: id });
      case 6:
        return call("input_subagent", { subagent_id: id });
      default:
        return turn.text("done");
    }
  };
  await withModelRoot({ handler, maxRequests: 20 }, async (sb) => {
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession({ workspaceDir: sb.workspace });
    await collect(session.run("[[parent]] go", { approve: "allow-all" }));
    await session.dispose();
    const records = await assertGoodTrace(sb.root, session.sessionId);
    const outs = ofKind(records, "tool_call_output");
    const text = outs.map((p) => String(p.output));
    assert.equal(
      text[0],
      `[subagent running with subagent_id ${id}; use input_subagent to poll for its output, kill_subagent to stop it]`,
    );
    assert.match(text[1]!, /^\[input_subagent error: subagent .* is still running/);
    assert.equal(outs[1]!.stop_reason, "failed");
    assert.equal(
      text[2],
      `slow answer\n[subagent idle with subagent_id ${id}; send a follow-up prompt to continue]`,
    );
    assert.equal(
      text[3],
      `second answer\n[subagent idle with subagent_id ${id}; send a follow-up prompt to continue]`,
    );
    assert.equal(
      text[4],
      `[subagent idle with subagent_id ${id}; send a follow-up prompt to continue]`,
    );
    assert.equal(text[5], `[subagent ${id} was idle; removed]`);
    assert.match(
      text[6]!,
      new RegExp(`^\\[input_subagent error: no subagent has subagent_id "${id}"`),
    );
    // The child's trace holds both tasks, the follow-up as a parent_agent text.
    const childId = String(ofKind(records, "subagent")[0]!.session_id);
    assert.ok(childId.endsWith(id.slice(-8)));
    const child = await assertGoodTrace(sb.root, childId);
    const prompts = ofKind(child, "text").filter((p) => p.role === "user");
    assert.deepEqual(prompts.map((p) => [p.text, p.sender]), [
      ["[[slow]] take your time", "parent_agent"],
      ["a follow-up", "parent_agent"],
    ]);
  });
});

Deno.test("kill_subagent aborts a running child and denies the tool call it waits to have approved", async () => {
  let session: Session | undefined;
  const server: ModelServer = await startModelServer({
    maxRequests: 20,
    handler: async (req) => {
      const who = whose(req);
      const n = turnOf(req);
      if (who === "asker") {
        if (n > 0) return turn.text("asker done");
        // Ask for a command only once the parent's window has ended: nobody answers then.
        await waitFor(
          () => server.requests.some((r) => whose(r) === "parent" && turnOf(r) === 1),
          "the parent's second request",
        );
        return turn.toolCall("exec_command", { description: "x", cmd: "echo hi" });
      }
      if (n === 0) {
        return turn.toolCall("run_subagent", {
          description: "asker",
          prompt: "[[asker]] run a command",
          yield_time_ms: 250,
        });
      }
      if (n === 1) {
        await waitFor(
          () => session!.backgroundTasks().some((t) => t.pendingApprovals === 1),
          "the child's pending approval",
        );
        return turn.toolCall("kill_subagent", { description: "stop", subagent_id: idFrom(req) });
      }
      return turn.text("done");
    },
  });
  const sb = await makeRoot(server);
  try {
    const agent = await createAgent({ root: sb.root });
    session = await agent.createSession({ workspaceDir: sb.workspace });
    const asked: string[] = [];
    const approve = (call: ToolCallMessage) => {
      asked.push(call.name);
      return "allow" as const;
    };
    await collect(session.run("[[parent]] go", { approve }));
    await session.dispose();
    assert.deepEqual(
      asked,
      ["run_subagent", "kill_subagent"],
      "the child's call was never put to the host",
    );
    const records = await assertGoodTrace(sb.root, session.sessionId);
    const id = `subagent-${String(ofKind(records, "subagent")[0]!.session_id).slice(-8)}`;
    assert.equal(
      ofKind(records, "tool_call_output")[1]!.output,
      `[subagent ${id} killed: its task was aborted and 1 tool call(s) awaiting approval were denied]`,
    );
    const child = await readSession(sb.root, String(ofKind(records, "subagent")[0]!.session_id));
    assert.equal(ofKind(child, "approval_decision")[0]!.decision, "deny");
    assert.equal(
      ofKind(child, "tool_call_output")[0]!.output,
      "Tool call denied by user. Reason: the subagent was stopped.",
    );
    assert.equal(ofKind(child, "abort").length, 1);
  } finally {
    await session?.dispose();
    await server.close();
    await sb.cleanup();
  }
});

Deno.test("aborting the parent during a foreground window aborts the child's task", async () => {
  const ctl = new AbortController();
  await withModelRoot({
    maxRequests: 10,
    maxHoldMs: 20_000,
    handler: (req) => {
      if (whose(req) === "hang") {
        ctl.abort();
        return { ...turn.text("never"), stall_after: 0 };
      }
      return turn.toolCall("run_subagent", { description: "hang", prompt: "[[hang]] wait" });
    },
  }, async (sb) => {
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession({ workspaceDir: sb.workspace });
    const stream = await collect(
      session.run("[[parent]] go", { approve: "allow-all", signal: ctl.signal }),
    );
    await session.dispose();
    const last = stream.filter((m) => m.origin === undefined).at(-1)!;
    assert.equal(last.payload.type, "abort");
    const records = await assertGoodTrace(sb.root, session.sessionId);
    const out = ofKind(records, "tool_call_output")[0]!;
    assert.equal(out.stop_reason, "aborted");
    assert.match(String(out.output), /\[interrupted: tool aborted by user\]$/);
    const child = await assertGoodTrace(
      sb.root,
      String(ofKind(records, "subagent")[0]!.session_id),
    );
    assert.equal(child.at(-1)!.payload.type, "abort");
    assert.deepEqual(session.backgroundTasks(), []);
  });
});
