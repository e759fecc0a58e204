import assert from "node:assert/strict";
import { modelMsg, userText } from "../../lib/protocol/mod.ts";
import type { OmniMessage } from "../../lib/protocol/mod.ts";
import { openTraceWriter } from "../../lib/trace/mod.ts";
import { sampleTrace, sessionId, withTempDir } from "./_support.ts";

/** Whether the file at `path` holds `msg` now (the observer is synchronous, so is this). */
function fileHolds(path: string, msg: OmniMessage): boolean {
  return Deno.readTextFileSync(path).includes(JSON.stringify(msg));
}

Deno.test("a writer's observer sees each record once it is in the file, in order, then the close", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const seen: string[] = [];
    const onDisk: boolean[] = [];
    const w = await openTraceWriter({
      tracesDir: dir,
      sessionId: id,
      fsync: "never",
      observer: {
        appended(msg: OmniMessage) {
          // The record is already on disk when the observer hears of it.
          // (An observer's throw is swallowed by the writer: note, assert later.)
          onDisk.push(fileHolds(w.path, msg));
          seen.push(
            msg.type === "event_msg" || msg.type === "model_msg" ? msg.payload.type : msg.type,
          );
        },
        closed() {
          seen.push("closed");
        },
      },
    });
    const records = sampleTrace(id);
    await Promise.all(records.map((r) => w.append(r)));
    // Partials are not written, so not observed.
    await w.append(modelMsg({
      type: "partial_text",
      role: "assistant",
      event_type: "delta",
      text: "x",
      stop_reason: "completed",
    }));
    await w.close();
    assert.deepEqual(seen, [
      ...records.map((m) =>
        m.type === "event_msg" || m.type === "model_msg" ? m.payload.type : m.type
      ),
      "closed",
    ]);
    assert.deepEqual(onDisk, records.map(() => true), "each record was in the file when told");
  });
});

Deno.test("an observer that throws changes nothing for the writer", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId("0bad0b5e");
    const w = await openTraceWriter({
      tracesDir: dir,
      sessionId: id,
      fsync: "never",
      observer: {
        appended() {
          throw new Error("observer broke");
        },
        closed() {
          throw new Error("observer broke at close");
        },
      },
    });
    for (const r of sampleTrace(id)) assert.equal(await w.append(r), true);
    assert.equal(await w.append(modelMsg(userText("after"))), true);
    await w.close();
    const lines = (await Deno.readTextFile(w.path)).trimEnd().split("\n");
    assert.equal(lines.length, sampleTrace(id).length + 1);
  });
});
