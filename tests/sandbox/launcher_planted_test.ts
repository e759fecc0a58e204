// A run directory made before penguin first used it (a hostile model whose workspace will hold a
// later penguin's PENGUIN_RUN_DIR can make it) must not give that penguin a launcher: a program
// planted as `launcher-<bash id>/bash`, padded to bash's size with mode 0111, ran as the init of
// every sandbox and handed the commands' environment to the model (attack round 25 concgit c21).
// Here the planted program is `true`: under it no command runs.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer, turn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";
import { runCli } from "../support/cli.ts";

/** A copy of `true` (an ELF runs with bytes past its end), zero-padded to `size` bytes. */
async function planted(size: number): Promise<Uint8Array> {
  const real = await Deno.readFile(
    await Deno.stat("/usr/bin/true").then(() => "/usr/bin/true", () => "/bin/true"),
  );
  const bytes = new Uint8Array(size);
  bytes.set(real.subarray(0, Math.min(real.length, size)));
  return bytes;
}

Deno.test("a launcher planted in a run directory before penguin used it never runs", async () => {
  const server = await startModelServer({
    turns: [turn.toolCall("exec_command", { cmd: "echo ran-$((20 + 22))" }), turn.text("done")],
  });
  const sb = await makeRoot(server, { visible: true });
  try {
    const run = join(sb.base, "run");
    await Deno.mkdir(run, { mode: 0o700 });
    const plantedDirs: string[] = [];
    for (const bash of ["/usr/bin/bash", "/bin/bash"]) {
      const src = await Deno.stat(bash).catch(() => undefined);
      if (!src?.isFile) continue;
      const id = [src.dev, src.ino, src.size, src.mtime?.getTime() ?? 0].join("-");
      const dir = join(run, `launcher-${id}`);
      await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
      await Deno.writeFile(join(dir, "bash"), await planted(src.size), { mode: 0o700 });
      await Deno.chmod(join(dir, "bash"), 0o111);
      plantedDirs.push(dir);
    }
    assert.ok(plantedDirs.length > 0, "no bash to plant beside");
    const r = await runCli(
      ["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"],
      { env: { PENGUIN_RUN_DIR: run } },
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const sent = JSON.stringify(server.requests.at(-1)?.body ?? "");
    // The planted program (true) as the sandbox's init would have run no command.
    assert.match(sent, /ran-42/, "the command ran under penguin's own launcher");
    for (const dir of plantedDirs) {
      await assert.rejects(Deno.stat(dir), Deno.errors.NotFound, `${dir} left in place`);
    }
  } finally {
    await server.close();
    await sb.cleanup();
  }
});
