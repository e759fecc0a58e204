import assert from "node:assert/strict";
import { createAgent, type Session } from "../../lib/agent/mod.ts";
import type { OmniMessage, ToolCallMessage } from "../../lib/protocol/types.ts";
import { validateTraceFiles } from "../../lib/trace/validate.ts";
import {
  item,
  type ModelServer,
  type RecordedRequest,
  startModelServer,
  turn,
} from "../support/model_server.ts";
import {
  assertGoodTrace,
  collect,
  makeRoot,
  ofKind,
  readSession,
  tracesDir,
  waitFor,
} from "./_support.ts";
import { childIds, fromChild, toolResults, turnOf, userTexts, whose } from "./_subagent_support.ts";

function textsOf(records: readonly OmniMessage[], role: string): Record<string, unknown>[] {
  return ofKind(records, "text").filter((p) => p.role === role);
}

Deno.test("a parent with a foreground and a background child: origin-tagged stream, pointers, notice, traces", async () => {
  let session: Session | undefined;
  const handler = async (req: RecordedRequest) => {
    const who = whose(req);
    const n = turnOf(req);
    if (who === "parent") {
      if (n === 0) {
        return turn.of(
          item.toolCall("run_subagent", {
            description: "count in the foreground",
            prompt: "[[fg]] Run one step and report.",
          }, { id: "call_fg" }),
          item.toolCall("run_subagent", {
            description: "work in the background",
            prompt: "[[bg]] Answer in the background.",
            run_in_background: true,
          }, { id: "call_bg" }),
        );
      }
      if (n === 1) {
        // Answer only once the background child is idle, so its notice is queued.
        await waitFor(
          () => session!.backgroundTasks().some((t) => t.kind === "subagent" && t.state === "idle"),
          "the background child to finish",
        );
        return turn.text("waiting for the background work");
      }
      return turn.text("all done");
    }
    if (who === "fg") {
      if (n === 0) {
        return turn.toolCall("exec_command", { description: "step", cmd: "echo fg-step" });
      }
      return turn.text("fg answer");
    }
    if (who === "bg") {
      // Finish only after the parent's first turn, so the notice arrives mid-task.
      await waitFor(
        () => server.requests.some((r) => whose(r) === "parent" && turnOf(r) === 1),
        "the parent's second request",
      );
      return turn.text("bg answer");
    }
    return undefined;
  };
  const server: ModelServer = await startModelServer({ handler, maxRequests: 20 });
  const sb = await makeRoot(server);
  try {
    const agent = await createAgent({ root: sb.root });
    session = await agent.createSession({ workspaceDir: sb.workspace });
    const approved: string[] = [];
    const approve = (call: ToolCallMessage) => {
      approved.push(call.name);
      return "allow" as const;
    };
    const stream = await collect(session.run("[[parent]] Delegate.", { approve }));
    const parentId = session.sessionId;
    await session.dispose();

    // The parent offers the subagent tools right after kill_command.
    const names = session.tools.map((t) => t.name);
    const at = names.indexOf("kill_command");
    assert.deepEqual(names.slice(at, at + 4), [
      "kill_command",
      "run_subagent",
      "input_subagent",
      "kill_subagent",
    ]);

    // Child messages stream tagged with their origin; each child starts with its session_meta.
    const kids = childIds(stream);
    assert.equal(kids.length, 2);
    for (const kid of kids) {
      const own = fromChild(stream, kid);
      assert.equal(own[0]!.type, "session_meta", "the first forwarded message is the child's meta");
      assert.deepEqual(own[0]!.origin, [kid]);
      const prompt = own[1]!.payload as Record<string, unknown>;
      assert.equal(prompt.type, "text");
      assert.equal(prompt.sender, "parent_agent");
    }
    // The child's tool call went through the parent's approve.
    assert.ok(
      approved.includes("exec_command"),
      "the child's exec_command was approved by the parent",
    );

    // Parent trace: no origin-tagged records, one pointer per child, the outputs and the notice.
    const records = await assertGoodTrace(sb.root, parentId);
    assert.deepEqual(ofKind(records, "subagent").map((p) => p.session_id).sort(), [...kids].sort());
    const outputs = new Map(ofKind(records, "tool_call_output").map((p) => [p.tool_call_id, p]));
    assert.equal(outputs.get("call_fg")!.output, "fg answer");
    assert.equal(outputs.get("call_fg")!.stop_reason, "completed");
    const bgMeta = fromChild(
      stream,
      kids.find((k) =>
        (fromChild(stream, k)[1]!.payload as { text: string }).text.startsWith("[[bg]]")
      )!,
    )[0]!;
    const bgId = `subagent-${String(bgMeta.payload.session_id).slice(-8)}`;
    assert.match(String(outputs.get("call_bg")!.output), new RegExp(`subagent_id ${bgId};`));
    const notices = textsOf(records, "user").filter((p) => p.sender === "harness");
    assert.equal(notices.length, 1);
    const notice = String(notices[0]!.text);
    assert.match(notice, /^\[background_task_done\]\n/);
    assert.match(notice, new RegExp(`\\nkind: subagent\\nid: ${bgId}\\nstatus: completed\\n`));
    assert.match(notice, /\nbg answer$/);
    assert.equal(textsOf(records, "assistant").at(-1)!.text, "all done");
    // The parent model saw the notice in its third request.
    const third = server.requests.filter((r) => whose(r) === "parent")[2]!;
    assert.ok(userTexts(third).some((t) => t.includes(`id: ${bgId}`)));
    assert.equal(toolResults(third).length, 2);

    // Child traces: source subagent, the parent link, the parent_agent prompt, no subagent tools.
    for (const kid of kids) {
      const child = await assertGoodTrace(sb.root, kid);
      const meta = child[0]!.payload as Record<string, unknown>;
      assert.equal(meta.source, "subagent");
      const link = meta.parent as { session_id: string; tool_call_id: string };
      assert.equal(link.session_id, parentId);
      assert.ok(["call_fg", "call_bg"].includes(link.tool_call_id));
      assert.equal(meta.workspace, sb.workspace);
      assert.equal(meta.model_id, "m");
      assert.equal(textsOf(child, "user")[0]!.sender, "parent_agent");
      const tools = (ofKind(child, "tool_list_ready")[0]!.tools as { name: string }[]).map((t) =>
        t.name
      );
      assert.ok(tools.includes("exec_command"));
      assert.ok(!tools.some((t) => t.endsWith("_subagent")), "no subagent tools at depth 1");
    }
    const fgTrace = await readSession(sb.root, kids.find((k) => k !== bgMeta.payload.session_id)!);
    assert.match(String(ofKind(fgTrace, "tool_call_output")[0]!.output), /fg-step\n$/);
    const report = await validateTraceFiles([tracesDir(sb.root)]);
    assert.deepEqual(report.problems, [], "pointers resolve and every trace validates");
  } finally {
    await session?.dispose();
    await server.close();
    await sb.cleanup();
  }
});

Deno.test("a background child finishing while the parent is idle: messages go to onBackgroundMessage, the notice rides the next run", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const handler = async (req: RecordedRequest) => {
    const who = whose(req);
    if (who === "late") {
      await gate;
      return turn.text("late answer");
    }
    if (turnOf(req) === 0) {
      return turn.toolCall("run_subagent", {
        description: "later",
        prompt: "[[late]] finish later",
        run_in_background: true,
      });
    }
    return turn.text(`parent turn ${turnOf(req)}`);
  };
  const server = await startModelServer({ handler, maxRequests: 10 });
  const sb = await makeRoot(server);
  let session: Session | undefined;
  try {
    const agent = await createAgent({ root: sb.root });
    session = await agent.createSession({ workspaceDir: sb.workspace });
    await collect(session.run("[[parent]] start it", { approve: "allow-all" }));
    assert.ok(session.hasRunningBackgroundSubagents());
    const seen: OmniMessage[] = [];
    const notices: string[] = [];
    session.onBackgroundMessage((m) => seen.push(m));
    session.onBackgroundNotice((n) => notices.push(n.id));
    release();
    await waitFor(() => notices.length === 1, "the background notice");
    assert.ok(!session.hasRunningBackgroundSubagents());
    const [task] = session.backgroundTasks();
    assert.equal(task!.state, "idle");
    assert.equal(task!.id, notices[0]);
    assert.ok(seen.length > 0 && seen.every((m) => m.origin?.[0] === task!.sessionId));
    const deltas = seen.filter((m) => m.payload.type === "partial_text" && m.origin!.length === 1)
      .map((m) => (m.payload as { text: string }).text).join("");
    assert.equal(deltas, "late answer");

    await collect(session.run("next", { approve: "allow-all" }));
    const records = await assertGoodTrace(sb.root, session.sessionId);
    const users = textsOf(records, "user");
    assert.equal(users.at(-2)!.text, "next");
    assert.equal(users.at(-1)!.sender, "harness");
    assert.match(
      String(users.at(-1)!.text),
      new RegExp(`id: ${task!.id}\\n[\\s\\S]*\\nlate answer$`),
    );
  } finally {
    await session?.dispose();
    await server.close();
    await sb.cleanup();
  }
});
