// CPU per sandbox plan: `deno run -A bench/plan_cpu.ts [plans, default 60]`.
//
// Prints the file-system calls one plan makes (Deno's lstat, stat, realPath, readDir, readFile
// and open, synchronous or not; readDir counted once per listing), then the CPU per plan.
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

/** Count the file-system calls (and how many failed) `fn` makes through Deno's API. */
async function counting(fn: () => Promise<unknown>): Promise<{ calls: number; failed: number }> {
  const names = ["lstat", "stat", "realPath", "readDir", "readTextFile", "readFile", "open"];
  const d = Deno as unknown as Record<string, (...args: unknown[]) => unknown>;
  const saved = names.flatMap((n) => [n, `${n}Sync`]).map((n) => [n, d[n]!] as const);
  const n = { calls: 0, failed: 0 };
  for (const [name, f] of saved) {
    d[name] = (...args: unknown[]) => {
      n.calls++;
      let r: unknown;
      try {
        r = f.apply(Deno, args);
      } catch (err) {
        n.failed++;
        throw err;
      }
      if (r instanceof Promise) r.catch(() => n.failed++);
      return r;
    };
  }
  try {
    await fn();
  } finally {
    for (const [name, f] of saved) d[name] = f;
  }
  return n;
}

try {
  await resolvePlan(policy, ws);
  await resolvePlan(policy, ws);
  const n = await counting(() => resolvePlan(policy, ws));
  console.log(`one plan: ${n.calls} file-system calls, ${n.failed} of them failed`);
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
