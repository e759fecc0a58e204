// A command that leaves 100,000 directories in the workspace: the walks for nested repositories
// after it and after each later command (and their re-checks) make paths, `lstat` results and
// listings that die at once, and V8 let penguin's heap grow far past what the walks keep (attack
// round 20 bounded #3: ~280 MB here, ~450 MB deeper). The walks collect garbage as they go.
import assert from "node:assert/strict";
import { detectSandbox } from "../../lib/sandbox/detect.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { inRoot } from "../support/cli.ts";
import { makeRoot } from "../support/roots.ts";
import { toolOutputsById } from "../agent/_subagent_support.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";

const MB = 1000 * 1000;
/** The most penguin may hold at its peak. */
const PEAK_LIMIT = 210 * MB;

const SANDBOX = Deno.build.os === "linux" && (await detectSandbox()).kind === "bwrap";

// 100 directories of 1,000 directories each, then two more commands (two more walks).
const CMDS = [
  "for i in $(seq 1 100); do mkdir d$i && (cd d$i && seq 1 1000 | xargs mkdir); done; " +
  "find d* -type d | wc -l",
  "echo two",
  "echo three",
];

Deno.test({
  name: "the walks after commands in a workspace of 100,000 directories stay under a peak bound",
  ignore: !SANDBOX || !CAN_MEASURE_PEAK,
  async fn() {
    const server = await startModelServer({
      handler: (_req, i) =>
        i < CMDS.length
          ? turn.of(
            item.toolCall("exec_command", { cmd: CMDS[i]!, yield_time_ms: 600000 }, {
              id: `c${i}`,
            }),
          )
          : turn.text("all done"),
      maxRequests: CMDS.length + 2,
    });
    const sb = await makeRoot(server);
    try {
      const r = await runCliPeak(inRoot(sb, "run", "-m", "Make the directories."), sb.base);
      assert.equal(r.code, 0, r.stderr);
      const outs = toolOutputsById(server.requests);
      assert.match(outs.get("c0") ?? "", /\b100100\b/, outs.get("c0"));
      assert.match(outs.get("c2") ?? "", /three/);
      assert.ok(r.peakBytes <= PEAK_LIMIT, `peak ${Math.round(r.peakBytes / MB)} MB`);
    } finally {
      await server.close();
      await Deno.remove(sb.base, { recursive: true });
    }
  },
});
