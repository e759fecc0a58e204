import assert from "node:assert/strict";
import {
  type ChildFacts,
  childProgress,
  interruptedDetail,
  LOST_COMMAND_DETAIL,
  parentFacts,
  planRestore,
  restoreChildren,
} from "../../lib/agent/subagents/mod.ts";
import type { ChildRegistry } from "../../lib/agent/subagents/registry.ts";
import { join } from "node:path";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { readTraceFile } from "../../lib/trace/reader.ts";

const FIXTURES = "/work/shared/fixtures/penguin-traces";

/** A tiny trace writer: each record one millisecond after the previous one. */
function script(start = Date.parse("2026-01-01T00:00:00Z")) {
  let t = start;
  const out: OmniMessage[] = [];
  const at = () => new Date(t++).toISOString();
  const rec = (type: OmniMessage["type"], payload: Record<string, unknown>) => {
    out.push({ timestamp: at(), type, payload } as OmniMessage);
    return api;
  };
  const toolOutput = (id: string, output: string, stop: string, extra: Record<string, unknown>) =>
    rec("model_msg", {
      type: "tool_call_output",
      role: "user",
      output,
      tool_call_id: id,
      stop_reason: stop,
      ...extra,
    });
  const api = {
    out,
    meta: (id: string, extra: Record<string, unknown> = {}) =>
      rec("session_meta", { session_id: id, ...extra }),
    user: (text: string, sender?: string) =>
      rec("model_msg", {
        type: "text",
        role: "user",
        text,
        stop_reason: "completed",
        ...(sender ? { sender } : {}),
      }),
    begin: () => rec("event_msg", { type: "request_begin" }),
    end: (status = "completed") => rec("event_msg", { type: "request_end", status }),
    text: (text: string) =>
      rec("model_msg", { type: "text", role: "assistant", text, stop_reason: "completed" }),
    call: (id: string, name: string, args: Record<string, unknown>) =>
      rec("model_msg", {
        type: "tool_call",
        role: "assistant",
        name,
        arguments: JSON.stringify(args),
        tool_call_id: id,
        stop_reason: "completed",
      }),
    output: (
      id: string,
      output: string,
      stop = "completed",
      process?: { id: string; state: string; exit_code: number | null },
    ) => toolOutput(id, output, stop, process ? { penguin_process: process } : {}),
    /** A run_subagent output with `penguin_subagent` facts. */
    spawned: (
      id: string,
      output: string,
      facts: { id: string; session_id: string; kind: string; state: string },
    ) =>
      toolOutput(id, output, "completed", {
        penguin_subagent: { ...facts, parent_tool_call_id: id },
      }),
    /** A run_subagent call, its child session's pointer and its output with typed facts. */
    child: (
      callId: string,
      prompt: string,
      output: string,
      facts: { id: string; session_id: string; kind: string; state: string },
    ) =>
      api.call(callId, "run_subagent", { prompt }).pointer(facts.session_id).spawned(
        callId,
        output,
        facts,
      ),
    /** A harness text whose only report of the task is its `penguin_notice`. */
    typedNotice: (kind: string, id: string) =>
      rec("model_msg", {
        type: "text",
        role: "user",
        text: "a report in other words",
        stop_reason: "completed",
        sender: "harness",
        penguin_notice: { kind, id, status: "completed" },
      }),
    pointer: (sid: string) => rec("event_msg", { type: "subagent", session_id: sid }),
    notice: (kind: string, id: string) =>
      api.user(
        `[background_task_done]\nauto\nkind: ${kind}\nid: ${id}\nstatus: completed\n[/background_task_done]\nsummary\n\nx`,
        "harness",
      ),
    abort: (reason: string) => rec("event_msg", { type: "abort", reason }),
    now: () => t,
  };
  return api;
}

const SID = (hex: string) => `session-2026-01-01-00-00-00-${hex}`;

function finished(text: string, ts: number, extra: Partial<ChildFacts> = {}): ChildFacts {
  return {
    agentId: "default_agent",
    interrupted: false,
    label: "task",
    text,
    ts,
    started: true,
    ...extra,
  };
}

Deno.test("restore registers cut-off and undelivered children and reports each once", () => {
  const p = script().meta(SID("00000000"))
    .call("c1", "run_subagent", { prompt: "[[a]] bg", run_in_background: true })
    .pointer(SID("aaaaaaa1"))
    .output("c1", "[subagent running in the background with subagent_id subagent-aaaaaaa1; …]")
    .call("c2", "run_subagent", { prompt: "[[b]] fg" })
    .pointer(SID("bbbbbbb2"))
    .output("c2", "b answer")
    .call("c3", "run_subagent", { prompt: "[[c]] killed", thinking_level: "high" })
    .pointer(SID("ccccccc3"))
    .output("c3", "[subagent running with subagent_id subagent-ccccccc3; …]")
    .call("k", "kill_subagent", { subagent_id: "subagent-ccccccc3" })
    .output("k", "[subagent subagent-ccccccc3 killed: its task was aborted]")
    .call("c4", "run_subagent", { prompt: "[[d]] cut off", thinking_level: "high" })
    .pointer(SID("ddddddd4"));
  const late = p.now() + 100;
  const facts = parentFacts(p.out);
  const kids = new Map<string, ChildFacts>([
    [SID("aaaaaaa1"), finished("a answer", late, { label: "[[a]] bg" })],
    [SID("bbbbbbb2"), finished("b answer", late)],
    [SID("ccccccc3"), finished("", late)],
    [SID("ddddddd4"), {
      ...finished("so far", late, { label: "[[d]] cut off" }),
      interrupted: true,
    }],
  ]);
  const plan = planRestore(facts, kids);
  assert.deepEqual(plan.children.map((c) => [c.id, c.state, c.background, c.thinkingLevel]), [
    ["subagent-aaaaaaa1", "idle", true, undefined],
    ["subagent-ddddddd4", "interrupted", false, "high"],
  ]);
  assert.equal(plan.notices.length, 2);
  assert.deepEqual(plan.notices.map((n) => [n.kind, n.id, n.status, n.output]), [
    ["subagent", "subagent-aaaaaaa1", "completed", "a answer"],
    ["subagent", "subagent-ddddddd4", "failed", "so far"],
  ]);
  assert.equal(plan.notices[1]!.detail, interruptedDetail("subagent-ddddddd4"));
  assert.equal(plan.notices[0]!.label, "[[a]] bg");
});

Deno.test("restore stays quiet about children the parent already heard from", () => {
  const p = script().meta(SID("00000000"))
    .call("c1", "run_subagent", { prompt: "bg", run_in_background: true })
    .pointer(SID("aaaaaaa1"))
    .output("c1", "[subagent running in the background with subagent_id subagent-aaaaaaa1; …]")
    .call("c2", "run_subagent", { prompt: "polled", yield_time_ms: 250 })
    .pointer(SID("bbbbbbb2"))
    .output("c2", "[subagent running with subagent_id subagent-bbbbbbb2; …]");
  const childEnd = p.now();
  p.notice("subagent", "subagent-aaaaaaa1")
    .call("i", "input_subagent", { subagent_id: "subagent-bbbbbbb2" })
    .output("i", "b answer\n[subagent idle with subagent_id subagent-bbbbbbb2; …]");
  const kids = new Map<string, ChildFacts>([
    [SID("aaaaaaa1"), finished("a", childEnd)],
    [SID("bbbbbbb2"), finished("b", childEnd)],
  ]);
  const plan = planRestore(parentFacts(p.out), kids);
  assert.deepEqual(plan.children.map((c) => c.state), ["idle", "idle"]);
  assert.deepEqual(plan.notices, []);
});

Deno.test("restore reads subagents and notices from their typed fields, not from the wording", () => {
  const p = script().meta(SID("00000000"))
    .child("c1", "bg", "started, in other words", {
      id: "subagent-typed001",
      session_id: SID("aaaaaaa1"),
      kind: "background",
      state: "running",
    })
    // The wording names an id, the facts say the call answered for the child.
    .child("c2", "fg", "an answer that quotes subagent_id subagent-bbbbbbb2", {
      id: "subagent-bbbbbbb2",
      session_id: SID("bbbbbbb2"),
      kind: "foreground",
      state: "ended",
    })
    .child("c3", "polled", "still going", {
      id: "subagent-typed003",
      session_id: SID("ccccccc3"),
      kind: "foreground",
      state: "running",
    });
  const childEnd = p.now();
  p.typedNotice("subagent", "subagent-typed001");
  const kids = new Map<string, ChildFacts>([
    [SID("aaaaaaa1"), finished("a", childEnd)],
    [SID("bbbbbbb2"), finished("b", childEnd)],
    [SID("ccccccc3"), finished("c", childEnd)],
  ]);
  const facts = parentFacts(p.out);
  assert.deepEqual(facts.notices.map((n) => [n.kind, n.id]), [["subagent", "subagent-typed001"]]);
  const plan = planRestore(facts, kids);
  assert.deepEqual(plan.children.map((c) => [c.id, c.sessionId, c.background]), [
    ["subagent-typed001", SID("aaaaaaa1"), true],
    ["subagent-typed003", SID("ccccccc3"), false],
  ]);
  assert.deepEqual(plan.notices.map((n) => [n.id, n.output]), [["subagent-typed003", "c"]]);
});

Deno.test("restore reports background commands that never ended as lost, with their last captured output (PenguinHarness traces: from the notes)", () => {
  const p = script().meta(SID("00000000"))
    .call("e1", "exec_command", { cmd: "serve", run_in_background: true })
    .output("e1", "[process running in the background with process_id proc-00000001; …]")
    .call("e2", "exec_command", { cmd: "build\nmore" })
    .output("e2", "compiling\n[process running with process_id proc-00000002; use input_command …]")
    .call("p2", "input_command", { process_id: "proc-00000002" })
    .output("p2", "linking\n[process still running with process_id proc-00000002]")
    .call("e3", "exec_command", { cmd: "done-by-notice" })
    .output("e3", "[process running with process_id proc-00000003; …]")
    .notice("command", "proc-00000003")
    .call("e4", "exec_command", { cmd: "done-by-poll" })
    .output("e4", "[process running with process_id proc-00000004; …]")
    .call("p4", "input_command", { process_id: "proc-00000004" })
    .output("p4", "bye\n[exit code: 1]", "failed")
    .call("e5", "exec_command", { cmd: "killed" })
    .output("e5", "[process running with process_id proc-00000005; …]")
    .call("k5", "kill_command", { process_id: "proc-00000005" })
    .output("k5", "[process proc-00000005 killed (SIGTERM)]");
  const plan = planRestore(parentFacts(p.out), new Map());
  assert.deepEqual(plan.children, []);
  assert.deepEqual(plan.notices.map((n) => [n.kind, n.id, n.status, n.label, n.output]), [
    ["command", "proc-00000001", "failed", "serve", ""],
    ["command", "proc-00000002", "failed", "build…", "linking"],
  ]);
  assert.ok(plan.notices.every((n) => n.detail === LOST_COMMAND_DETAIL));
  assert.match(plan.notices[0]!.text, /\n\[no output\]$/);
});

Deno.test("restore reads a command's state from penguin_process, not from the wording of the output", () => {
  const proc = (n: number, state: string, exit_code: number | null = null) => ({
    id: `proc-0000000${n}`,
    state,
    exit_code,
  });
  // The notes are worded so that reading the text would get every one of these wrong.
  const p = script().meta(SID("00000000"))
    .call("e1", "exec_command", { cmd: "serve" })
    .output("e1", "listening", "completed", proc(1, "running"))
    .call("e2", "exec_command", { cmd: "echo" })
    .output("e2", "[process running with process_id proc-00000002; …]", "completed", {
      ...proc(2, "exited", 0),
    })
    .call("e3", "exec_command", { cmd: "watch" })
    .output("e3", "started", "completed", proc(3, "running"))
    .call("p3", "input_command", { process_id: "proc-00000003" })
    .output("p3", "[process still running with process_id proc-00000003]", "completed", {
      ...proc(3, "exited", 2),
    })
    .call("e4", "exec_command", { cmd: "tail" })
    .output("e4", "started", "completed", proc(4, "running"))
    .call("p4", "input_command", { process_id: "proc-00000004" })
    .output("p4", "more\n[exit code: 1]", "failed", proc(4, "running"));
  const plan = planRestore(parentFacts(p.out), new Map());
  assert.deepEqual(plan.notices.map((n) => [n.id, n.label, n.output]), [
    ["proc-00000001", "serve", "listening"],
    ["proc-00000004", "tail", "more"],
  ]);
});

Deno.test("restore ignores a malformed penguin_process and falls back to the note", () => {
  const p = script().meta(SID("00000000"))
    .call("e1", "exec_command", { cmd: "serve" })
    .output("e1", "[process running with process_id proc-00000001; …]", "completed", {
      id: "proc-00000001",
      state: "sleeping",
      exit_code: null,
    });
  const plan = planRestore(parentFacts(p.out), new Map());
  assert.deepEqual(plan.notices.map((n) => n.id), ["proc-00000001"]);
});

Deno.test("child progress: a finished task, an aborted one, and one cut off mid-request", () => {
  const done = script().meta(SID("aaaaaaa1"), { parent: { session_id: "p", tool_call_id: "c1" } })
    .user("do it", "parent_agent").begin().call("t", "exec_command", {}).end()
    .output("t", "ok").begin().text("the answer").end();
  const a = childProgress(done.out);
  assert.deepEqual([a.interrupted, a.label, a.text, a.aborted], [
    false,
    "do it",
    "the answer",
    undefined,
  ]);
  assert.deepEqual(a.parent, { session_id: "p", tool_call_id: "c1" });

  const aborted = script().meta(SID("aaaaaaa1")).user("do it").begin().text("partial")
    .end("aborted").abort("aborted by user");
  assert.equal(childProgress(aborted.out).aborted, "aborted by user");

  const cut = script().meta(SID("aaaaaaa1")).user("do it").begin().text("first").call("t", "x", {})
    .end().output("t", "ok").begin();
  const c = childProgress(cut.out);
  assert.deepEqual([c.interrupted, c.text], [true, "first"]);
  const never = childProgress(script().meta(SID("aaaaaaa1")).out);
  assert.equal(never.interrupted, true);
});

Deno.test("the PenguinHarness subagent fixture: the foreground child answered, nothing to restore", async () => {
  const parent = (await readTraceFile(`${FIXTURES}/05-subagent-parent.jsonl`)).messages;
  const child = (await readTraceFile(`${FIXTURES}/05-subagent-child.jsonl`)).messages;
  const facts = parentFacts(parent);
  assert.deepEqual(facts.pointers, ["session-2026-11-29-19-26-19-8997c56f"]);
  const progress = childProgress(child);
  assert.equal(progress.interrupted, false);
  assert.equal(progress.text, "done: 2 steps [fx-sub-sub]");
  const plan = planRestore(
    facts,
    new Map([[facts.pointers[0]!, { ...progress, agentId: "default_agent" }]]),
  );
  assert.deepEqual(plan, { children: [], notices: [] });
});

Deno.test("restore lists an agent's traces directory once, however many pointers the parent holds", async () => {
  // Attack round 24 bounded R15: listed once a pointer, 30,000 pointers beside 3000 sessions sent
  // a resumed session's request nothing in 150 s.
  const dir = await Deno.makeTempDir();
  try {
    const traces = join(dir, "traces");
    const day = join(traces, "2026-01-01");
    await Deno.mkdir(day, { recursive: true });
    const parent = join(day, "session-2026-01-01-00-00-00-00000001_001.jsonl");
    const s = script().meta("session-2026-01-01-00-00-00-00000001");
    for (let i = 0; i < 50; i++) {
      s.out.push({
        timestamp: "2026-01-01T00:00:01.000Z",
        type: "event_msg",
        payload: {
          type: "subagent",
          session_id: `session-2026-01-01-00-00-00-${i}`.padEnd(36, "f"),
        },
      } as OmniMessage);
    }
    await Deno.writeTextFile(parent, s.out.map((m) => JSON.stringify(m) + "\n").join(""));
    let listings = 0;
    const registry = {
      parentSessionId: "session-2026-01-01-00-00-00-00000001",
      get: () => undefined,
      queueNotice: () => {},
      createChild: () => Promise.reject(new Error("no child to restore")),
      register: () => {},
    } as unknown as ChildRegistry;
    const plan = await restoreChildren(registry, {
      parentFiles: [parent],
      agentId: "default_agent",
      tracesDir: () => {
        listings++;
        return traces;
      },
    });
    assert.deepEqual(plan.children, []);
    assert.equal(listings, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
