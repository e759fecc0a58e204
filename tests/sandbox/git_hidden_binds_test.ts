// Issue 26 (review2 findings 1 and 4): what the git guard binds (a hook's words, a nested
// repository's `core.hooksPath`) never shows a hidden path again. Real sandboxed commands read
// the hidden files; the plan's last check refuses any bind left inside a hidden directory.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, resolvePlan, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { hiddenBindProblem, isHidden } from "../../lib/sandbox/_hidden_binds.ts";
import { collect, visibleTempDir } from "./_helpers.ts";

async function withBase(fn: (base: string) => Promise<void>): Promise<void> {
  const base = await visibleTempDir("penguin-hidden-binds-");
  try {
    await fn(base);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
}

async function put(path: string, text: string, mode?: number): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, text);
  if (mode !== undefined) await Deno.chmod(path, mode);
}

async function git(cwd: string, ...args: string[]): Promise<void> {
  const o = await new Deno.Command("git", { args, cwd, stdout: "null", stderr: "piped" }).output();
  assert.ok(o.success, new TextDecoder().decode(o.stderr));
}

Deno.test("a hidden directory a user's hook names stays hidden (scenario A)", async () => {
  await withBase(async (base) => {
    const ws = join(base, "ws");
    const home = join(base, "home");
    await Deno.mkdir(home);
    await Deno.mkdir(ws);
    await git(ws, "init", "-q");
    await put(join(ws, "secrets", "prod.env"), "TOKEN=abc-HIDDEN\n");
    await put(
      join(ws, ".git", "hooks", "pre-commit"),
      "#!/bin/sh\ngit diff --cached --name-only | grep -qx secrets/prod.env && exit 1\n",
      0o755,
    );
    const policy = createPolicy({
      workspace: ws,
      home,
      hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home },
      hide: [join(ws, "secrets")],
    });
    const plan = await resolvePlan(policy, ws);
    assert.ok(plan.hideDirs.includes(join(ws, "secrets")));
    const child = await spawnSandboxed({
      shell: "cat secrets/prod.env 2>&1; ls -a secrets; echo end",
      policy,
      stdin: "null",
    });
    const { out } = await collect(child);
    assert.match(out, /end/);
    assert.doesNotMatch(out, /HIDDEN|prod\.env\n/);
    assert.match(out, /No such file/);
  });
});

Deno.test("a nested repository's core.hooksPath into the sealed home's .ssh shows no key (scenario B)", async () => {
  await withBase(async (base) => {
    const ws = join(base, "ws");
    await put(join(ws, ".ssh", "id_ed25519"), "-----BEGIN KEY----- SSH-HIDDEN\n");
    await Deno.mkdir(join(ws, "proj"));
    await git(join(ws, "proj"), "init", "-q");
    await git(join(ws, "proj"), "config", "core.hooksPath", "../.ssh");
    const policy = createPolicy({
      workspace: ws,
      home: ws,
      hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: ws },
      allowHomeWorkspace: true,
    });
    const child = await spawnSandboxed({
      shell: "cat .ssh/id_ed25519 2>&1; echo end",
      policy,
      stdin: "null",
    });
    const { out } = await collect(child);
    assert.match(out, /end/);
    assert.doesNotMatch(out, /SSH-HIDDEN/);
  });
});

Deno.test("the plan's last check finds a bind inside a hidden directory, not a shown one", () => {
  const view = { dirs: ["/w/.ssh", "/h"], files: ["/w/.netrc"], shown: ["/w", "/h/.cargo"] };
  assert.equal(hiddenBindProblem(["/w/a", "/w/.ssh/x"], view), "/w/.ssh/x");
  assert.equal(hiddenBindProblem(["/w/.ssh"], view), "/w/.ssh");
  assert.equal(hiddenBindProblem(["/w/.netrc"], view), "/w/.netrc");
  assert.equal(hiddenBindProblem(["/w/.sshx", "/h/.cargo/bin", "/w"], view), undefined);
  assert.equal(isHidden("/h/x", view), true);
});
