// CPU per sandbox plan: `deno run -A bench/plan_cpu.ts [plans, default 60]`.
//
// Resolves the plan of a `workspace-write` session (the user's real home, a
// workspace with a `.git` and a `penguin.jsonc` in /var/tmp, stand-ins kept as
// in a session) `plans` times after two warm-up plans, and prints the process
// CPU time (user + system) per plan. Run it alternately against two checkouts
// for a paired figure: the machine's load moves wall-clock times, not this.
import { join } from "node:path";
import { cpuUsage } from "node:process";
import { createPolicy, resolvePlan } from "../lib/sandbox/mod.ts";
import { keepStandIns } from "../lib/sandbox/_placeholders.ts";

const plans = Number(Deno.args[0] ?? 60);
const ws = await Deno.realPath(
  await Deno.makeTempDir({ dir: "/var/tmp", prefix: "penguin-plan-bench-" }),
);
await Deno.mkdir(join(ws, ".git"));
await Deno.writeTextFile(join(ws, "penguin.jsonc"), "{}\n");
const home = Deno.env.get("HOME") ?? "/root";
const policy = createPolicy({
  workspace: ws,
  home,
  hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home },
});
const keeping = keepStandIns();
try {
  await resolvePlan(policy, ws);
  await resolvePlan(policy, ws);
  const before = cpuUsage();
  const t = performance.now();
  for (let i = 0; i < plans; i++) await resolvePlan(policy, ws);
  const used = cpuUsage(before);
  const wall = performance.now() - t;
  const cpu = (used.user + used.system) / 1000 / plans;
  console.log(
    `${plans} plans: CPU ${cpu.toFixed(2)} ms/plan, wall ${(wall / plans).toFixed(2)} ms/plan`,
  );
} finally {
  await keeping.end();
  await Deno.remove(ws, { recursive: true });
}
