// A `penguin run`'s commands run in that penguin's memory cgroup, under the `penguin` cgroup every
// penguin process of the machine shares (lib/sandbox/_memory_cgroup.ts): the bound on memory a
// command holds outside any process's share (tmpfs, System V IPC, memfd) holds for the real CLI,
// not only in-process (attack round 27: c02, c04, c05, c06, c15).
import assert from "node:assert/strict";
import { join } from "node:path";
import { visibleTempDir } from "../support/roots.ts";
import { heldRun } from "../support/run_session.ts";
import { BWRAP_USABLE as bwrap } from "../sandbox/_bwrap.ts";
import { memoryCgroupsHere } from "../sandbox/_cgroups.ts";

/** The processes whose command line contains `marker`. */
function pidsMentioning(marker: string): number[] {
  const pids: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      if (Deno.readTextFileSync(join("/proc", e.name, "cmdline")).includes(marker)) {
        pids.push(Number(e.name));
      }
    } catch {
      // Gone while we looked.
    }
  }
  return pids;
}

Deno.test({
  name: "a penguin run's command is in that penguin's memory cgroup under the shared bound",
  ignore: !bwrap || !memoryCgroupsHere(),
  fn: async () => {
    const base = await visibleTempDir("penguin-memcg-run-");
    const ws = join(base, "ws");
    await Deno.mkdir(ws);
    const marker = `memcg-${crypto.randomUUID()}`;
    const held = await heldRun(join(base, "data"), ws, marker);
    try {
      const child = held.child;
      const pids = pidsMentioning(marker).filter((p) => p !== Deno.pid);
      assert.ok(pids.length > 0, "the command runs");
      for (const pid of pids) {
        const line = (await Deno.readTextFile(`/proc/${pid}/cgroup`)).split("\n")
          .find((l) => l.split(":")[1] === "memory");
        assert.match(line ?? "", new RegExp(`/penguin/penguin-${child.pid}-\\d+$`));
        const dir = join("/sys/fs/cgroup/memory", line!.split(":")[2] ?? "", "..");
        const bound = Number((await Deno.readTextFile(join(dir, "memory.limit_in_bytes"))).trim());
        const total = Number(
          /MemTotal:\s+(\d+)/.exec(await Deno.readTextFile("/proc/meminfo"))![1],
        ) * 1024;
        assert.ok(bound < total, `the shared bound ${bound} is below the machine's ${total}`);
      }
      const out = await held.end();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    } finally {
      await held.close();
      await Deno.remove(base, { recursive: true });
    }
  },
});
