import assert from "node:assert/strict";
import { join } from "node:path";
import { eventMsg, modelMsg, PenguinError, toolCall, userText } from "../../lib/protocol/mod.ts";
import type { OmniMessage } from "../../lib/protocol/mod.ts";
import {
  openTraceWriter,
  readTraceFile,
  traceFilePath,
  type TraceWriter,
} from "../../lib/trace/mod.ts";
import {
  bigText,
  meta,
  runChild,
  sampleTrace,
  sessionId,
  toJsonl,
  withTempDir,
} from "./_support.ts";

const DATE = "2026-01-02";

async function lines(path: string): Promise<string[]> {
  const text = await Deno.readTextFile(path);
  assert.ok(text.endsWith("\n"), "a trace file ends with a newline");
  return text.slice(0, -1).split("\n");
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** A writer of file `index` of session `id` under `dir` (date DATE), and the warnings it gave. */
async function openWarned(
  dir: string,
  id: string,
  index: number,
): Promise<{ writer: TraceWriter; said: string[] }> {
  const said: string[] = [];
  const writer = await openTraceWriter({
    tracesDir: dir,
    sessionId: id,
    dateDir: DATE,
    index,
    warn: (line) => said.push(line),
  });
  return { writer, said };
}

Deno.test("writer keeps 100 concurrent 1 MB records whole, one per line, in submission order", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const w = await openTraceWriter({
      tracesDir: dir,
      sessionId: id,
      dateDir: DATE,
      fsync: "never",
    });
    const records = Array.from({ length: 100 }, (_, i) => bigText(1 << 20, `producer-${i}:`));
    const results = await Promise.all(records.map((r) => w.append(r)));
    await w.close();
    assert.ok(results.every((r) => r === true));
    const got = await lines(w.path);
    assert.equal(got.length, 100);
    got.forEach((line, i) =>
      assert.ok(line === JSON.stringify(records[i]), `line ${i + 1} is record ${i}, intact`)
    );
  });
});

Deno.test("rotate moves to _002 between records and never splits one", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const w = await openTraceWriter({ tracesDir: dir, sessionId: id, dateDir: DATE });
    const before = [meta(id), bigText(300_000, "a"), bigText(300_000, "b")];
    const after = [
      meta(id),
      bigText(300_000, "c"),
      eventMsg({ type: "request_end", status: "completed" }),
    ];
    // Submitted without waiting: the chain keeps submission order.
    const ops: Promise<unknown>[] = [
      ...before.map((m) => w.append(m)),
      w.rotate(),
      ...after.map((m) => w.append(m)),
    ];
    await Promise.all(ops);
    assert.equal(w.index, 2);
    const first = traceFilePath(dir, DATE, id, 1);
    const second = traceFilePath(dir, DATE, id, 2);
    assert.equal(w.path, second);
    assert.deepEqual(await lines(first), before.map((m) => JSON.stringify(m)));
    assert.deepEqual(await lines(second), after.map((m) => JSON.stringify(m)));
    // Nothing is written until the next record after a rotation.
    await w.rotate();
    await w.close();
    assert.equal(await exists(traceFilePath(dir, DATE, id, 3)), false);
  });
});

Deno.test("writer cuts a torn tail off before the first append, and says what it dropped", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const path = traceFilePath(dir, DATE, id, 1);
    await Deno.mkdir(join(dir, DATE), { recursive: true });
    const head = toJsonl(sampleTrace(id).slice(0, 3));
    const fragment = JSON.stringify(modelMsg(toolCall("exec_command", "{}", "c1"))).slice(0, 90);
    await Deno.writeTextFile(path, head + fragment);
    const { writer: w, said } = await openWarned(dir, id, 1);
    const next = [modelMsg(userText("resumed")), eventMsg({ type: "request_begin" })];
    for (const m of next) await w.append(m);
    await w.close();
    assert.equal(await Deno.readTextFile(path), head + toJsonl(next));
    const { records, problems } = await readTraceFile(path);
    assert.equal(records.length, 5);
    assert.deepEqual(problems, []);
    assert.deepEqual(said, [
      `[trace] removed the torn end of "${path}": a tool_call record cut short by a ` +
      `write that failed (90 byte(s) without their newline); the trace ends at its last complete record`,
    ]);
  });
});

Deno.test("writer cuts a torn tail longer than its scan window, and a file that is one fragment", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const path = traceFilePath(dir, DATE, id, 1);
    await Deno.mkdir(join(dir, DATE), { recursive: true });
    const head = toJsonl([meta(id)]);
    await Deno.writeTextFile(path, head + '{"timestamp":"' + "x".repeat(200_000));
    const w = await openTraceWriter({
      tracesDir: dir,
      sessionId: id,
      dateDir: DATE,
      index: 1,
      warn: () => {},
    });
    const after = modelMsg(userText("after"));
    await w.append(after);
    await w.close();
    assert.equal(await Deno.readTextFile(path), head + toJsonl([after]));
    assert.deepEqual((await readTraceFile(path)).problems, []);

    const lone = traceFilePath(dir, DATE, id, 2);
    await Deno.writeTextFile(
      lone,
      '{"timestamp":"2026-01-02T00:00:00.000Z","type":"session_meta","pay',
    );
    const { writer: w2, said } = await openWarned(dir, id, 2);
    const first = meta(id);
    await w2.append(first);
    await w2.close();
    assert.equal(await Deno.readTextFile(lone), toJsonl([first]));
    assert.match(said[0]!, /a session_meta record cut short .*\(66 byte\(s\)/);
  });
});

Deno.test("writer adds no newline to a clean existing file, and re-probes after rotation", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    await Deno.mkdir(join(dir, DATE), { recursive: true });
    const clean = toJsonl([meta(id)]);
    await Deno.writeTextFile(traceFilePath(dir, DATE, id, 1), clean);
    await Deno.writeTextFile(traceFilePath(dir, DATE, id, 2), clean + '{"timestamp":"20');
    const said: string[] = [];
    const w = await openTraceWriter({
      tracesDir: dir,
      sessionId: id,
      dateDir: DATE,
      warn: (line) => said.push(line),
    });
    const m = modelMsg(userText("x"));
    await w.append(m);
    assert.deepEqual(said, []);
    await w.rotate();
    await w.append(m);
    await w.close();
    assert.equal(await Deno.readTextFile(traceFilePath(dir, DATE, id, 1)), clean + toJsonl([m]));
    assert.equal(await Deno.readTextFile(traceFilePath(dir, DATE, id, 2)), clean + toJsonl([m]));
    assert.equal(said.length, 1);
  });
});

Deno.test("writer creates files 0600 and directories 0700 even under a restrictive umask", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const tracesDir = join(dir, "agent", "traces");
    const { code, stdout } = await runChild("umask", tracesDir, id);
    assert.equal(code, 0);
    const { path } = JSON.parse(stdout) as { path: string };
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(join(tracesDir, DATE))).mode! & 0o777, 0o700);
    assert.equal((await Deno.stat(tracesDir)).mode! & 0o777, 0o700);
    assert.equal((await lines(path)).length, 1);
  });
});

Deno.test("writer tightens an existing trace file to 0600", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const path = traceFilePath(dir, DATE, id, 1);
    await Deno.mkdir(join(dir, DATE), { recursive: true });
    await Deno.writeTextFile(path, toJsonl([meta(id)]), { mode: 0o644 });
    await Deno.chmod(path, 0o644);
    const w = await openTraceWriter({ tracesDir: dir, sessionId: id, dateDir: DATE });
    await w.append(modelMsg(userText("x")));
    await w.close();
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
  });
});

Deno.test("a record that cannot be serialised rejects only its own append", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const w = await openTraceWriter({ tracesDir: dir, sessionId: id, dateDir: DATE });
    const bad = modelMsg(userText("bad")) as OmniMessage & { payload: Record<string, unknown> };
    bad.payload.extra = 10n; // BigInt: JSON.stringify throws
    const good = sampleTrace(id);
    const settled = await Promise.allSettled([
      w.append(good[0]!),
      w.append(bad),
      ...good.slice(1).map(w.append),
    ]);
    await w.close();
    assert.equal(settled[1]!.status, "rejected");
    const reason = (settled[1] as PromiseRejectedResult).reason;
    assert.ok(reason instanceof PenguinError && /BigInt/.test(reason.message), String(reason));
    assert.ok(settled.filter((s) => s.status === "fulfilled").length === good.length);
    assert.equal(await Deno.readTextFile(w.path), toJsonl(good));
  });
});

Deno.test({
  name:
    "a write that fails half-way rejects its caller, and the next append cuts the fragment off first",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await withTempDir(async (dir) => {
      const id = sessionId();
      const { code, stdout } = await runChild("torn-write", dir, id);
      assert.equal(code, 0, stdout);
      const r = JSON.parse(stdout) as {
        path: string;
        size: number;
        failed: string;
        wroteAfter: boolean;
      };
      assert.match(r.failed, /^Cannot append to trace .*after 100 of \d+ bytes$/);
      assert.equal(r.wroteAfter, true);
      const { records, problems } = await readTraceFile(r.path);
      assert.deepEqual(records.map((x) => x.line), [1, 2], "the fragment was cut off");
      assert.equal((records[1]!.message.payload as { text: string }).text, "after the failure");
      assert.deepEqual(problems, []);
    });
  },
});

Deno.test("partials and origin-tagged messages are skipped, not written", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const w = await openTraceWriter({ tracesDir: dir, sessionId: id, dateDir: DATE });
    const partial = modelMsg({
      type: "partial_text",
      role: "assistant",
      event_type: "delta",
      text: "par",
      stop_reason: "completed",
    });
    const forwarded = modelMsg(userText("from a child"), [sessionId("c0ffee00")]);
    const forwardedEvent = eventMsg({ type: "request_begin" }, [sessionId("c0ffee00")]);
    const kept = sampleTrace(id);
    assert.equal(await w.append(partial), false);
    assert.equal(await w.append(forwarded), false);
    assert.equal(await w.append(forwardedEvent), false);
    for (const m of kept) assert.equal(await w.append(m), true);
    await w.close();
    assert.equal(await Deno.readTextFile(w.path), toJsonl(kept));
  });
});

Deno.test("every fsync policy is accepted and writes the same bytes", async () => {
  await withTempDir(async (dir) => {
    const trace = sampleTrace(sessionId());
    for (const fsync of ["commit", "always", "never"] as const) {
      const id = sessionId(`0000000${["commit", "always", "never"].indexOf(fsync)}`);
      const w = await openTraceWriter({ tracesDir: dir, sessionId: id, dateDir: DATE, fsync });
      for (const m of trace) await w.append(m);
      await w.rotate();
      await w.append(trace[0]!);
      await w.close();
      assert.equal(await Deno.readTextFile(traceFilePath(dir, DATE, id, 1)), toJsonl(trace), fsync);
      assert.equal(
        await Deno.readTextFile(traceFilePath(dir, DATE, id, 2)),
        toJsonl([trace[0]!]),
        fsync,
      );
    }
  });
});

Deno.test("a closed writer refuses appends and closing twice is harmless", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const w = await openTraceWriter({ tracesDir: dir, sessionId: id, dateDir: DATE });
    await w.append(meta(id));
    await w.close();
    await w.close();
    await assert.rejects(w.append(modelMsg(userText("late"))), /the writer is closed/);
    await assert.rejects(w.rotate(), /the writer is closed/);
    assert.equal((await lines(w.path)).length, 1);
  });
});

Deno.test("a writer takes the session lock: a second writer for the session is refused until the first closes", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const first = await openTraceWriter({ agentDir: dir, sessionId: id });
    assert.equal(first.tracesDir, join(dir, "traces"));
    await assert.rejects(
      openTraceWriter({ agentDir: dir, sessionId: id }),
      (e) =>
        e instanceof PenguinError && e.kind === "locked" &&
        e.message.includes(`process ${Deno.pid}`),
    );
    // Another session is independent.
    const other = await openTraceWriter({ agentDir: dir, sessionId: sessionId("abcdef01") });
    await other.close();
    await first.close();
    const again = await openTraceWriter({ agentDir: dir, sessionId: id });
    await again.close();
  });
});
