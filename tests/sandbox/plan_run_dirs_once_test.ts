// A plan reads the list of run directories once (`withPlanScope`): the repository trust records
// of every writable root asked for it again and again, dozens of times per command (issue 32).
import assert from "node:assert/strict";
import { join } from "node:path";
import { visibleTempDir } from "../support/roots.ts";
import { evalInRunDir } from "./_run_dir_eval.ts";

const LIB = new URL("../../lib/sandbox/", import.meta.url).href;

Deno.test("a session's plan and its after-command walk each read the run-directory lists once", async () => {
  const base = await visibleTempDir("penguin-plan-run-dirs-");
  try {
    const ws = join(base, "ws");
    const extra = [1, 2, 3].map((i) => join(base, `extra-${i}`));
    for (const d of [join(ws, ".git", "hooks"), ...extra]) await Deno.mkdir(d, { recursive: true });
    await Deno.writeTextFile(join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
    const out = await evalInRunDir(
      `import { createPolicy, resolvePlan } from "${LIB}mod.ts";
      import "${LIB}spawn.ts";
      import { keepStandIns } from "${LIB}_placeholders.ts";
      import { disarmNewRepos } from "${LIB}git_nested.ts";
      const keeping = keepStandIns();
      const policy = createPolicy({ workspace: ${JSON.stringify(ws)}, mode: "workspace-write",
        extraWritable: ${JSON.stringify(extra)}, home: "", hostEnv: { PATH: "/usr/bin:/bin" } });
      await resolvePlan(policy, policy.workspace); // the first one sweeps, joins and notes
      let reads = 0;
      const orig = Deno.readTextFileSync;
      Deno.readTextFileSync = (p) => { if (String(p).endsWith("/run-dirs")) reads++; return orig(p); };
      const plan = await resolvePlan(policy, policy.workspace);
      const inPlan = reads;
      reads = 0;
      await disarmNewRepos(policy.workspace, plan.gitRepos ?? [], plan.writableRoots ?? [policy.workspace]);
      console.log(JSON.stringify({ inPlan, inWalk: reads, repos: (plan.gitRepos ?? []).length }));
      await keeping.end();`,
      join(base, "run"),
    );
    const got = JSON.parse(out.trim().split("\n").at(-1)!) as {
      inPlan: number;
      inWalk: number;
      repos: number;
    };
    // One reading of the list in each default run directory (this process's, /tmp/penguin-<uid>,
    // ~/.penguin/run): at most three each.
    assert.ok(got.inPlan <= 3, `run-directory list read ${got.inPlan} times in one plan`);
    assert.ok(got.inWalk <= 3, `run-directory list read ${got.inWalk} times in one walk`);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a plan looks at each directory above its writable roots once", async () => {
  const base = await visibleTempDir("penguin-plan-above-");
  try {
    const ws = join(base, "ws");
    const deep = join(base, "data", "p", "agents", "a");
    const extra = ["scratch", "memory", "shared"].map((n) => join(deep, n));
    for (const d of [join(ws, ".git", "hooks"), ...extra]) await Deno.mkdir(d, { recursive: true });
    await Deno.writeTextFile(join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
    const out = await evalInRunDir(
      `import { createPolicy, resolvePlan } from "${LIB}mod.ts";
      import "${LIB}spawn.ts";
      import { keepStandIns } from "${LIB}_placeholders.ts";
      const keeping = keepStandIns();
      const policy = createPolicy({ workspace: ${JSON.stringify(ws)}, mode: "workspace-write",
        extraWritable: ${JSON.stringify(extra)}, home: "", hostEnv: { PATH: "/usr/bin:/bin" } });
      await resolvePlan(policy, policy.workspace);
      const above = ${JSON.stringify(join(deep, ".git"))};
      let gitAbove = 0, missingRecords = 0, asyncOpens = 0;
      const recordDirs = new Set();
      const open = Deno.open;
      Deno.open = (...a) => { asyncOpens++; return open(...a); };
      for (const name of ["lstatSync", "statSync"]) {
        const orig = Deno[name];
        Deno[name] = (p) => {
          const path = String(p);
          if (path === above) gitAbove++;
          try {
            return orig(p);
          } catch (err) {
            if (path.includes("/nested-repos/") && path.endsWith(".json")) {
              missingRecords++;
              recordDirs.add(path.slice(0, path.lastIndexOf("/")));
            }
            throw err;
          }
        };
      }
      await resolvePlan(policy, policy.workspace);
      console.log(JSON.stringify({ gitAbove, missingRecords, asyncOpens, dirs: recordDirs.size }));
      await keeping.end();`,
      join(base, "run"),
    );
    const got = JSON.parse(out.trim().split("\n").at(-1)!) as {
      gitAbove: number;
      missingRecords: number;
      asyncOpens: number;
      dirs: number;
    };
    // Three roots below it, each for the user's home and the account's: looked at once.
    assert.equal(got.gitAbove, 1, `"${join(deep, ".git")}" looked at ${got.gitAbove} times`);
    // Only the records of the four roots themselves, in each record directory (this process's, the
    // default ones, and those other penguins on the machine noted), are looked up one by one
    // (under their locks, as they are then); none of the directories above.
    assert.ok(
      got.missingRecords <= 4 * got.dirs,
      `${got.missingRecords} failed look-ups of trust records`,
    );
    // The trust records' locks (one per root and record directory) are opened synchronously:
    // each asynchronous open is a round trip through Deno's thread pool.
    assert.ok(got.asyncOpens <= 4, `${got.asyncOpens} asynchronous opens in one plan`);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
