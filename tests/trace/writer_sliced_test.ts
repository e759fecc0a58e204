// A record of megabytes is encoded and written a slice at a time through one block, not as one
// copy of its bytes (eight subagents writing a 15 MB signature each held 15 MB more apiece, attack
// round 24 bounded R10); the file holds exactly the record's line, a surrogate pair on a slice's
// edge included.
import assert from "node:assert/strict";
import { join } from "node:path";
import { openTraceWriter } from "../../lib/trace/writer.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";

const MiB = 1024 * 1024;

Deno.test("a 4 MiB record is written in slices of under 1 MiB, the line whole", async () => {
  const dir = await Deno.makeTempDir({ prefix: "penguin-sliced-record-" });
  const real = Deno.FsFile.prototype.write;
  const sizes: number[] = [];
  Deno.FsFile.prototype.write = function (this: Deno.FsFile, p: Uint8Array) {
    sizes.push(p.length);
    return real.call(this, p);
  };
  try {
    const w = await openTraceWriter({
      tracesDir: dir,
      sessionId: "session-2026-12-06-10-00-00-0a0b0c0e",
      dateDir: "2026-12-06",
      fsync: "never",
    });
    // A surrogate pair across the first slice's edge (256 Ki characters into the line).
    const make = (text: string): OmniMessage => ({
      timestamp: "2026-12-06T10:00:00.000Z",
      type: "model_msg",
      payload: { type: "text", role: "assistant", text, stop_reason: "completed" },
    });
    const at = JSON.stringify(make("@")).indexOf("@");
    const text = "x".repeat(256 * 1024 - 1 - at) + "🐧" + "é€".repeat(MiB) + "y".repeat(MiB);
    const record = make(text);
    assert.equal(
      JSON.stringify(record).codePointAt(256 * 1024 - 1),
      0x1f427,
      "the pair on the edge",
    );
    await w.append(record);
    await w.close();
    const file = join(dir, "2026-12-06", "session-2026-12-06-10-00-00-0a0b0c0e_001.jsonl");
    assert.equal(await Deno.readTextFile(file), JSON.stringify(record) + "\n");
    assert.ok(Math.max(...sizes) < MiB, `largest write ${Math.max(...sizes)} bytes`);
    assert.ok(sizes.length >= 6, `${sizes.length} writes`);
  } finally {
    Deno.FsFile.prototype.write = real;
    await Deno.remove(dir, { recursive: true });
  }
});
