// Many large edits in one response stay within the tool host's memory: 8 `edit_file` replace_all
// calls over 4 files of 8 MB (each edit grows its file by 1 MB). The tool worker pool runs 4 calls
// at once, and each edit holds its file, the edited text and the diff, so they took the tool host
// near 700 MB (issue 26 item 6, attack N39); the file memory budget makes the large ones wait their
// turn, a worker that held a large file is retired, and the host's malloc returns large buffers.
// The peak is wait4's ru_maxrss of penguin, which covers the tool host it started and reaped.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";

const MB = 1000 * 1000;
/** The most penguin or the tool host may hold at its peak (issue 26 item 6). */
const PEAK_LIMIT = 300 * MB;
const FILES = 4;
const LINES = 1_000_000;

Deno.test({
  name: "8 edit_file replace_all calls over 4 files of 8 MB: every edit runs, peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const edits = Array.from({ length: 2 * FILES }, (_, i) =>
      item.toolCall("edit_file", {
        file_path: `e${i % FILES}.txt`,
        old_string: "QQ",
        new_string: "QQx",
        replace_all: true,
      }));
    const server = await startModelServer({ turns: [turn.of(...edits), turn.text("done")] });
    const sb = await makeRoot(server, { visible: true });
    try {
      const text = "line QQ\n".repeat(LINES);
      for (let k = 0; k < FILES; k++) {
        await Deno.writeTextFile(join(sb.workspace, `e${k}.txt`), text);
      }
      const r = await runCliPeak(
        ["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"],
        sb.base,
      );
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.equal(r.stdout.match(/Replaced 1000000 occurrences/g)?.length, 2 * FILES, r.stdout);
      for (let k = 0; k < FILES; k++) {
        const size = (await Deno.stat(join(sb.workspace, `e${k}.txt`))).size;
        // Edits of one file run in the order the model made them: both land.
        assert.equal(size, 10 * LINES, `e${k}.txt was edited twice: ${size}`);
      }
      assert.ok(r.peakBytes <= PEAK_LIMIT, `peak ${Math.round(r.peakBytes / MB)} MB`);
    } finally {
      await server.close();
      await sb.cleanup();
    }
  },
});
