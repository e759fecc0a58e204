// The seccomp filter file the supervisor opens without a fork: private, exact, and given up
// for the rest of the process as soon as a sandbox could reach it.
import assert from "node:assert/strict";
import { dirname } from "node:path";
import { seccompFile } from "../../lib/sandbox/_seccomp_file.ts";
import { seccompProgram } from "../../lib/sandbox/seccomp.ts";
import { privateRunDir } from "../../lib/sandbox/_standin_registry.ts";
import { createPolicy, detectSandbox, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { collect, visibleTempDir } from "./_helpers.ts";
import { withTempDir } from "../support/roots.ts";
import { evalInRunDir, SECCOMP_IMPORTS } from "./_run_dir_eval.ts";

const linuxBwrap = Deno.build.os === "linux" &&
  (await detectSandbox()).kind === "bwrap";

Deno.test("the filter file holds the filter, read-only, in penguin's private run directory", async () => {
  const path = await seccompFile(["/var/tmp/somewhere"]);
  assert.ok(path !== undefined);
  assert.ok(path.startsWith(`${await privateRunDir()}/`));
  assert.deepEqual(await Deno.readFile(path), seccompProgram());
  assert.equal((await Deno.stat(path)).mode! & 0o777, 0o400);
  assert.equal((await Deno.stat(dirname(path))).mode! & 0o777, 0o700);
  assert.equal(await seccompFile(["/var/tmp/elsewhere"]), path);
});

Deno.test("a filter file removed meanwhile is written again", async () => {
  // In a run directory of its own: the shared one serves the other tests' sandboxes meanwhile.
  await withTempDir("penguin-run-", async (run) => {
    const script = `${SECCOMP_IMPORTS}
      import { dirname } from "node:path";
      const path = await seccompFile([]);
      await Deno.remove(dirname(path), { recursive: true });
      const again = await seccompFile([]);
      const same = (await Deno.readFile(again)).every((b, i) => b === seccompProgram()[i]);
      console.log(JSON.stringify({ same, samePath: again === path }));`;
    assert.deepEqual(JSON.parse(await evalInRunDir(script, `${run}/run`)), {
      same: true,
      samePath: true,
    });
  });
});

Deno.test({
  name:
    "a sandbox root containing the filter file turns it off for this process, and the filter still applies",
  ignore: !linuxBwrap,
  async fn() {
    const path = await seccompFile([]);
    assert.ok(path !== undefined);
    assert.equal(await seccompFile([dirname(await privateRunDir())]), undefined);
    // Off for this process for good; the file stays for the other processes.
    assert.equal(await seccompFile(["/var/tmp/x"]), undefined);
    assert.ok((await Deno.stat(path)).isFile);
    const ws = await visibleTempDir();
    try {
      const policy = createPolicy({ workspace: ws, home: "", hostEnv: { PATH: "/usr/bin:/bin" } });
      const r = await collect(
        await spawnSandboxed({ shell: "grep '^Seccomp:' /proc/self/status", policy }),
      );
      assert.match(r.out, /^Seccomp:\s+2$/m);
    } finally {
      await Deno.remove(ws, { recursive: true });
    }
  },
});
