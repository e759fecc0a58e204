// Spawn overhead of the sandbox: `deno run -A bench/sandbox_spawn.ts [runs, default 60]`.
//
// Times `echo hi` run to completion (output drained, status known) through
// `spawnSandboxed` (supervisor, seccomp filter, env on a pipe, namespace
// teardown) against a bare `bwrap … bash -c 'echo hi'` with the same mount
// and namespace flags started straight from Deno. Runs alternate between the
// two; prints median and p90 in milliseconds. Linux with bubblewrap only.
import {
  bwrapArgv,
  createPolicy,
  detectSandbox,
  resolvePlan,
  spawnSandboxed,
} from "../lib/sandbox/mod.ts";

const runs = Number(Deno.args[0] ?? 60);
const report = await detectSandbox();
if (report.kind !== "bwrap" || !report.bwrap || !report.bash) {
  console.error(`no working bubblewrap here: ${report.failure ?? report.kind}`);
  Deno.exit(1);
}
const ws = await Deno.realPath(
  await Deno.makeTempDir({ dir: "/var/tmp", prefix: "penguin-bench-" }),
);
await Deno.mkdir(`${ws}/.git`);
const policy = createPolicy({ workspace: ws, hostEnv: { PATH: "/usr/bin:/bin" } });

async function viaPenguin(): Promise<number> {
  const t = performance.now();
  const child = await spawnSandboxed({ argv: ["echo", "hi"], policy, stdin: "null" });
  let out = "";
  for await (const chunk of child.output) out += chunk;
  await child.status;
  if (out !== "hi\n") throw new Error(`unexpected output ${JSON.stringify(out)}`);
  return performance.now() - t;
}

async function bare(): Promise<number> {
  const t = performance.now();
  const plan = await resolvePlan(policy, ws);
  const argv = bwrapArgv(plan, [report.bash!, "-c", "echo hi"], {
    disableUserns: report.disableUserns,
  });
  const o = await new Deno.Command(report.bwrap!, { args: argv, stdin: "null" }).output();
  if (new TextDecoder().decode(o.stdout) !== "hi\n") throw new Error("bare bwrap failed");
  return performance.now() - t;
}

function stats(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return `median ${at(0.5).toFixed(1)} ms, p90 ${at(0.9).toFixed(1)} ms`;
}

try {
  await viaPenguin(); // warm the probe cache and the page cache
  await bare();
  const a: number[] = [], b: number[] = [];
  for (let i = 0; i < runs; i++) {
    a.push(await viaPenguin());
    b.push(await bare());
  }
  console.log(`spawnSandboxed  (${runs} runs): ${stats(a)}`);
  console.log(`bare bwrap      (${runs} runs): ${stats(b)}`);
} finally {
  await Deno.remove(ws, { recursive: true });
}
