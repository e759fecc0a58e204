// Bounded memory where penguin reads what the model or an archive supplies,
// measured on real processes: the sandboxed tool host of a `penguin run`
// whose model edits a 12 GiB sparse file, and `penguin skills install` /
// `penguin agent import` given a gzip bomb (each peak ≤ 300 MB).
import assert from "node:assert/strict";
import { join } from "node:path";
import { detectSandbox } from "../../lib/sandbox/detect.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { makeRoot } from "../support/roots.ts";
import { toolOutputsById } from "../agent/_subagent_support.ts";
import { descendantsWithArg, peakRss } from "../support/peak_memory.ts";

const MB = 1000 * 1000;
/** The most a process reading hostile input may hold at its peak. */
const PEAK_LIMIT = 300 * MB;

const SANDBOX = Deno.build.os === "linux" && (await detectSandbox()).kind === "bwrap";

Deno.test({
  name:
    "edit_file and read_file on a 12 GiB sparse file: refused or read in part, tool host peak ≤ 300 MB",
  ignore: !SANDBOX,
  async fn() {
    const peaks: number[][] = [];
    const seen = { root: "" };
    const measure = () => {
      const hosts = descendantsWithArg("__tool-host", seen.root);
      peaks.push(hosts.map((pid) => peakRss(pid) ?? 0));
    };
    const server = await startModelServer({
      handler: (_req, index) => {
        if (index === 0) {
          return turn.of(item.toolCall("edit_file", {
            file_path: "big.txt",
            old_string: "a",
            new_string: "b",
          }, { id: "c_edit" }));
        }
        measure();
        if (index === 1) {
          return turn.of(item.toolCall("read_file", { file_path: "big.txt" }, { id: "c_read" }));
        }
        return turn.text("done");
      },
    });
    const sb = await makeRoot(server, { visible: true });
    seen.root = sb.root;
    try {
      const big = join(sb.workspace, "big.txt");
      {
        using f = await Deno.open(big, { write: true, create: true });
        await f.truncate(12 * 1024 ** 3);
      }
      const r = await runCli([
        "--root",
        sb.root,
        "run",
        "--workspace",
        sb.workspace,
        "-m",
        "Edit big.txt.",
      ]);
      assert.equal(r.code, 0, r.stderr);
      const outputs = toolOutputsById(server.requests);
      assert.match(
        outputs.get("c_edit")!,
        /^Cannot edit "big\.txt": it is 12 GiB; edit_file reads files up to 16 MiB\./,
      );
      assert.match(outputs.get("c_read")!, /binary file/);
      assert.equal(peaks.length, 2);
      for (const seenPeaks of peaks) {
        assert.equal(seenPeaks.length, 1, "one tool host of this run was alive");
        assert.ok(
          seenPeaks[0]! > 0 && seenPeaks[0]! <= PEAK_LIMIT,
          `tool host peak ${seenPeaks[0]! / MB} MB`,
        );
      }
      assert.equal((await Deno.stat(big)).size, 12 * 1024 ** 3);
    } finally {
      await server.close();
      await sb.cleanup();
    }
  },
});
