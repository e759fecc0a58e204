// Writable roots besides the workspace (a trusted penguin.jsonc's `writable_roots`, granted with
// --grant-writable-roots) get the workspace's git guards: their own git directory read-only,
// a repository a command makes there disarmed once it ends. And a run directory moved with
// PENGUIN_RUN_DIR is hidden from every other penguin's sessions, with the data roots noted in
// it. Each case is `penguin sandbox run` as a subprocess; the user's host git decides.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { hostRun } from "../support/host_git.ts";
import { exists } from "./_helpers.ts";
import { type Repo, withRepoDirs } from "./_git_repo.ts";
import { createWorld, runSession } from "./redteam/_world.ts";

/** The user's git on the host (own HOME, no system configuration); its output. */
async function hostGit(home: string, cwd: string, args: string[]): Promise<string> {
  return (await hostRun(home, cwd, "git", args)).out;
}

const withWorld = (fn: (w: Repo) => Promise<void>) => withRepoDirs("penguin-git-roots-", fn);

/** Trust `ws/penguin.jsonc` naming `roots`, then run `cmd` with --grant-writable-roots. */
async function runGranted(ws: string, roots: string[], cmd: string, more: string[] = []) {
  await Deno.writeTextFile(join(ws, "penguin.jsonc"), JSON.stringify({ writable_roots: roots }));
  const trusted = await runCli(["trust", ws]);
  assert.equal(trusted.code, 0, trusted.stderr);
  return await runCli([
    "sandbox",
    "run",
    "--workspace",
    ws,
    "--grant-writable-roots",
    ...more,
    "--",
    "bash",
    "-c",
    cmd,
  ]);
}

Deno.test("an extra writable root that is the user's repository keeps its .git read-only", async () => {
  await withWorld(async ({ base, ws, home, marker }) => {
    const lib = join(base, "lib");
    await Deno.mkdir(lib);
    await hostGit(home, lib, ["init", "-q", "-b", "main"]);
    await Deno.writeTextFile(join(lib, "a.txt"), "a\n");
    await hostGit(home, lib, ["add", "."]);
    await hostGit(home, lib, ["commit", "-q", "-m", "init"]);
    const config = await Deno.readTextFile(join(lib, ".git", "config"));
    const r = await runGranted(
      ws,
      ["../lib"],
      `echo b > ${lib}/b.txt; ` +
        `printf '[core]\\n\\tfsmonitor = "touch ${marker}; false"\\n' >> ${lib}/.git/config ` +
        `&& echo CFG-OK; mkdir -p ${lib}/.git/hooks; ` +
        `printf '#!/bin/sh\\ntouch ${marker}\\n' > ${lib}/.git/hooks/pre-commit && echo HOOK-OK; ` +
        `chmod +x ${lib}/.git/hooks/pre-commit; true`,
    );
    assert.equal(r.code, 0, r.stderr);
    // The root itself is writable; its git directory is not.
    assert.equal(await Deno.readTextFile(join(lib, "b.txt")), "b\n");
    assert.doesNotMatch(r.stdout, /CFG-OK|HOOK-OK/);
    assert.equal(await Deno.readTextFile(join(lib, ".git", "config")), config);
    assert.equal(await exists(join(lib, ".git", "hooks", "pre-commit")), false);
    await hostGit(home, lib, ["status"]);
    await hostGit(home, lib, ["add", "b.txt"]);
    await hostGit(home, lib, ["commit", "-q", "-m", "b"]);
    assert.equal(await exists(marker), false, "the host's git ran the command's code");
  });
});

Deno.test("a repository a command makes in an extra writable root is disarmed when it ends", async () => {
  await withWorld(async ({ base, ws, home, marker }) => {
    const shared = join(base, "shared");
    await Deno.mkdir(shared);
    const r = await runGranted(
      ws,
      ["../shared"],
      `git init -q ${shared}/tool && git -C ${shared}/tool config core.fsmonitor ` +
        `"touch ${marker}; false" && git init -q ${shared}/plain && echo MADE`,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /MADE/);
    assert.equal(await exists(join(shared, "tool", ".git")), false);
    assert.equal(await exists(join(shared, "tool", ".git-disarmed-by-penguin")), true);
    // A plain repository is left alone.
    assert.equal(await exists(join(shared, "plain", ".git", "HEAD")), true);
    await hostGit(home, join(shared, "tool"), ["status"]);
    assert.equal(await exists(marker), false, "the host's git ran the command's code");
  });
});

Deno.test("a writable root holding the workspace leaves --git-writable to the workspace's .git", async () => {
  await withWorld(async ({ base, ws, home, marker }) => {
    await hostGit(home, ws, ["init", "-q", "-b", "main"]);
    const r = await runGranted(
      ws,
      [".."],
      `cd ${ws} && echo x > x.txt && git add x.txt penguin.jsonc && ` +
        `git -c user.name=u -c user.email=u@example.com commit -q -m x && echo COMMITTED; ` +
        `git init -q ${base}/other && git -C ${base}/other config core.fsmonitor "touch ${marker}"`,
      ["--git-writable"],
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /COMMITTED/);
    assert.equal(await exists(join(base, "other", ".git-disarmed-by-penguin")), true);
    assert.equal(await exists(join(ws, ".git-disarmed-by-penguin")), false);
  });
});

Deno.test("another penguin's PENGUIN_RUN_DIR inside the workspace is hidden from its commands", async () => {
  await withWorld(async ({ base, ws }) => {
    const shared = join(base, "shared");
    const run = join(shared, ".run");
    await Deno.mkdir(shared);
    // Penguin A keeps its run state (stand-in registry, seccomp filter, data roots) in shared/.run.
    const a = await runCli(["sandbox", "run", "--workspace", ws, "--", "true"], {
      env: { PENGUIN_RUN_DIR: run },
    });
    assert.equal(a.code, 0, a.stderr);
    assert.equal(await exists(join(run, "stand-ins")), true);
    // Penguin B (the default run directory) works in shared.
    const b = await runCli([
      "sandbox",
      "run",
      "--workspace",
      shared,
      "--",
      "bash",
      "-c",
      `ls -A .run; echo forged > .run/stand-ins/forged.json; mkdir .run/x; true`,
    ]);
    assert.equal(b.code, 0, b.stderr);
    assert.equal(b.stdout, "");
    assert.equal(await exists(join(run, "stand-ins", "forged.json")), false);
    assert.equal(await exists(join(run, "x")), false);
    // A workspace inside it is refused.
    const inside = await runCli(["sandbox", "run", "--workspace", run, "--", "true"]);
    assert.equal(inside.code, 1, inside.stderr);
    assert.match(inside.stderr, /lies in penguin's private run directory/);
  });
});

Deno.test("a data root noted in another penguin's PENGUIN_RUN_DIR is hidden too", async () => {
  await withWorld(async ({ base, ws }) => {
    const data = join(base, "data-a");
    await Deno.mkdir(join(data, "proj", "agents"), { recursive: true });
    await Deno.writeTextFile(join(data, "proj", "agents", "secret.txt"), "s\n");
    // Penguin A, with a run directory of its own, notes its data root there.
    const a = await runCli(
      ["--root", data, "sandbox", "run", "--workspace", ws, "--", "true"],
      { env: { PENGUIN_RUN_DIR: join(base, "run-a") } },
    );
    assert.equal(a.code, 0, a.stderr);
    const b = await runCli([
      "sandbox",
      "run",
      "--workspace",
      base,
      "--",
      "bash",
      "-c",
      `cat ${data}/proj/agents/secret.txt; true`,
    ]);
    assert.equal(b.code, 0, b.stderr);
    assert.doesNotMatch(b.stdout, /s/);
  });
});

Deno.test("penguin run: the file tools refuse another penguin's PENGUIN_RUN_DIR in the workspace", async () => {
  const w = await createWorld();
  try {
    const run = join(w.ws, ".run-a");
    const wsA = join(w.base, "ws-a");
    await Deno.mkdir(wsA);
    const a = await runCli(["sandbox", "run", "--workspace", wsA, "--", "true"], {
      env: { PENGUIN_RUN_DIR: run },
    });
    assert.equal(a.code, 0, a.stderr);
    const o = await runSession(w, () => [[
      {
        tool: "write_file",
        args: { file_path: ".run-a/stand-ins/forged.json", content: "{}" },
        id: "forge",
      },
      { tool: "read_file", args: { file_path: ".run-a/data-roots" }, id: "peek" },
    ]]);
    assert.equal(o.code, 0, o.stderr.slice(-2000));
    assert.match(o.outputs.get("forge") ?? "", /Refusing to write/);
    assert.match(o.outputs.get("peek") ?? "", /Refusing to read/);
    assert.equal(await exists(join(run, "stand-ins", "forged.json")), false);
  } finally {
    await w.close();
  }
});
