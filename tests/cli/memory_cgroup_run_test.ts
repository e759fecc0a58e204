// A `penguin run`'s commands run in that penguin's memory cgroup, under the `penguin` cgroup every
// penguin process of the machine shares (lib/sandbox/_memory_cgroup.ts): the bound on memory a
// command holds outside any process's share (tmpfs, System V IPC, memfd) holds for the real CLI,
// not only in-process (attack round 27: c02, c04, c05, c06, c15).
import assert from "node:assert/strict";
import { join } from "node:path";
import { addServerModel, visibleTempDir } from "../support/roots.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { penguinArgv, penguinEnv, REPO } from "../support/cli.ts";
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
    for (const f of ["up", "go"]) {
      assert.ok((await new Deno.Command("mkfifo", { args: [join(ws, f)] }).output()).success);
    }
    const marker = `memcg-${crypto.randomUUID()}`;
    let release!: () => void;
    const released = new Promise<void>((r) => release = r);
    const server = await startModelServer({
      handler: async (_rec, i) => {
        if (i === 0) {
          return turn.of(item.toolCall("exec_command", {
            cmd: `echo up > up; cat go > /dev/null # ${marker}`,
            yield_time_ms: 1000,
          }, { id: "c1" }));
        }
        await released;
        return turn.text("done");
      },
      maxRequests: 10,
    });
    try {
      await addServerModel(join(base, "data"), server);
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          ...penguinArgv(),
          "--root",
          join(base, "data"),
          "run",
          "--workspace",
          ws,
          "-m",
          "go",
        ],
        cwd: REPO,
        env: penguinEnv(),
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      assert.equal(await Deno.readTextFile(join(ws, "up")), "up\n");
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
      await Deno.writeTextFile(join(ws, "go"), "go\n");
      release();
      const out = await child.output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    } finally {
      release();
      await server.close();
      await Deno.remove(base, { recursive: true });
    }
  },
});
