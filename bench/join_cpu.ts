// CPU and wall time of a session's first plan, which joins the workspace root's nested-repository
// record (`_repo_trust.ts`): `deno run -A bench/join_cpu.ts`. Run it against two checkouts with the
// machine's shared run directory (its leftover records are what the join used to read whole).
import { join } from "node:path";
import { cpuUsage } from "node:process";
import { createPolicy, resolvePlan } from "../lib/sandbox/mod.ts";
import { keepStandIns } from "../lib/sandbox/_placeholders.ts";

const ws = await Deno.realPath(
  await Deno.makeTempDir({ dir: "/var/tmp", prefix: "penguin-join-bench-" }),
);
await Deno.mkdir(join(ws, ".git"));
const home = Deno.env.get("HOME") ?? "/root";
const policy = createPolicy({
  workspace: ws,
  home,
  hostEnv: { PATH: "/usr/bin:/bin", HOME: home },
});
const keeping = keepStandIns();
try {
  const before = cpuUsage();
  const t = performance.now();
  await resolvePlan(policy, ws);
  const used = cpuUsage(before);
  console.log(
    `first plan: CPU ${((used.user + used.system) / 1000).toFixed(1)} ms, wall ${
      (performance.now() - t).toFixed(1)
    } ms`,
  );
} finally {
  await keeping.end();
  await Deno.remove(ws, { recursive: true });
}
