// A plan looks at the file system with synchronous calls (lib/sandbox/_look.ts): each
// asynchronous one is a round trip through Deno's thread pool, and a plan makes hundreds, which
// on a loaded machine made it take about 100 ms per command (issue 32).
import assert from "node:assert/strict";
import { join } from "node:path";
import { visibleTempDir } from "../support/roots.ts";
import { evalInRunDir } from "./_run_dir_eval.ts";

const MOD = new URL("../../lib/sandbox/mod.ts", import.meta.url).href;

Deno.test("a session's plan makes (almost) no asynchronous file system calls", async () => {
  const base = await visibleTempDir("penguin-plan-sync-");
  try {
    const ws = join(base, "ws");
    const home = join(base, "home");
    const data = join(base, "data");
    for (const d of [join(ws, ".git", "hooks"), join(home, ".ssh"), join(data, "p", "agents")]) {
      await Deno.mkdir(d, { recursive: true });
    }
    await Deno.writeTextFile(join(ws, ".git", "config"), "[core]\n\tbare = false\n");
    await Deno.writeTextFile(join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
    await Deno.writeTextFile(join(home, ".bashrc"), ". ~/.extra\n");
    const out = await evalInRunDir(
      `import { createPolicy, resolvePlan } from ${JSON.stringify(MOD)};
      const policy = createPolicy({ workspace: ${JSON.stringify(ws)}, home: ${
        JSON.stringify(home)
      }, dataRoot: ${JSON.stringify(data)}, hostEnv: { PATH: "/usr/bin:/bin" } });
      await resolvePlan(policy, policy.workspace); // the first one sweeps and notes
      const calls = {};
      for (const name of ["lstat", "stat", "realPath", "readDir", "readTextFile", "readFile"]) {
        const orig = Deno[name];
        Deno[name] = (...a) => { calls[name] = (calls[name] ?? 0) + 1; return orig(...a); };
      }
      const plan = await resolvePlan(policy, policy.workspace);
      console.log(JSON.stringify({ calls, hidden: plan.hideDirs.length }));`,
      join(base, "run"),
    );
    const got = JSON.parse(out) as {
      calls: Record<string, number>;
      hidden: number;
    };
    assert.ok(got.hidden > 0, "the plan hides something");
    const total = Object.values(got.calls).reduce((a, b) => a + b, 0);
    assert.ok(total <= 4, `asynchronous calls: ${JSON.stringify(got.calls)}`);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
