// A response of 40 exec_command calls does not start 40 sandboxes at once:
// at most MAX_RUNNING_COMMANDS run together, the others wait their turn, and
// every call completes. Each command marks itself running with a file in the
// workspace and waits for the test to release it; the test releases one at a
// time, only once the full batch is in place, and checks that no more than
// the bound are ever marked (it watches the directory: no timing involved).
import assert from "node:assert/strict";
import { join } from "node:path";
import { detectSandbox } from "../../lib/sandbox/detect.ts";
import { MAX_RUNNING_COMMANDS } from "../../lib/tools/command_gate.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { inRoot, runCli } from "../support/cli.ts";
import { makeRoot } from "../support/roots.ts";
import { toolOutputsById } from "../agent/_subagent_support.ts";

const SANDBOX = Deno.build.os === "linux" && (await detectSandbox()).kind === "bwrap";
const CALLS = 40;

// Mark itself running (a unique file in run/), wait for go/<that name>, unmark.
// (go/all releases every command: a failing test ends them all.)
const CMD = 'e=$(mktemp -p run x.XXXXXX); n=$(basename "$e"); ' +
  'until [ -e "go/$n" ] || [ -e go/all ]; do sleep 0.02; done; rm "$e"; echo "done $n"';

Deno.test({
  name: `40 exec_command calls of one response run at most ${MAX_RUNNING_COMMANDS} at once`,
  ignore: !SANDBOX,
  async fn() {
    const server = await startModelServer({
      handler: (_req, index) =>
        index === 0
          ? turn.of(
            ...Array.from(
              { length: CALLS },
              // The longest yield window: a command that outlives its window runs on in the
              // background and gives its slot up, which a loaded machine would otherwise reach.
              (_, i) =>
                item.toolCall("exec_command", { cmd: CMD, yield_time_ms: 3_600_000 }, {
                  id: `c${i}`,
                }),
            ),
          )
          : turn.text("all done"),
    });
    const sb = await makeRoot(server, { visible: true });
    const run = join(sb.workspace, "run");
    const go = join(sb.workspace, "go");
    await Deno.mkdir(run);
    await Deno.mkdir(go);
    const watcher = Deno.watchFs(run);
    const cli = runCli(inRoot(sb, "run", "-m", "Run them all."));
    try {
      const released = new Set<string>();
      let finished = 0;
      let most = 0;
      const events = watcher[Symbol.asyncIterator]();
      while (finished < CALLS) {
        const present = [...Deno.readDirSync(run)].map((e) => e.name);
        assert.ok(
          present.length <= MAX_RUNNING_COMMANDS,
          `${present.length} commands running at once: ${present.join(" ")}`,
        );
        most = Math.max(most, present.length);
        finished = [...released].filter((n) => !present.includes(n)).length;
        const held = present.filter((n) => !released.has(n));
        // The whole batch is in place (none of it released yet): let one go.
        const batch = Math.min(MAX_RUNNING_COMMANDS, CALLS - finished);
        if (present.length === batch && held.length === batch && batch > 0) {
          released.add(held[0]!);
          await Deno.writeTextFile(join(go, held[0]!), "");
          continue;
        }
        if (finished >= CALLS) break;
        const e = await events.next();
        assert.ok(!e.done, "the watcher ended early");
      }
      const r = await cli;
      assert.equal(r.code, 0, r.stderr);
      assert.equal(most, MAX_RUNNING_COMMANDS, "the commands did run side by side");
      const outputs = toolOutputsById(server.requests);
      const done = [...outputs.values()].filter((o) => /done x\./.test(o));
      assert.equal(done.length, CALLS, [...outputs.values()].join("\n"));
      assert.equal(released.size, CALLS);
    } finally {
      await Deno.writeTextFile(join(go, "all"), "");
      await cli;
      watcher.close();
      await server.close();
      await sb.cleanup();
    }
  },
});
