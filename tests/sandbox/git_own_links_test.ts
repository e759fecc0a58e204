// Issue 26 (attack round 19 concgit R4, #43–#44): with --git-writable a command made
// `.git/COMMIT_EDITMSG` and `.git/logs/refs/stash` links to files outside the workspace, which the
// user's `git commit` / `git stash` then wrote through. A link a command makes in the workspace's
// own git directory is renamed aside once it has ended; the user's own links stay.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { takeSessionEndReport } from "../../lib/sandbox/session_end_report.ts";
import { collect, exists } from "./_helpers.ts";
import { visibleTempDir } from "../support/roots.ts";
import { hostGit } from "../support/host_git.ts";

Deno.test("--git-writable: a link a command makes in .git is renamed aside", async () => {
  const base = await visibleTempDir("penguin-own-links-");
  try {
    const ws = join(base, "ws");
    const home = join(base, "home");
    await Deno.mkdir(ws);
    await Deno.mkdir(home);
    await hostGit(home, ws, ["init", "-q"]);
    await hostGit(home, ws, ["commit", "--allow-empty", "-qm", "one"]);
    const victim = join(base, "authorized_keys");
    await Deno.writeTextFile(victim, "the user's key\n");
    const policy = createPolicy({
      workspace: ws,
      home: "",
      hostEnv: { PATH: "/usr/bin:/bin" },
      git: "writable",
    });
    const child = await spawnSandboxed({
      argv: [
        "bash",
        "-c",
        `ln -sf ${victim} .git/COMMIT_EDITMSG && mkdir -p .git/logs/refs && ` +
        `ln -sf ${victim} .git/logs/refs/stash && echo planted`,
      ],
      policy,
      stdin: "null",
    });
    const r = await collect(child);
    assert.match(r.out, /planted/);
    await hostGit(home, ws, ["commit", "--allow-empty", "-qm", "wip"]);
    assert.equal(await Deno.readTextFile(victim), "the user's key\n", "git wrote through the link");
    for (const name of ["COMMIT_EDITMSG", join("logs", "refs", "stash")]) {
      assert.equal(
        (await Deno.lstat(join(ws, ".git", `${name}-disarmed-by-penguin`))).isSymlink,
        true,
        `${name} renamed aside`,
      );
    }
    const report = takeSessionEndReport().lines.join("\n");
    assert.match(report, /COMMIT_EDITMSG.*it was a link in your git directory/);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("--git-writable: a link left in .git before the session (a killed penguin's) is renamed before the first command", async () => {
  // Attack round 20 concgit R6: a link a command made while penguin was SIGKILLed was taken as
  // the user's by the next session.
  const base = await visibleTempDir("penguin-own-links-left-");
  try {
    const ws = join(base, "ws");
    const home = join(base, "home");
    await Deno.mkdir(ws);
    await Deno.mkdir(home);
    await hostGit(home, ws, ["init", "-q"]);
    const victim = join(base, "bashrc");
    await Deno.writeTextFile(victim, "the user's rc\n");
    await Deno.mkdir(join(ws, ".git", "logs", "refs"), { recursive: true });
    await Deno.symlink(victim, join(ws, ".git", "logs", "refs", "stash"));
    const policy = createPolicy({
      workspace: ws,
      home: "",
      hostEnv: { PATH: "/usr/bin:/bin" },
      git: "writable",
    });
    const r = await collect(
      await spawnSandboxed({ argv: ["bash", "-c", "echo ran"], policy, stdin: "null" }),
    );
    assert.match(r.out, /ran/);
    assert.equal(
      (await Deno.lstat(join(ws, ".git", "logs", "refs", "stash-disarmed-by-penguin"))).isSymlink,
      true,
    );
    assert.equal(await exists(join(ws, ".git", "logs", "refs", "stash")), false);
    takeSessionEndReport();
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
