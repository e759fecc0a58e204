// The filter file is one per filter content, shared by every penguin process, and checked before
// each use. (Separate from seccomp_file_test.ts, whose last test turns the file off for its process.)
import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../support/roots.ts";
import { evalInRunDir, SECCOMP_IMPORTS } from "./_run_dir_eval.ts";
import { OTHER_FILTER_AGE_MS } from "../../lib/sandbox/_seccomp_file.ts";

Deno.test("every penguin process shares one filter file; other filters' directories go when a day old", async () => {
  // In a run directory of its own: in the shared one, other tests' penguins remove stray
  // filter directories too, and could remove this test's before it is written.
  await withTempDir("penguin-run-", async (run) => {
    const runDir = join(run, "run");
    const script = `${SECCOMP_IMPORTS} console.log(await seccompFile([]));`;
    const inProcess = async () => (await evalInRunDir(script, runDir)).trim();
    const path = await inProcess();
    assert.ok(path.startsWith(runDir), path);
    // A killed process of an earlier version left its own directory behind, two days ago; a
    // penguin of another version running now has its own (made an hour ago).
    const left = await Deno.makeTempDir({ dir: runDir, prefix: "seccomp-" });
    await Deno.writeTextFile(join(left, "filter"), "old");
    const inUse = await Deno.makeTempDir({ dir: runDir, prefix: "seccomp-" });
    await Deno.writeTextFile(join(inUse, "filter"), "other");
    const ago = (ms: number) => new Date(Date.now() - ms);
    await Deno.utime(left, ago(2 * OTHER_FILTER_AGE_MS), ago(2 * OTHER_FILTER_AGE_MS));
    await Deno.utime(inUse, ago(3600_000), ago(3600_000));
    assert.equal(await inProcess(), path);
    await assert.rejects(Deno.stat(left), Deno.errors.NotFound);
    // Removed between its check and bwrap's open, it failed that penguin's command (round 29 i19).
    assert.equal(await Deno.readTextFile(join(inUse, "filter")), "other");
  });
});

Deno.test("a filter file whose content changed is made again before it is used", async () => {
  // In a run directory of its own: the shared one serves the other tests' sandboxes meanwhile.
  await withTempDir("penguin-run-", async (run) => {
    const script = `${SECCOMP_IMPORTS}
      const path = await seccompFile([]);
      await Deno.chmod(path, 0o600);
      await Deno.writeFile(path, new Uint8Array(seccompProgram().length));
      const again = await seccompFile([]);
      const same = (await Deno.readFile(again)).every((b, i) => b === seccompProgram()[i]);
      console.log(JSON.stringify({ samePath: again === path, same }));`;
    assert.deepEqual(JSON.parse(await evalInRunDir(script, join(run, "run"))), {
      samePath: true,
      same: true,
    });
  });
});
