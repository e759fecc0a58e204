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
