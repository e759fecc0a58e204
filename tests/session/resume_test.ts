import assert from "node:assert/strict";
import { join } from "node:path";
import { PenguinError } from "../../lib/protocol/mod.ts";
import {
  closeDanglingCompaction,
  loadSessionForResume,
  resumeTrace,
} from "../../lib/session/mod.ts";
import {
  acquireSessionLock,
  openTraceWriter,
  releaseSessionLock,
  sessionLockPath,
} from "../../lib/trace/mod.ts";
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

async function twoFileSession(root: string, s: Script, ws: string) {
  const id = sid("abcdef01");
  const t = tracesOf(root);
  const first = await s.put(t, id, [
    s.meta(id, { workspace: ws }),
    s.user("old task"),
    s.begin(),
    s.say("old"),
    s.end(),
    s.compactBegin("discard"),
    s.compactEnd("completed", "discard"),
  ]);
  const second = await s.put(
    t,
    id,
    [
      s.meta(id, { workspace: ws }),
      s.user("new task"),
      s.begin(),
      s.call("c1"),
      s.usage(300, 120),
      s.end(),
      s.out("c1"),
    ],
    2,
    "2026-01-03",
  );
  return { id, t, first, second };
}

/** Whether the session lock is free right now (probed by taking and releasing it). */
async function lockState(tracesDir: string, id: string): Promise<"free" | "locked"> {
  try {
    await releaseSessionLock(await acquireSessionLock(tracesDir, id));
    return "free";
  } catch (err) {
    if (err instanceof PenguinError && err.kind === "locked") return "locked";
    throw err;
  }
}

Deno.test("loadSessionForResume with lock holds the session lock while it reads the trace, and hands it over", async () => {
  await withRoot(async (root) => {
    const { id, t } = await twoFileSession(root, new Script(), root);
    const probes: Promise<"free" | "locked">[] = [];
    const loaded = await loadSessionForResume({
      ...scope(root),
      target: id,
      lock: true,
      observe: () => probes.push(lockState(t, id)),
    });
    try {
      assert.ok(probes.length > 0, "records were replayed");
      assert.deepEqual(new Set(await Promise.all(probes)), new Set(["locked"]));
      assert.ok(loaded.lock, "the lock is handed to the caller");
      assert.equal(loaded.lock.path, sessionLockPath(t, id));
      assert.equal(await lockState(t, id), "locked");
    } finally {
      if (loaded.lock) await releaseSessionLock(loaded.lock);
    }
    assert.equal(await lockState(t, id), "free");
  });
});

Deno.test("loadSessionForResume with lock refuses a session another writer holds before reading any of it", async () => {
  await withRoot(async (root) => {
    const { id, t } = await twoFileSession(root, new Script(), root);
    const held = await acquireSessionLock(t, id);
    let read = 0;
    try {
      await assert.rejects(
        loadSessionForResume({ ...scope(root), target: id, lock: true, observe: () => read++ }),
        (e) =>
          e instanceof PenguinError && e.kind === "locked" &&
          e.message.startsWith(`Cannot resume session ${id}: it is locked by process ${Deno.pid} `),
      );
      assert.equal(read, 0, "no record was read");
    } finally {
      await releaseSessionLock(held);
    }
  });
});

Deno.test("loadSessionForResume with lock releases the lock when it refuses the session", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("abcdef02");
    const t = tracesOf(root);
    await s.put(t, id, [s.meta(id, { workspace: join(root, "gone") })]);
    await assert.rejects(
      loadSessionForResume({ ...scope(root), target: id, lock: true }),
      /Workspace does not exist/,
    );
    assert.equal(await lockState(t, id), "free");
  });
});

Deno.test("loadSessionForResume replays the latest file and says where to continue writing", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const { id, t, second } = await twoFileSession(root, s, root);
    const loaded = await loadSessionForResume({ ...scope(root), target: id });
    assert.equal(loaded.sessionId, id);
    assert.deepEqual(loaded.file, { path: second, tracesDir: t, dateDir: "2026-01-03", index: 2 });
    assert.equal(loaded.meta.provider, "custom");
    assert.equal(loaded.meta.workspace, root);
    assert.deepEqual(loaded.replay, resumeTrace(await records(second)));
    assert.equal(loaded.replay.sessionTurns, 1);
    assert.equal(loaded.replay.carryOver.length, 1);
    assert.equal(loaded.notice, null);
  });
});

Deno.test("loadSessionForResume reads only the latest file, never the older shards", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const { id, first, second } = await twoFileSession(root, s, root);
    const opened: string[] = [];
    const orig = Deno.open;
    (Deno as unknown as { open: typeof Deno.open }).open = (path, options) => {
      opened.push(String(path));
      return orig(path, options);
    };
    try {
      await loadSessionForResume({ ...scope(root), target: id });
    } finally {
      (Deno as unknown as { open: typeof Deno.open }).open = orig;
    }
    assert.ok(opened.includes(second));
    assert.ok(!opened.includes(first));
  });
});

Deno.test("loadSessionForResume resolves latest and file paths", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const { id, first } = await twoFileSession(root, s, root);
    assert.equal((await loadSessionForResume({ ...scope(root), target: "latest" })).sessionId, id);
    assert.equal((await loadSessionForResume({ ...scope(root), target: first })).file.index, 2);
  });
});

Deno.test("resuming a missing session is a not_found error", async () => {
  await withRoot(async (root) => {
    await assert.rejects(
      loadSessionForResume({ ...scope(root), target: sid("00000000") }),
      (e: unknown) =>
        e instanceof PenguinError && e.kind === "not_found" &&
        e.message.startsWith("Session does not exist: "),
    );
  });
});

Deno.test("a session_meta without provider is refused as legacy data", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("abcdef02");
    const meta = s.meta(id, { workspace: root });
    delete (meta.payload as unknown as Record<string, unknown>).provider;
    await s.put(tracesOf(root), id, [meta, s.user("x")]);
    await assert.rejects(
      loadSessionForResume({ ...scope(root), target: id }),
      (e: unknown) =>
        e instanceof PenguinError && e.kind === "data" && /legacy data/.test(e.message),
    );
  });
});

Deno.test("an unreadable session_meta is refused", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("abcdef03");
    await putTrace(tracesOf(root), "2026-01-02", id, 1, "{not json\n" + jsonl([s.user("x")]));
    await assert.rejects(
      loadSessionForResume({ ...scope(root), target: id }),
      /does not start with a readable session_meta/,
    );
  });
});

Deno.test("a workspace that is gone is refused and never recreated", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const ws = join(root, "gone");
    const id = sid("abcdef04");
    await s.put(tracesOf(root), id, [s.meta(id, { workspace: ws }), s.user("x")]);
    await assert.rejects(
      loadSessionForResume({ ...scope(root), target: id }),
      (e: unknown) =>
        e instanceof PenguinError && e.message.startsWith(`Workspace does not exist: ${ws}`),
    );
    await assert.rejects(Deno.stat(ws), Deno.errors.NotFound);
  });
});

Deno.test("loading for resume changes nothing on disk, on success or refusal", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const { id } = await twoFileSession(root, s, root);
    const bad = sid("abcdef05");
    await s.put(tracesOf(root), bad, [
      s.meta(bad, { workspace: join(root, "nope") }),
      s.user("x"),
      s.compactBegin(),
    ]);
    const before = await treeDigest(root);
    await loadSessionForResume({ ...scope(root), target: id });
    await assert.rejects(loadSessionForResume({ ...scope(root), target: bad }));
    assert.deepEqual(await treeDigest(root), before);
  });
});

Deno.test("a torn final line is tolerated and damaged middle lines are reported", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("abcdef06");
    const text = jsonl([s.meta(id, { workspace: root }), s.user("go"), s.begin()]) +
      "garbage in the middle\n" + jsonl([s.say("ok"), s.end()]) + '{"timestamp":"2026-01-0';
    const path = await putTrace(tracesOf(root), "2026-01-02", id, 1, text);
    const loaded = await loadSessionForResume({ ...scope(root), target: id });
    assert.equal(loaded.replay.history.length, 2);
    assert.deepEqual(loaded.problems.map((p) => p.kind), ["malformed", "torn_tail"]);
    assert.equal(loaded.notice, `[trace] skipped 2 malformed line(s) [4, 7] in ${path}`);
  });
});

Deno.test("a loose trace file outside a traces directory cannot be resumed in place", async () => {
  await withRoot(async (root) => {
    await assert.rejects(
      loadSessionForResume({ ...scope(root), target: fixture("01-simple.jsonl") }),
      /not inside a traces directory.*penguin sessions import/,
    );
  });
});

Deno.test("closeDanglingCompaction appends a failed compaction_end that closes the span", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("abcdef07");
    const t = tracesOf(root);
    const path = await s.put(t, id, [
      s.meta(id, { workspace: root }),
      s.user("go"),
      s.begin(),
      s.say("a"),
      s.end(),
      s.compactBegin("summarize", "context"),
    ]);
    const loaded = await loadSessionForResume({ ...scope(root), target: id });
    const dangling = loaded.replay.danglingCompaction;
    assert.deepEqual(dangling, { reason: "context", mode: "summarize" });
    const writer = await openTraceWriter({
      tracesDir: loaded.file.tracesDir,
      sessionId: id,
      dateDir: loaded.file.dateDir,
      index: loaded.file.index,
    });
    try {
      assert.equal(await closeDanglingCompaction(writer, dangling!), true);
    } finally {
      await writer.close();
    }
    const after = await records(path);
    const last = after.at(-1)!;
    assert.ok(last.type === "event_msg" && last.payload.type === "compaction_end");
    assert.deepEqual(
      { ...last.payload },
      { type: "compaction_end", reason: "context", mode: "summarize", status: "failed" },
    );
    assert.equal(resumeTrace(after).danglingCompaction, undefined);
  });
});

Deno.test("closeDanglingCompaction is best-effort: a failing writer yields false and a message", async () => {
  const messages: string[] = [];
  const ok = await closeDanglingCompaction(
    { append: () => Promise.reject(new Error("disk full")) },
    { reason: "turns", mode: "discard" },
    (m) => messages.push(m),
  );
  assert.equal(ok, false);
  assert.deepEqual(messages, ["[trace] write failed: disk full"]);
});

Deno.test("thousands of damaged lines are skipped and the diagnostic lists at most 20", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("abcdef08");
    const text = jsonl([s.meta(id, { workspace: root }), s.user("go")]) + "oops\n".repeat(5000) +
      jsonl([s.begin(), s.say("ok"), s.end()]);
    await putTrace(tracesOf(root), "2026-01-02", id, 1, text);
    const loaded = await loadSessionForResume({ ...scope(root), target: id });
    // The first 1000 are kept, the others counted: the notice still says 5000.
    assert.equal(loaded.problems.length, 1000);
    assert.match(loaded.notice!, /^\[trace\] skipped 5000 malformed line\(s\)/);
    assert.equal(loaded.replay.sessionTurns, 1);
    const shown = /\[([^\]]*)\]/.exec(loaded.notice!.slice("[trace]".length))![1]!;
    assert.equal(shown.split(", ").length, 21); // 20 line numbers and "…"
    assert.ok(shown.endsWith(", …"));
  });
});
