// Traces and skills are read from regular files: `trace validate|show|diff|follow` of a FIFO or of
// a link to /dev/zero, and `skills install` of a FIFO, are refused at once, as `sessions import`
// refuses them (red team final6 N36, N42: a FIFO blocked the first read until the process was
// killed, /dev/zero was read without end). The 120 s abort only keeps a regression from hanging
// the suite; nothing here waits on time.
import assert from "node:assert/strict";
import { join } from "node:path";
import { penguinArgv, penguinEnv, REPO, withoutTerminal } from "../support/cli.ts";
import { withTempDir } from "../support/roots.ts";

async function penguin(args: string[]): Promise<{ code: number; stderr: string }> {
  const { command, args: argv } = withoutTerminal([Deno.execPath(), ...penguinArgv(), ...args]);
  const out = await new Deno.Command(command, {
    args: argv,
    cwd: REPO,
    env: penguinEnv(),
    stdin: "null",
    stdout: "null",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("trace commands refuse a FIFO and a link to /dev/zero at once; skills install refuses a FIFO", async () => {
  await withTempDir("penguin-not-regular-", async (dir) => {
    const fifo = join(dir, "f.jsonl");
    const zero = join(dir, "z.jsonl");
    await new Deno.Command("mkfifo", { args: [fifo] }).output();
    await Deno.symlink("/dev/zero", zero);
    const root = join(dir, "root");
    const cases: string[][] = [
      ["trace", "validate", fifo],
      ["trace", "validate", zero],
      ["trace", "show", fifo],
      ["trace", "show", zero],
      ["trace", "diff", fifo, zero],
      ["trace", "follow", fifo],
    ];
    for (const c of cases) {
      const r = await penguin(["--root", root, ...c]);
      assert.equal(r.code, 1, `${c.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, /not a regular file/, c.join(" "));
    }
    const skill = join(dir, "skill.tar.gz");
    await new Deno.Command("mkfifo", { args: [skill] }).output();
    const r = await penguin(["--root", root, "skills", "install", skill]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /Cannot install the skill from ".*": it is not a regular file \(a FIFO, device or socket\)/,
    );
  });
});
