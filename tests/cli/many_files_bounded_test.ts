// A command that leaves 300,000 files in the workspace: once it has ended,
// penguin still looks through all of them for repositories it made (an armed
// one planted next to them is disarmed), reading each directory entry by
// entry instead of holding its listing, so penguin's peak stays under a
// bound far below what holding the listing costs.
import assert from "node:assert/strict";
import { join } from "node:path";
import { detectSandbox } from "../../lib/sandbox/detect.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { inRoot } from "../support/cli.ts";
import { makeRoot } from "../support/roots.ts";
import { toolOutputsById } from "../agent/_subagent_support.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";

const MB = 1000 * 1000;
/** The most penguin may hold at its peak. */
const PEAK_LIMIT = 200 * MB;
const FILES = 300_000;

const SANDBOX = Deno.build.os === "linux" && (await detectSandbox()).kind === "bwrap";

// 300,000 files in one directory, and a repository whose config runs a command.
const CMD = `mkdir d && cd d && seq 1 ${FILES} | sed 's/^/file-with-a-longish-name-/' | ` +
  `xargs touch && cd .. && mkdir -p deep/sub/.git/objects deep/sub/.git/refs && ` +
  `echo 'ref: refs/heads/main' > deep/sub/.git/HEAD && ` +
  `printf '[core]\\n\\tfsmonitor = touch planted\\n' > deep/sub/.git/config && ls d | wc -l`;

Deno.test({
  name: "the walk after a command that left 300,000 files stays under a peak bound and disarms",
  ignore: !SANDBOX || !CAN_MEASURE_PEAK,
  async fn() {
    const server = await startModelServer({
      handler: (_req, index) =>
        index === 0
          ? turn.of(
            item.toolCall("exec_command", { cmd: CMD, yield_time_ms: 600000 }, { id: "c0" }),
          )
          : turn.text("all done"),
    });
    const sb = await makeRoot(server);
    try {
      const r = await runCliPeak(inRoot(sb, "run", "-m", "Make the files."), sb.base);
      assert.equal(r.code, 0, r.stderr);
      const out = toolOutputsById(server.requests).get("c0") ?? "";
      assert.match(out, new RegExp(`\\b${FILES}\\b`), out);
      const disarmed = await Deno.lstat(join(sb.workspace, "deep/sub/.git-disarmed-by-penguin"))
        .then(() => true, () => false);
      assert.equal(disarmed, true, "the planted repository was found past the files and disarmed");
      assert.ok(r.peakBytes <= PEAK_LIMIT, `peak ${Math.round(r.peakBytes / MB)} MB`);
    } finally {
      await server.close();
      await Deno.remove(sb.base, { recursive: true });
    }
  },
});
