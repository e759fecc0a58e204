// One memory bound for all penguin processes of the machine, and a part of it for each
// (lib/sandbox/_memory_cgroup.ts). Made under the cgroup each penguin ran in, two penguins started
// from two login scopes or CI jobs each got three quarters of the machine, and together had the
// host's processes killed (attack round 29 i04); sharing one bound with no part of their own, one
// session's full /tmp had another session's commands killed (i07). Here two penguin processes
// started in two memory cgroups (one limited to 512 MiB) share the one `penguin` cgroup at the
// hierarchy's root, each limited to half of it; the penguins of the limited one share a level
// held to three quarters of its cgroup's limit (each alone at three quarters, two of them held
// more than the job's limit: round 30 p02). Nothing is filled: the kernel's enforcement of a limit is memory_cgroup_test's.
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO } from "../support/cli.ts";
import { visibleTempDir } from "./_helpers.ts";
import { memoryCgroupsHere } from "./_cgroups.ts";
import {
  BOUND_DENOMINATOR,
  BOUND_NUMERATOR,
  OWN_DENOMINATOR,
} from "../../lib/sandbox/_memory_cgroup.ts";

const TOP = "/sys/fs/cgroup/memory";

/** This process's memory cgroup directory. */
function ownDir(): string {
  const line = Deno.readTextFileSync("/proc/self/cgroup").split("\n")
    .find((l) => l.split(":")[1] === "memory");
  const path = (line?.split(":").slice(2).join(":") ?? "/").replace(/\/$/, "");
  return TOP + path;
}

/** `ensureMemoryCgroup()` of a penguin process started in the memory cgroup `cg`. */
async function madeIn(
  cg: string,
  script: string,
): Promise<{ dir: string; bound: number; own: number; parentLimit: number }> {
  const o = await new Deno.Command("bash", {
    args: [
      "-c",
      'echo $$ > "$0/cgroup.procs" && exec "$1" run -A --config "$2" "$3"',
      cg,
      Deno.execPath(),
      join(REPO, "deno.json"),
      script,
    ],
    cwd: REPO,
  }).output();
  assert.ok(o.success, new TextDecoder().decode(o.stderr));
  return JSON.parse(new TextDecoder().decode(o.stdout).trim().split("\n").at(-1)!);
}

Deno.test({
  name: "penguin processes in two memory cgroups share one bound, each limited to a part of it",
  ignore: !memoryCgroupsHere(),
  fn: async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const a = join(ownDir(), `penguin-test-job-a-${tag}`);
    const b = join(ownDir(), `penguin-test-job-b-${tag}`);
    const dir = await visibleTempDir("penguin-memory-shared-");
    await Deno.mkdir(a);
    await Deno.mkdir(b);
    try {
      const limit = 512 * 1024 * 1024;
      await Deno.writeTextFile(join(b, "memory.limit_in_bytes"), String(limit));
      const script = join(dir, "made.ts");
      await Deno.writeTextFile(
        script,
        `import { ensureMemoryCgroup } from ${
          JSON.stringify(pathToFileURL(join(REPO, "lib/sandbox/_memory_cgroup.ts")).href)
        };\nconst m = (await ensureMemoryCgroup())!;\n` +
          `const up = m.dir.replace(/\\/[^/]+$/, "") + "/memory.limit_in_bytes";\n` +
          `console.log(JSON.stringify({ ...m, parentLimit: Number(Deno.readTextFileSync(up)) }));\n`,
      );
      const inA = await madeIn(a, script);
      const inB = await madeIn(b, script);
      const parent = (d: string) => d.replace(/\/[^/]+$/, "");
      assert.equal(parent(inA.dir), join(TOP, "penguin"));
      // In a limited cgroup: a level of that job's own, held to three quarters of its limit,
      // which every penguin started there shares (round 30 p02).
      const job = parent(inB.dir);
      assert.equal(parent(job), join(TOP, "penguin"));
      assert.match(job, /\/job-[A-Za-z0-9_]+$/);
      const jobLimit = Math.floor(limit / BOUND_DENOMINATOR) * BOUND_NUMERATOR;
      assert.equal(inB.parentLimit, jobLimit);
      assert.equal(inA.bound, inB.bound);
      const shared = Number(
        (await Deno.readTextFile(join(TOP, "penguin", "memory.limit_in_bytes"))).trim(),
      );
      assert.equal(inA.bound, shared);
      const total = Number(/MemTotal:\s+(\d+)/.exec(await Deno.readTextFile("/proc/meminfo"))![1]) *
        1024;
      assert.ok(shared <= Math.floor(total / BOUND_DENOMINATOR) * BOUND_NUMERATOR, String(shared));
      const half = Math.floor(shared / OWN_DENOMINATOR);
      assert.ok(inA.own <= half, `${inA.own} > ${half}`);
      assert.equal(inB.own, Math.min(half, jobLimit));
    } finally {
      for (const cg of [a, b]) {
        // The penguin processes are gone: their cgroups are empty (removed at their exit).
        await Deno.remove(cg).catch(() => {});
      }
      await Deno.remove(dir, { recursive: true });
    }
  },
});
