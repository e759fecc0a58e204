// A writable `.git` is pinned (bound onto itself) so `mv .git` cannot swap in
// a repo with writable hooks; found by the red-team suite.
import assert from "node:assert/strict";
import { join } from "node:path";
import { bwrapArgv, createPolicy, resolvePlan, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { collect, exists } from "./_helpers.ts";
import { withWorkspace } from "../support/roots.ts";

Deno.test("resolvePlan pins a writable workspace .git and bwrapArgv binds it between the workspace and its hooks", async () => {
  await withWorkspace(async (ws) => {
    await Deno.mkdir(join(ws, ".git", "hooks"), { recursive: true });
    const policy = createPolicy({ workspace: ws, home: "", hostEnv: {}, git: "writable" });
    const plan = await resolvePlan(policy, ws);
    assert.deepEqual(plan.pinned, [join(ws, ".git")]);
    const argv = bwrapArgv(plan, ["true"]);
    const bind = (p: string) => argv.findIndex((a, i) => a === p && argv[i - 1] === p);
    const ws_ = argv.findIndex((a, i) => a === "--bind" && argv[i + 1] === ws);
    const git = argv.findIndex((a, i) => a === "--bind" && argv[i + 1] === join(ws, ".git"));
    const hooks = argv.findIndex((a, i) =>
      a === "--ro-bind" && argv[i + 1] === join(ws, ".git", "hooks")
    );
    assert.ok(ws_ >= 0 && git > ws_ && hooks > git, argv.join(" "));
    assert.ok(bind(join(ws, ".git")) > 0);
    // Read-only mode binds nothing writable, so nothing is pinned; a read-only
    // .git is bound read-only as a whole, which pins it too.
    const ro = await resolvePlan({ ...policy, mode: "read-only" }, ws);
    assert.equal(ro.pinned, undefined);
    const roGit = await resolvePlan({ ...policy, git: "read-only" }, ws);
    assert.equal(roGit.pinned, undefined);
    assert.ok(roGit.protect.includes(join(ws, ".git")));
  });
});

Deno.test("a sandboxed command cannot rename .git to plant a fresh hooks directory", async () => {
  await withWorkspace(async (ws) => {
    await Deno.mkdir(join(ws, ".git", "hooks"), { recursive: true });
    await Deno.writeTextFile(join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
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
        "mv .git .git_old; rm -rf .git; mkdir -p .git/hooks; echo x > .git/hooks/pre-commit; echo ok > .git/HEAD",
      ],
      policy,
      stdin: "null",
    });
    await collect(child);
    assert.equal(await exists(join(ws, ".git_old")), false);
    assert.equal(await exists(join(ws, ".git", "hooks", "pre-commit")), false);
    // The rest of .git stays writable for git itself.
    assert.equal(await Deno.readTextFile(join(ws, ".git", "HEAD")), "ok\n");
  });
});

Deno.test("a sandboxed command cannot rename .git/objects to plant objects/info/alternates", async () => {
  // Attack round 18 concgit B3: `objects/info` is read-only (a stand-in when missing), but its
  // parent was not pinned: renamed aside, a new `objects/info/alternates` pointed the user's
  // repository at objects of the model's choice.
  await withWorkspace(async (ws) => {
    await Deno.mkdir(join(ws, ".git", "objects", "pack"), { recursive: true });
    await Deno.writeTextFile(join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
    const policy = createPolicy({
      workspace: ws,
      home: "",
      hostEnv: { PATH: "/usr/bin:/bin" },
      git: "writable",
    });
    assert.ok((await resolvePlan(policy, ws)).pinned?.includes(join(ws, ".git", "objects")));
    const child = await spawnSandboxed({
      argv: [
        "bash",
        "-c",
        "mv .git/objects .git/o; mkdir -p .git/objects/info; " +
        "echo /elsewhere/objects > .git/objects/info/alternates; echo packed > .git/objects/pack/x",
      ],
      policy,
      stdin: "null",
    });
    await collect(child);
    assert.equal(await exists(join(ws, ".git", "o")), false, "objects was renamed");
    assert.equal(await exists(join(ws, ".git", "objects", "info", "alternates")), false);
    // The object store stays writable for git itself.
    assert.equal(await Deno.readTextFile(join(ws, ".git", "objects", "pack", "x")), "packed\n");
  });
});
