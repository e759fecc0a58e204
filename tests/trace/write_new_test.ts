import assert from "node:assert/strict";
import { join } from "node:path";
import { eventMsg, modelMsg, PenguinError } from "../../lib/protocol/mod.ts";
import type { OmniMessage } from "../../lib/protocol/mod.ts";
import { openTraceWriter, traceFilePath } from "../../lib/trace/mod.ts";
import { writeNewTrace } from "../../lib/trace/write_new.ts";
import { bigText, sampleTrace, sessionId, toJsonl, withTempDir } from "./_support.ts";

const DATE = "2026-01-02";

/** `records` as the session writer writes them (its file's bytes). */
async function writerBytes(dir: string, records: OmniMessage[]): Promise<Uint8Array> {
  const id = sessionId("11111111");
  const w = await openTraceWriter({ tracesDir: dir, sessionId: id, dateDir: DATE, lock: false });
  for (const m of records) await w.append(m);
  await w.close();
  return await Deno.readFile(w.path);
}

Deno.test("a new trace written whole has the session writer's bytes, partials left out", async () => {
  await withTempDir(async (dir) => {
    const partial = modelMsg({
      type: "partial_text",
      role: "assistant",
      event_type: "delta",
      text: "par",
      stop_reason: "completed",
    });
    // Past one gathered write (a MiB) several times, a record of non-ASCII text among them.
    const records = [
      ...sampleTrace(sessionId()),
      partial,
      ...Array.from({ length: 5 }, (_, i) => bigText(700_000, `é${i}ü`)),
      eventMsg({ type: "request_begin" }),
    ];
    const path = traceFilePath(join(dir, "new"), DATE, sessionId(), 1);
    const written = await writeNewTrace(path, records, true);
    assert.equal(written, records.length - 1);
    assert.deepEqual(await Deno.readFile(path), await writerBytes(join(dir, "old"), records));
    assert.equal(
      await Deno.readTextFile(path),
      toJsonl(records.filter((m) => m !== partial)),
    );
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(join(dir, "new", DATE))).mode! & 0o777, 0o700);
  });
});

Deno.test("a new trace takes its records from an async source", async () => {
  await withTempDir(async (dir) => {
    const records = sampleTrace(sessionId());
    async function* source() {
      for (const r of records) yield await Promise.resolve(r);
    }
    const path = traceFilePath(dir, DATE, sessionId(), 1);
    assert.equal(await writeNewTrace(path, source(), false), records.length);
    assert.equal(await Deno.readTextFile(path), toJsonl(records));
  });
});

Deno.test("a new trace is never written over an existing file, which is left as it was", async () => {
  await withTempDir(async (dir) => {
    const path = traceFilePath(dir, DATE, sessionId(), 1);
    await Deno.mkdir(join(dir, DATE), { recursive: true });
    await Deno.writeTextFile(path, "already here\n");
    await assert.rejects(
      writeNewTrace(path, sampleTrace(sessionId()), false),
      (err: unknown) =>
        err instanceof PenguinError && err.message.startsWith(`Cannot create trace "${path}"`),
    );
    assert.equal(await Deno.readTextFile(path), "already here\n");
  });
});
