import assert from "node:assert/strict";
import type { OmniMessage } from "../../lib/protocol/mod.ts";
import { PenguinError } from "../../lib/protocol/mod.ts";
import {
  buildOutline,
  cloneSession,
  forkSession,
  locateSession,
  type ResumeReplay,
  resumeTrace,
} from "../../lib/session/mod.ts";
import { readTraceFile } from "../../lib/trace/mod.ts";
import {
  fixture,
  jsonl,
  putTrace,
  records,
  scope,
  Script,
  sid,
  tracesOf,
  treeDigest,
  withRoot,
} from "./_support.ts";

// Everything of a replay but the meta (which differs between source and copy by design).
function body(r: ResumeReplay) {
  const { meta: _meta, ...rest } = r;
  return rest;
}

// The replay of `path` up to line `line`, session_meta excluded.
async function replayPrefix(path: string, line: number) {
  const recs = (await readTraceFile(path)).records;
  return resumeTrace(
    recs.filter((r) => r.line <= line && r.message.type !== "session_meta").map((r) => r.message),
  );
}

async function replayCopy(path: string) {
  const msgs = await records(path);
  return resumeTrace(msgs.slice(1));
}

// A raw line whose fidelity JSON.stringify would never produce (escapes, 1.50).
function oddLine(timestamp: string): string {
  return `{"timestamp":"${timestamp}","type":"model_msg","payload":{"type":"thinking","role":"assistant","thinking":"caf\\u00e9","fidelity":{"signature":"sig\\/x","n":1.50},"stop_reason":"completed"}}`;
}

async function threeTasks(root: string) {
  const s = new Script();
  const id = sid("f0f0f0f0");
  const recs: OmniMessage[] = [
    s.meta(id, { workspace: root }),
    s.user("task one"),
    s.tools(),
    s.begin(),
  ];
  let text = jsonl(recs) + oddLine("2026-01-02T03:05:00.000Z") + "\n";
  text += jsonl([
    s.call("c1"),
    s.usage(100, 100),
    s.end(),
    s.out("c1"),
    s.begin(),
    s.say("answer one"),
    s.usage(200, 100),
    s.end(),
    s.user("task two"),
    s.begin(),
    s.say("answer two"),
    s.usage(300, 100),
    s.end(),
    s.user("task three"),
    s.begin(),
    s.say("partial", "failed"),
    s.end("failed"),
  ]);
  const path = await putTrace(tracesOf(root), "2026-01-02", id, 1, text);
  return { id, path };
}

Deno.test("fork --before n holds the history before user message n, byte for byte", async () => {
  await withRoot(async (root) => {
    const { id, path } = await threeTasks(root);
    const before = await treeDigest(root);
    const fork = await forkSession({ ...scope(root), session: id, before: 2 });
    const outline = await buildOutline(await locateSession({ ...scope(root), target: id }));
    const prompt2 = outline.items.find((i) => i.n === 2)!;
    assert.deepEqual(fork.lineage, {
      parent_session_id: id,
      trace_index: 1,
      line: prompt2.line - 1,
      kind: "fork",
    });
    assert.deepEqual(
      body(await replayCopy(fork.path)),
      body(await replayPrefix(path, prompt2.line - 1)),
    );
    const copy = await replayCopy(fork.path);
    assert.equal(copy.sessionTurns, 2);
    assert.deepEqual(copy.carryOver, []);
    // Every copied line is byte-identical to its source line; the odd fidelity survives.
    const src = (await Deno.readTextFile(path)).split("\n");
    const dst = (await Deno.readTextFile(fork.path)).split("\n").filter((l) => l !== "");
    assert.deepEqual(dst.slice(1), src.slice(1, prompt2.line - 1));
    assert.ok(dst.includes(oddLine("2026-01-02T03:05:00.000Z")));
    // The source is untouched; only the new file (and its dirs) appeared.
    const after = await treeDigest(root);
    for (const [k, v] of Object.entries(before)) assert.equal(after[k], v);
    assert.equal(Object.keys(after).length, Object.keys(before).length + 1);
  });
});

Deno.test("a fork's session_meta keeps the model, prompt and workspace and adds lineage", async () => {
  await withRoot(async (root) => {
    const { id, path } = await threeTasks(root);
    const fork = await forkSession({ ...scope(root), session: id, at: 1 });
    const [srcMeta] = await records(path);
    const [meta] = await records(fork.path);
    assert.ok(srcMeta?.type === "session_meta" && meta?.type === "session_meta");
    assert.notEqual(meta.payload.session_id, id);
    assert.equal(meta.payload.session_id, fork.sessionId);
    for (
      const k of [
        "provider",
        "model_id",
        "model_context_window",
        "system_prompt",
        "agent_state",
        "workspace",
      ]
    ) {
      assert.equal(meta.payload[k], srcMeta.payload[k]);
    }
    assert.deepEqual(meta.payload.lineage, fork.lineage);
    assert.deepEqual(fork.continueWith, [
      `penguin run --resume ${fork.sessionId} -m "<message>"`,
      `penguin chat --resume ${fork.sessionId}`,
    ]);
  });
});

Deno.test("fork --at n ends with the last completed request of task n", async () => {
  await withRoot(async (root) => {
    const { id, path } = await threeTasks(root);
    const fork = await forkSession({ ...scope(root), session: id, at: 1 });
    const recs = (await readTraceFile(path)).records;
    const last = recs.find((r) => r.line === fork.lineage.line)!.message;
    assert.ok(last.type === "event_msg" && last.payload.type === "request_end");
    const copy = await replayCopy(fork.path);
    assert.deepEqual(body(copy), body(await replayPrefix(path, fork.lineage.line)));
    const texts = copy.history.map((m) => m.payload.type === "text" ? m.payload.text : null);
    assert.ok(texts.includes("answer one"));
    assert.ok(!texts.includes("task two"));
  });
});

Deno.test("fork --at n refuses a task with no completed request", async () => {
  await withRoot(async (root) => {
    const { id } = await threeTasks(root);
    await assert.rejects(
      forkSession({ ...scope(root), session: id, at: 3 }),
      /has no completed answer; use --before 3/,
    );
  });
});

Deno.test("fork refuses an out-of-range message number and needs exactly one of before/at", async () => {
  await withRoot(async (root) => {
    const { id } = await threeTasks(root);
    await assert.rejects(
      forkSession({ ...scope(root), session: id, before: 4 }),
      (e: unknown) =>
        e instanceof PenguinError && e.kind === "usage" && /has 3 user message/.test(e.message),
    );
    await assert.rejects(forkSession({ ...scope(root), session: id }), /exactly one of/);
    await assert.rejects(
      forkSession({ ...scope(root), session: id, before: 1, at: 1 }),
      /exactly one of/,
    );
  });
});

Deno.test("fork of a prompt after a compaction copies from that file, summary included", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("c0c0c0c0");
    const t = tracesOf(root);
    await s.put(t, id, [
      s.meta(id),
      s.user("one"),
      s.begin(),
      s.say("a"),
      s.end(),
      s.compactBegin(),
      s.user("Summarize."),
      s.begin(),
      s.say("[summary]S[/summary]"),
      s.end(),
      s.compactEnd(),
    ]);
    const second = await s.put(t, id, [
      s.meta(id),
      s.tools(),
      s.user("[context_summary]\nS\n[/context_summary]"),
      s.user("two"),
      s.begin(),
      s.say("b"),
      s.end(),
    ], 2);
    const fork = await forkSession({ ...scope(root), session: id, before: 2 });
    assert.equal(fork.lineage.trace_index, 2);
    assert.equal(fork.sourcePath, second);
    const copy = await replayCopy(fork.path);
    assert.deepEqual(copy.carryOver.map((m) => m.payload.type === "text" && m.payload.text), [
      "[context_summary]\nS\n[/context_summary]",
    ]);
  });
});

Deno.test("clone copies the latest file up to a request still open at its end", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("c1c1c1c1");
    const path = await s.put(tracesOf(root), id, [
      s.meta(id),
      s.user("one"),
      s.begin(),
      s.say("a"),
      s.end(),
      s.user("two"),
      s.begin(),
      s.say("half an answer"),
    ]);
    const before = await treeDigest(root);
    const clone = await cloneSession({ ...scope(root), session: id });
    assert.equal(clone.kind, "clone");
    const src = resumeTrace((await records(path)).slice(1));
    const copy = await replayCopy(clone.path);
    assert.deepEqual(copy.history, src.history);
    assert.deepEqual(copy.carryOver, src.carryOver);
    const copied = await records(clone.path);
    assert.ok(
      !copied.some((m) =>
        m.type === "model_msg" && m.payload.type === "text" && m.payload.text === "half an answer"
      ),
    );
    const after = await treeDigest(root);
    for (const [k, v] of Object.entries(before)) assert.equal(after[k], v);
  });
});

Deno.test("clone of a finished session equals its replay and drops a dangling compaction", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("c2c2c2c2");
    const finished = jsonl([
      s.meta(id),
      s.user("one"),
      s.begin(),
      s.call("c1"),
      s.end(),
      s.out("c1"),
    ]);
    const path = await putTrace(
      tracesOf(root),
      "2026-01-02",
      id,
      1,
      finished + jsonl([s.compactBegin(), s.user("Summarize.")]),
    );
    const clone = await cloneSession({ ...scope(root), session: id });
    const copy = await replayCopy(clone.path);
    assert.equal(copy.danglingCompaction, undefined);
    const srcLines = (await Deno.readTextFile(path)).split("\n");
    assert.equal(clone.lineage.line, 6);
    assert.deepEqual((await Deno.readTextFile(clone.path)).split("\n").slice(1), [
      ...srcLines.slice(1, 6),
      "",
    ]);
  });
});

Deno.test("fork of a loose PenguinHarness trace lands in the agent's traces directory", async () => {
  await withRoot(async (root) => {
    const src = fixture("03-resumed.jsonl");
    const fork = await forkSession({
      ...scope(root),
      projectId: "p1",
      agentId: "a1",
      session: src,
      before: 2,
    });
    assert.ok(fork.path.startsWith(tracesOf(root, "a1", "p1")));
    assert.equal(fork.lineage.parent_session_id, "session-2026-11-29-19-26-12-021d8b64");
    assert.deepEqual(
      body(await replayCopy(fork.path)),
      body(await replayPrefix(src, fork.lineage.line)),
    );
    assert.match(fork.continueWith[1]!, /--project-id p1 --agent-id a1$/);
    const resumed = await replayCopy(fork.path);
    assert.equal(
      resumed.history.filter((m) => m.payload.type === "text" && m.payload.role === "user").length,
      1,
    );
  });
});
