// What penguin reads of the machine in /proc (the process budget's PID ceiling, fs.suid_dumpable
// for the non-dumpable init) it reads under its own permission set, not only under the tests' -A:
// Deno refuses every /proc read short of --allow-all, and the budget read that way was silently
// absent in the shipped program (attack pass final14-bounded F14-1).
import assert from "node:assert/strict";
import { join } from "node:path";
import { penguinArgv, REPO } from "../support/cli.ts";
import { withTempDir } from "../support/roots.ts";

const linux = Deno.build.os === "linux";

/** Run `body` (module code) as penguin runs: its permission flags, its config. */
async function underPenguinFlags(body: string): Promise<string> {
  return await withTempDir("penguin-host-facts-", async (dir) => {
    const script = join(dir, "probe.ts");
    await Deno.writeTextFile(script, body);
    // penguin's flags with this script in place of main.ts.
    const flags = penguinArgv().slice(0, -1);
    const out = await new Deno.Command(Deno.execPath(), {
      args: [...flags, script],
      cwd: REPO,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    return new TextDecoder().decode(out.stdout);
  });
}

const url = (p: string) => JSON.stringify(new URL(`../../lib/sandbox/${p}`, import.meta.url).href);

Deno.test({
  name: "under penguin's own permissions the machine's PID ceiling and suid_dumpable are read",
  ignore: !linux,
  async fn() {
    const out = await underPenguinFlags(`
      import { hostFacts } from ${url("_proc_facts.ts")};
      import { budgetFacts, takeShare } from ${url("_process_budget.ts")};
      const facts = await hostFacts();
      const share = await takeShare(2048, "a probe");
      const total = budgetFacts().total;
      share.release();
      console.log(JSON.stringify({ facts, total }));
    `);
    const { facts, total } = JSON.parse(out);
    const pidMax = Number(Deno.readTextFileSync("/proc/sys/kernel/pid_max").trim());
    const dumpable = Deno.readTextFileSync("/proc/sys/fs/suid_dumpable").trim();
    assert.equal(facts.pidMax, pidMax);
    assert.equal(facts.suidDumpable, dumpable);
    assert.ok(facts.threads > 0, JSON.stringify(facts));
    assert.equal(typeof total, "number", "a budget, not none");
    assert.ok(total > 0 && total <= pidMax / 2, String(total));
  },
});
