// Attack round 19 imports B3: `trace export -o report.md`, run in a workspace where the model had
// made `report.md` a link to `~/.ssh/authorized_keys` (or `out` a link to the home directory),
// replaced that file. `-o` refuses a path through a link below the current directory.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { sid, traceBuilder, withTempDir } from "../inspect/_support.ts";

Deno.test("trace export -o refuses a path through a link in the current directory", async () => {
  await withTempDir(async (dir) => {
    const id = sid("0f1e2d3c");
    const trace = join(dir, `${id}_001.jsonl`);
    await Deno.writeTextFile(trace, traceBuilder(id).meta().user("hi").jsonl());
    const ws = join(dir, "ws");
    const home = join(dir, "home");
    await Deno.mkdir(ws);
    await Deno.mkdir(home);
    const keys = join(home, "authorized_keys");
    await Deno.writeTextFile(keys, "the user's key\n");
    await Deno.symlink(keys, join(ws, "report.md"));
    await Deno.symlink(home, join(ws, "out"));
    for (const out of ["report.md", join("out", "authorized_keys"), join(ws, "report.md")]) {
      const r = await runCli(["trace", "export", trace, "--format", "md", "-o", out], { cwd: ws });
      assert.equal(r.code, 2, `${out}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /is a symbolic link, and penguin does not write through a link/);
      assert.equal(await Deno.readTextFile(keys), "the user's key\n", `${out} wrote through`);
    }
    // A plain path there is written.
    const ok = await runCli(["trace", "export", trace, "--format", "md", "-o", "plain.md"], {
      cwd: ws,
    });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(await Deno.readTextFile(join(ws, "plain.md")), /hi/);
  });
});
