// Restore after a restart: `penguin run` is killed with SIGKILL while a
// foreground child works, a background child has finished unreported and a
// background command runs; the parent is resumed and its background work
// comes back from the traces.
import assert from "node:assert/strict";
import { createAgent } from "../../lib/agent/mod.ts";
import { listSessionFiles } from "../../lib/trace/paths.ts";
import { validateTraceFiles } from "../../lib/trace/validate.ts";
import type { ModelServer, RecordedRequest } from "../support/model_server.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { inRoot, penguinArgv, penguinEnv, REPO, runCli } from "../support/cli.ts";
import { makeRoot, ofKind, readSession, tracesDir, waitFor } from "../agent/_support.ts";
import { toolResults, turnOf, userTexts, whose } from "../agent/_subagent_support.ts";
import { runSubagent } from "./_subagent_calls.ts";

async function hasLine(root: string, sessionId: string, pattern: RegExp): Promise<boolean> {
  const files = await listSessionFiles(tracesDir(root), sessionId);
  for (const f of files) if (pattern.test(await Deno.readTextFile(f.path))) return true;
  return false;
}

async function sessionIds(root: string): Promise<string[]> {
  const out: string[] = [];
  for await (const d of Deno.readDir(tracesDir(root))) {
    if (d.name.startsWith(".")) continue;
    for await (const f of Deno.readDir(`${tracesDir(root)}/${d.name}`)) {
      const m = /^(session-.+)_\d{3}\.jsonl$/.exec(f.name);
      if (m && !out.includes(m[1]!)) out.push(m[1]!);
    }
  }
  return out;
}

Deno.test("after SIGKILL the resumed parent gets its background work back and the interrupted child finishes", async () => {
  let restarted = false;
  let interruptedId = "";
  const handler = (req: RecordedRequest) => {
    const who = whose(req);
    const n = turnOf(req);
    if (who === "worker") {
      if (n === 0) return turn.toolCall("exec_command", { description: "s1", cmd: "echo step-1" });
      if (!restarted) return { ...turn.text("never"), stall_after: 0 }; // killed while waiting here
      if (n === 1) return turn.toolCall("exec_command", { description: "s2", cmd: "echo step-2" });
      return turn.text("worker done: 2 steps");
    }
    if (who === "helper") return turn.text("helper answer");
    // The parent.
    if (n === 0) {
      return turn.of(
        runSubagent("call_worker", "worker", "[[worker]] Run two steps."),
        runSubagent("call_helper", "helper", "[[helper]] Answer in the background.", true),
        item.toolCall("exec_command", {
          description: "long command",
          // The command outlives its window and is registered in the background. Whether
          // "started" made it into the window is up to the machine's speed, so the report is
          // checked against whatever the trace captured, not against "started".
          cmd: "echo started; sleep 30",
          yield_time_ms: 2000,
        }, { id: "call_cmd" }),
      );
    }
    if (n === 1) {
      const texts = userTexts(req).join("\n");
      interruptedId = /id: (subagent-\w+)\nstatus: failed\ndetail: interrupted/.exec(texts)?.[1] ??
        "";
      return turn.toolCall("input_subagent", {
        description: "resume the worker",
        subagent_id: interruptedId,
      });
    }
    return turn.text("all done");
  };
  const server: ModelServer = await startModelServer({ handler, maxRequests: 30 });
  const sb = await makeRoot(server);
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        ...penguinArgv(),
        ...inRoot(sb, "run"),
        "-m",
        "[[parent]] Delegate and run a command.",
      ],
      cwd: REPO,
      env: penguinEnv(),
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    let parentId = "";
    try {
      // Kill once the worker is mid-task, the helper has finished and the command was registered.
      await waitFor(
        () => server.requests.some((r) => whose(r) === "worker" && turnOf(r) === 1),
        "the worker's second request",
        30_000,
      );
      const ids = async () => (await sessionIds(sb.root));
      let helperDone = false;
      let commandRegistered = false;
      for (let i = 0; i < 1000 && !(helperDone && commandRegistered); i++) {
        for (const id of await ids()) {
          if (await hasLine(sb.root, id, /\[\[helper\]\][^\n]*"sender":"parent_agent"/)) {
            helperDone = await hasLine(sb.root, id, /"type":"request_end","status":"completed"/);
          }
          if (await hasLine(sb.root, id, /"text":"\[\[parent\]\]/)) {
            parentId = id;
            commandRegistered = await hasLine(
              sb.root,
              id,
              /"output":"[^"]*\[process running with process_id proc-[0-9a-f]{8}/,
            );
          }
        }
        if (!(helperDone && commandRegistered)) await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(
        helperDone && commandRegistered,
        `the helper finished (${helperDone}) and the command was registered (${commandRegistered})`,
      );
    } finally {
      child.kill("SIGKILL");
      await child.status;
    }
    restarted = true;

    // Resume the parent in a new "process".
    const agent = await createAgent({ root: sb.root });
    const parent = await agent.resumeSession({ target: parentId });
    const tasks = parent.backgroundTasks();
    assert.deepEqual(tasks.map((t) => [t.kind, t.state]).sort(), [["subagent", "idle"], [
      "subagent",
      "interrupted",
    ]]);
    await parent.dispose();
    // Continue through the CLI, as a user would after the crash.
    const resumed = await runCli([
      "--root",
      sb.root,
      "run",
      "--resume",
      parentId,
      "-m",
      "Continue after the restart.",
    ]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /all done/);

    // The first request after the restart carried the three reports.
    const first = server.requests.find((r) => whose(r) === "parent" && turnOf(r) === 1)!;
    // (The wire may join adjacent user texts into one message.)
    const all = userTexts(first).join("\n");
    assert.equal(all.split("[background_task_done]\n").length - 1, 3, all);
    assert.match(
      all,
      /kind: subagent\nid: subagent-\w+\nstatus: completed\n[\s\S]*\nhelper answer/,
    );
    assert.match(
      all,
      /kind: subagent\nid: subagent-\w+\nstatus: failed\ndetail: interrupted: penguin exited/,
    );
    // The lost command's report carries the output its window captured in the trace.
    const before = await readSession(sb.root, parentId);
    const cmdOut = ofKind(before, "tool_call_output").find((p) => p.tool_call_id === "call_cmd");
    const captured = String(cmdOut?.output ?? "").replace(/\n?\[process running[^\n]*\]$/, "")
      .replace(/\n$/, "");
    assert.match(captured, /^(started)?$/, "the window saw at most the command's first line");
    const block = all.slice(all.indexOf("kind: command\n")).split("[background_task_done]")[0]!;
    assert.match(block, /^kind: command\nid: proc-[0-9a-f]{8}\nstatus: failed\ndetail: lost: /);
    const expected = captured === "" ? "[no output]" : captured;
    assert.ok(block.trimEnd().endsWith(`\n\n${expected}`), block);
    assert.ok(
      toolResults(first).some((r) =>
        r.text === "[interrupted: process exited before the tool finished]"
      ),
    );

    // The interrupted worker continued from its trace to completion.
    // (The crash left call_worker unanswered in the trace: a warning, not a problem.)
    const records = await readSession(sb.root, parentId);
    const outputs = ofKind(records, "tool_call_output").map((p) => String(p.output));
    assert.ok(
      outputs.includes(
        `worker done: 2 steps\n[subagent idle with subagent_id ${interruptedId}; send a follow-up prompt to continue]`,
      ),
      outputs.join("\n---\n"),
    );
    assert.equal(
      ofKind(records, "subagent").length,
      2,
      "one pointer per child, none added on resume",
    );
    const workerId = String(
      ofKind(records, "subagent").map((p) => p.session_id).find((s) =>
        String(s).endsWith(interruptedId.slice(-8))
      ),
    );
    const worker = await readSession(sb.root, workerId);
    const workerOut = ofKind(worker, "tool_call_output").map((p) => String(p.output));
    assert.equal(workerOut.length, 2);
    assert.match(workerOut[0]!, /step-1\n$/);
    assert.match(workerOut[1]!, /step-2\n$/);
    const last = ofKind(worker, "text").at(-1)!;
    assert.equal(last.text, "worker done: 2 steps");
    assert.ok(ofKind(worker, "text").some((p) => p.sender === "harness"));
    const report = await validateTraceFiles([tracesDir(sb.root)]);
    assert.deepEqual(report.problems, [], "the family's traces validate and the pointers resolve");
  } finally {
    await server.close();
    await sb.cleanup();
  }
});
