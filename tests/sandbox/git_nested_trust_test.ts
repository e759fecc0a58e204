// The second attack pass on the nested-repository walk (round 13c, H1, H3, R4, L1/E1): a repo
// hidden inside a `.git` while a walk runs and put back, the user's clone parked there while a
// command is planned, a session ending before its walk settled, and a path longer than the
// system's limit. Sessions run in a process of their own (_trust_session.ts) with a run
// directory of the test's, where the workspace's record of the user's repos lives.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, resolvePlan } from "../../lib/sandbox/mod.ts";
import { disarmNewRepos } from "../../lib/sandbox/git_nested.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { hostGit } from "../support/host_git.ts";
import { exists, visibleTempDir } from "./_helpers.ts";

const SCRIPT = new URL("./_trust_session.ts", import.meta.url).pathname;

/** A temp base holding `ws` and a run directory; removed after `fn` (deep chains too). */
async function withBase(fn: (ws: string, runDir: string) => Promise<void>): Promise<void> {
  const base = await visibleTempDir("penguin-trust-");
  try {
    const ws = join(base, "ws");
    await Deno.mkdir(ws);
    await fn(ws, join(base, "run"));
  } finally {
    // rm walks by descriptor: it removes a chain deeper than PATH_MAX, which Deno.remove cannot.
    await new Deno.Command("rm", { args: ["-rf", "--", base] }).output();
  }
}

/** Run `scenario` of _trust_session.ts on `ws` in a process with `runDir`; what it saw. */
async function session(
  scenario: string,
  ws: string,
  runDir: string,
): Promise<Record<string, unknown> & { report: { lines: string[]; failed: boolean } }> {
  const res = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", SCRIPT, scenario, ws],
    env: { PENGUIN_RUN_DIR: runDir },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(res.stderr);
  assert.equal(res.code, 0, stderr);
  return JSON.parse(new TextDecoder().decode(res.stdout).trim());
}

Deno.test("a repo parked in a .git over one end walk and put back is disarmed by the next", async () => {
  await withBase(async (ws, runDir) => {
    const seen = await session("hide", ws, runDir);
    // B's plan saw it, but as a repo a command made, not the user's: not trusted for that.
    assert.ok(await exists(join(ws, "zzz/R/.git-disarmed-by-penguin")), JSON.stringify(seen));
    assert.equal(await exists(join(ws, "zzz/R/.git")), false);
  });
});

Deno.test("the user's clone a command armed while it was out of the walk's sight is disarmed", async () => {
  await withBase(async (ws, runDir) => {
    await Deno.mkdir(join(ws, "vendor/lib"), { recursive: true });
    await hostGit(ws, join(ws, "vendor/lib"), ["init", "-q"]);
    const seen = await session("userhide", ws, runDir);
    assert.match(String(seen.start), /vendor\/lib\/\.git/);
    // W's plan did not guard it (it was parked); the walks after it no longer trust it.
    assert.ok(await exists(join(ws, "vendor/lib/.git-disarmed-by-penguin")), JSON.stringify(seen));
    assert.equal(await exists(join(ws, "vendor/lib/.git")), false);
  });
});

Deno.test("the session's last walk disarms a repo its unsettled end walk missed", async () => {
  await withBase(async (ws, runDir) => {
    const seen = await session("settled-end", ws, runDir);
    assert.deepEqual(seen.end, []);
    const r = (await exists(join(ws, "zzz"))) ? join(ws, "zzz/R") : join(ws, "aaa/R");
    assert.ok(await exists(join(r, ".git-disarmed-by-penguin")), JSON.stringify(seen));
    assert.equal(await exists(join(r, ".git")), false);
    assert.equal(seen.report.failed, false);
    assert.match(seen.report.lines.join("\n"), /renamed ".*\/R\/\.git" to/);
    // Clean: no record is left for the next penguin.
    const records = [];
    for await (const e of Deno.readDir(join(runDir, "nested-repos"))) {
      if (e.name.endsWith(".json")) records.push(e.name);
    }
    assert.deepEqual(records, []);
  });
});

Deno.test("a session ending unsettled says so, and the next penguin disarms before it runs", async () => {
  await withBase(async (ws, runDir) => {
    const seen = await session("unsettled-end", ws, runDir);
    assert.equal(seen.report.failed, true);
    assert.match(seen.report.lines.join("\n"), /kept changing during penguin's last walk/);
    assert.match(seen.report.lines.join("\n"), /Do not run git below it/);
    const r = (await exists(join(ws, "zzz"))) ? join(ws, "zzz/R") : join(ws, "aaa/R");
    assert.ok(await exists(join(r, ".git")));
    // The next process on the workspace inherits the record: R is not the user's.
    const next = await session("plan", ws, runDir);
    assert.doesNotMatch(String(next.plan), /refused/);
    assert.ok(await exists(join(r, ".git-disarmed-by-penguin")), JSON.stringify(next));
    assert.equal(await exists(join(r, ".git")), false);
  });
});

Deno.test("the user's own armed repo stays as it is through the session's last walk", async () => {
  await withBase(async (ws, runDir) => {
    await Deno.mkdir(join(ws, "mine"));
    await hostGit(ws, join(ws, "mine"), ["init", "-q"]);
    await Deno.writeTextFile(join(ws, "mine/.git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n");
    const seen = await session("plan", ws, runDir);
    assert.match(String(seen.plan), /mine\/\.git/);
    assert.deepEqual(seen.report, { lines: [], failed: false });
    assert.ok(await exists(join(ws, "mine/.git/hooks/pre-commit")));
  });
});

/** Make a chain of 25 directories with 200-byte names at `ws` (relative `cd`s, as a command can). */
async function deepChain(ws: string): Promise<void> {
  const name = "d".repeat(200);
  const res = await new Deno.Command("bash", {
    args: ["-c", `for i in $(seq 25); do mkdir ${name} && cd ${name} || exit 1; done`],
    cwd: ws,
  }).output();
  assert.equal(res.code, 0);
}

Deno.test("a path longer than the system's limit is refused for that, not taken for a race", async () => {
  await withBase(async (ws) => {
    await deepChain(ws);
    const policy = createPolicy({ workspace: ws, home: "", hostEnv: {} });
    await assert.rejects(resolvePlan(policy, ws), (err: unknown) => {
      assert.ok(err instanceof PenguinError);
      assert.match(err.message, /longer than the system's limit \(4096 bytes\)/);
      assert.match(err.message, new RegExp(`"${ws}/d{50}`));
      assert.match(err.message, /Move or rename it/);
      assert.doesNotMatch(err.message, /kept changing/);
      return true;
    });
  });
});

Deno.test("an end walk past a path too long for the system still disarms what it can see", async () => {
  await withBase(async (ws) => {
    await Deno.mkdir(join(ws, "R"));
    await hostGit(ws, join(ws, "R"), ["init", "-q"]);
    await hostGit(ws, join(ws, "R"), ["config", "core.fsmonitor", "touch /tmp/penguin-trust-x"]);
    await deepChain(ws);
    await disarmNewRepos(ws, [], [ws]);
    assert.ok(await exists(join(ws, "R/.git-disarmed-by-penguin")));
    assert.equal(await exists(join(ws, "R/.git")), false);
  });
});
