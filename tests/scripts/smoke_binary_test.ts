// scripts/smoke_binary.ts, the release workflow's smoke test of a compiled binary, run here
// against the source form (`deno run` with the flags of `deno task penguin`): no denort on
// this machine, so `deno compile` cannot produce a runnable binary.
import assert from "node:assert/strict";
import { denoDir, penguinArgv, REPO, runText } from "../support/cli.ts";

function smoke(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runText(Deno.execPath(), {
    args: ["run", "-A", `${REPO}scripts/smoke_binary.ts`, ...argv],
    cwd: REPO,
    env: { DENO_DIR: denoDir(), NO_COLOR: "1" },
  });
}

Deno.test("smoke_binary passes every step against penguin run with the binary's flags", async () => {
  const r = await smoke([Deno.execPath(), ...penguinArgv()]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const steps = r.stdout.split("\n").filter((l) => l.startsWith("smoke: ok"));
  assert.deepEqual(steps.map((l) => l.replace(/^smoke: ok\s+/, "")), [
    "--version",
    "demo",
    "sandbox check",
    "config model add",
    "run (sandboxed file tools and command)",
    "run --sandbox off (file tool in a Worker)",
    "trace validate",
  ]);
  assert.match(r.stdout, /^smoke: all 7 steps passed /m);
});

Deno.test("smoke_binary fails, naming the step, when penguin runs without its permission set", async () => {
  // The flags of `deno task penguin` without -P=penguin: what a binary compiled
  // without the baked-in permissions would do (every permission denied, no prompt).
  const argv = penguinArgv().filter((a) => a !== "-P=penguin");
  assert.ok(argv.length < penguinArgv().length, "penguinArgv() holds -P=penguin");
  const r = await smoke([Deno.execPath(), ...argv]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stdout, /^smoke: FAIL {2}\S/m);
  assert.doesNotMatch(r.stdout, /steps passed/);
});

Deno.test("smoke_binary fails on a binary that reports another version", async () => {
  const dir = await Deno.makeTempDir({ prefix: "penguin-smoke-test-" });
  try {
    const fake = `${dir}/penguin`;
    await Deno.writeTextFile(fake, "#!/bin/sh\necho 'penguin 0.0.0-other'\n");
    await Deno.chmod(fake, 0o755);
    const r = await smoke([fake]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /^smoke: FAIL {2}--version: --version: expected "penguin \d+\.\d+\.\d+"/m,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
