import assert from "node:assert/strict";
import { join } from "node:path";
import { subagentChildren } from "../../lib/session/_subagents.ts";
import { jsonl, Script, sid, withRoot } from "./_support.ts";

const CHUNK = 1 << 20;

Deno.test("subagent events are found wherever chunk boundaries fall", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const event = jsonl([s.subagent(sid("0000000a"))]);
    for (const offset of [1, 20, event.length - 1, event.length, event.length + 1]) {
      // Pad so that the event line straddles (or just touches) the first chunk boundary.
      const head = jsonl([s.meta(sid("ffffffff"))]);
      const pad = CHUNK - offset - head.length - 1;
      const path = join(root, `t${offset}.jsonl`);
      const filler = JSON.stringify({ pad: "p".repeat(Math.max(0, pad - 10)) }).padEnd(pad, " ");
      await Deno.writeTextFile(
        path,
        head + filler + "\n" + event + jsonl([s.subagent(sid("0000000b"))]),
      );
      assert.deepEqual(
        await subagentChildren(path),
        [sid("0000000a"), sid("0000000b")],
        `offset ${offset}`,
      );
    }
  });
});

Deno.test("the marker inside strings, long lines and origin-tagged events is not a child", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const path = join(root, "t.jsonl");
    const forwarded = { ...s.subagent(sid("0000000c")), origin: ["x"] };
    await Deno.writeTextFile(
      path,
      jsonl([
        s.meta(sid("ffffffff")),
        s.out("c1", 'quoted {"type":"subagent","session_id":"nope"}'),
        forwarded,
        s.subagent(sid("0000000d")),
        s.subagent(sid("0000000d")),
      ]) + `{"x":"${"y".repeat(3 * CHUNK)}","type":"subagent"}\n`,
    );
    assert.deepEqual(await subagentChildren(path), [sid("0000000d")]);
  });
});
