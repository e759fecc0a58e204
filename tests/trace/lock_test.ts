import assert from "node:assert/strict";
import { join } from "node:path";
import { PenguinError } from "../../lib/protocol/mod.ts";
import {
  acquireSessionLock,
  openTraceWriter,
  releaseSessionLock,
  type SessionLock,
  sessionLockPath,
} from "../../lib/trace/mod.ts";
import { runChild, sessionId, startChild, withTempDir } from "./_support.ts";

async function deadPid(): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "0"],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const pid = child.pid;
  await child.status;
  return pid;
}

Deno.test("a second process opening a writer for a locked session is refused with the holder's pid", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const w = await openTraceWriter({ tracesDir: dir, sessionId: id });
    try {
      const { code, stdout } = await runChild("try-open", dir, id);
      assert.equal(code, 0);
      const r = JSON.parse(stdout) as { ok: boolean; kind: string; message: string };
      assert.equal(r.ok, false);
      assert.equal(r.kind, "locked");
      assert.match(
        r.message,
        new RegExp(
          `^Cannot write session ${id}: it is locked by process ${Deno.pid} \\(started \\d{4}-[^)]+\\); wait for it to finish or kill it$`,
        ),
      );
    } finally {
      await w.close();
    }
    const after = JSON.parse((await runChild("try-open", dir, id)).stdout) as { ok: boolean };
    assert.equal(after.ok, true, "the lock is free once the holder closes");
  });
});

Deno.test("a lock file left by a dead process is taken over", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const pid = await deadPid();
    const path = sessionLockPath(dir, id);
    await Deno.mkdir(join(dir, ".locks"), { recursive: true });
    await Deno.writeTextFile(
      path,
      JSON.stringify({ pid, hostname: Deno.hostname(), started: "2026-01-01T00:00:00.000Z" }),
    );
    const lock = await acquireSessionLock(dir, id);
    try {
      const recorded = JSON.parse(await Deno.readTextFile(path)) as { pid: number };
      assert.equal(recorded.pid, Deno.pid);
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    } finally {
      await releaseSessionLock(lock);
    }
    await assert.rejects(Deno.stat(path), Deno.errors.NotFound, "release removes the lock file");
  });
});

Deno.test("the lock of a killed holder is taken over", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const holder = await startChild("hold", dir, id);
    assert.equal(holder.firstLine, "held");
    await assert.rejects(
      acquireSessionLock(dir, id),
      (e) => e instanceof PenguinError && e.kind === "locked",
    );
    holder.process.kill("SIGKILL");
    await holder.process.status;
    await holder.process.stdout.cancel();
    const lock = await acquireSessionLock(dir, id);
    await releaseSessionLock(lock);
  });
});

Deno.test("of many takers racing for a stale lock exactly one wins", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    await Deno.mkdir(join(dir, ".locks"), { recursive: true });
    const stale = JSON.stringify({
      pid: await deadPid(),
      hostname: Deno.hostname(),
      started: "2026-01-01T00:00:00Z",
    });
    await Deno.writeTextFile(sessionLockPath(dir, id), stale);
    // Racing in this process (each attempt is its own open file) ...
    const settled = await Promise.allSettled(
      Array.from({ length: 8 }, () => acquireSessionLock(dir, id)),
    );
    const won = settled.filter((s): s is PromiseFulfilledResult<SessionLock> =>
      s.status === "fulfilled"
    );
    assert.equal(won.length, 1);
    for (const s of settled) {
      if (s.status === "rejected") {
        assert.ok(s.reason instanceof PenguinError && s.reason.kind === "locked");
      }
    }
    await releaseSessionLock(won[0]!.value);
    // ... and across processes.
    await Deno.writeTextFile(sessionLockPath(dir, id), stale);
    const children = await Promise.all(
      Array.from({ length: 4 }, () => startChild("hold", dir, id)),
    );
    try {
      const lines = children.map((c) => c.firstLine);
      assert.equal(lines.filter((l) => l === "held").length, 1, lines.join("\n"));
      assert.ok(
        lines.filter((l) => l !== "held").every((l) =>
          /^locked Cannot write session .* by process \d+/.test(l)
        ),
      );
    } finally {
      for (const c of children) await c.finish();
    }
  });
});

Deno.test("the lock directory is 0700, and releasing a lock twice does not remove a later holder's lock", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const first = await acquireSessionLock(dir, id);
    assert.equal((await Deno.stat(join(dir, ".locks"))).mode! & 0o777, 0o700);
    await releaseSessionLock(first);
    const second = await acquireSessionLock(dir, id);
    await releaseSessionLock(first);
    await assert.rejects(
      acquireSessionLock(dir, id),
      (e) => e instanceof PenguinError && e.kind === "locked",
    );
    await releaseSessionLock(second);
  });
});
