// A killed penguin's stand-in whose directory was deleted since: the next penguin's sweep drops
// its record, and no later session reports it as its own.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { makeRoot, visibleTempDir } from "../support/roots.ts";
import { startStandinHolder } from "./_standin_holder_process.ts";

async function records(runDir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(join(runDir, "stand-ins"))) {
    if (e.name.endsWith(".json")) out.push(e.name);
  }
  return out;
}

Deno.test({
  name: "a stand-in record whose directory is gone is dropped by the sweep and reported by nobody",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const runDir = await Deno.makeTempDir({ prefix: "penguin-gone-run-" });
    const gone = await visibleTempDir();
    const server = await startModelServer({
      handler: (_req, i) =>
        i === 0
          ? turn.toolCall("exec_command", { cmd: "echo hi", description: "d" })
          : turn.text("done"),
    });
    const sb = await makeRoot(server, { visible: true });
    try {
      // A penguin holds the stand-ins of `gone` and is killed: its records stay.
      const { child: holder, lines: reader, out } = await startStandinHolder(["plan", gone], {
        env: { PENGUIN_RUN_DIR: runDir },
      });
      assert.ok(out.includes("\n"), `holder did not start: ${out}`);
      holder.kill("SIGKILL");
      await holder.status;
      await reader.cancel();
      await holder.stdin.close().catch(() => {});
      assert.ok((await records(runDir)).length > 0, "the killed holder's records stay");
      // Then its directory is deleted (a test's temporary workspace, a removed checkout).
      await Deno.remove(gone, { recursive: true });

      // The next session sweeps (at its first command) and ends without a word about them.
      const r = await runCli(
        ["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"],
        { env: { PENGUIN_RUN_DIR: runDir } },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout + r.stderr, /could not remove its stand-in/);
      assert.deepEqual(await records(runDir), [], "the records of the gone directory dropped");
    } finally {
      await server.close();
      await sb.cleanup();
      await Deno.remove(gone, { recursive: true }).catch(() => {});
      await Deno.remove(runDir, { recursive: true });
    }
  },
});
