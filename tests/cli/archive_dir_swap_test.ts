// The scratchpad's `truncated-tool-output`, where penguin's own (unconfined) process saves a
// tool's long output, cannot be swapped by the model's commands (attack round 26 A16): a command
// exchanging it with a link to a host directory in a loop while printing a long output had
// penguin create archive files, holding the model's output, in that directory (`~/.bashrc.d`:
// the user's next shell ran them). The directory is made before the first command and every
// sandbox shows it read-only.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer, turn } from "../support/model_server.ts";
import { addModelCli, runCli } from "../support/cli.ts";
import { visibleTempDir } from "../support/roots.ts";
import { prepareArchiveDir } from "../../lib/tools/archive_dir.ts";

Deno.test("run: a command can neither rename nor replace the archive directory; long output lands in it", async () => {
  const base = await visibleTempDir("penguin-archive-swap-");
  const target = join(base, "target");
  const root = join(base, "data");
  const ws = join(base, "ws");
  // The scratchpad lies in the data root (hidden but for the scratchpad itself).
  const swap = [
    `cd ${JSON.stringify(join(root, "default_project/agents/default_agent/scratchpad"))}/*/`,
    `ls -d truncated-tool-output && echo "$((40+2))-there"`,
    `mv truncated-tool-output moved && echo "$((40+2))-moved"`,
    `rmdir truncated-tool-output && echo "$((40+2))-removed"`,
    `ln -s ${JSON.stringify(target)} truncated-tool-output/x && echo "$((40+2))-linked"`,
    `touch truncated-tool-output/planted && echo "$((40+2))-planted"`,
    // Then an output past the 16,000 characters kept: penguin archives it.
    `for i in $(seq 400); do echo "line $i ${"x".repeat(60)}"; done`,
  ].join("; ");
  const server = await startModelServer({
    handler: (_rec, index) =>
      index === 0 ? turn.toolCall("exec_command", { cmd: swap }) : turn.text("done"),
  });
  try {
    await Deno.mkdir(target);
    await Deno.mkdir(ws);
    await addModelCli(root, server.baseUrl("openai-chat"));
    const r = await runCli(["--root", root, "run", "--workspace", ws, "-m", "go"]);
    assert.equal(r.code, 0, r.stderr);
    const seen = JSON.stringify(server.requests[1]!.body);
    // (The command's own text is in the history too: what it printed is told by the sums.)
    assert.match(seen, /42-there/, "made before the first command");
    for (const done of ["moved", "removed", "linked", "planted"]) {
      assert.doesNotMatch(seen, new RegExp(`42-${done}`), `the command ${done} it`);
    }
    assert.deepEqual(
      await Array.fromAsync(Deno.readDir(target)),
      [],
      "nothing in the link's target",
    );
    const scratch = join(root, "default_project/agents/default_agent/scratchpad");
    const [session] = (await Array.fromAsync(Deno.readDir(scratch))).map((e) => e.name);
    const archived = await Array.fromAsync(
      Deno.readDir(join(scratch, session!, "truncated-tool-output")),
    );
    assert.equal(archived.length, 1, "the long output was archived where it belongs");
    assert.match(archived[0]!.name, /^exec_command-[0-9a-f]+\.log$/);
  } finally {
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a link or file an earlier session's command left as the archive directory is replaced by one", async () => {
  const base = await Deno.makeTempDir({ prefix: "penguin-archive-dir-" });
  try {
    const target = join(base, "target");
    await Deno.mkdir(target);
    await Deno.writeTextFile(join(target, "keep"), "k");
    const scratch = join(base, "scratch");
    await Deno.mkdir(scratch);
    const dir = join(scratch, "truncated-tool-output");
    await Deno.symlink(target, dir);
    await prepareArchiveDir(scratch);
    let info = await Deno.lstat(dir);
    assert.ok(info.isDirectory && !info.isSymlink);
    assert.equal((info.mode ?? 0) & 0o777, 0o700);
    assert.equal(await Deno.readTextFile(join(target, "keep")), "k", "the link's target untouched");
    await Deno.remove(dir);
    await Deno.writeTextFile(dir, "a file");
    await prepareArchiveDir(scratch);
    info = await Deno.lstat(dir);
    assert.ok(info.isDirectory);
    // One already there is kept as it is.
    await Deno.writeTextFile(join(dir, "old.log"), "o");
    await prepareArchiveDir(scratch);
    assert.equal(await Deno.readTextFile(join(dir, "old.log")), "o");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
