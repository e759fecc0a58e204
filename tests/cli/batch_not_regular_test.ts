// `batch report` and `batch k8s` read only regular files: a FIFO or a link to /dev/zero given as a
// results file or a task file is refused at once, as `batch run` and the trace commands refuse them
// (red team final7 N25, N26: a FIFO blocked the open until the process was killed, /dev/zero was
// read until killed at 0.9-2.5 GB). The 120 s abort only keeps a regression from hanging the
// suite; nothing here waits on time.
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

Deno.test("batch report and batch k8s refuse a FIFO and a link to /dev/zero at once", async () => {
  await withTempDir("penguin-batch-not-regular-", async (dir) => {
    const fifo = join(dir, "f.results.jsonl");
    const zero = join(dir, "z.results.jsonl");
    await new Deno.Command("mkfifo", { args: [fifo] }).output();
    await Deno.symlink("/dev/zero", zero);
    const root = join(dir, "root");
    for (const path of [fifo, zero]) {
      const report = await penguin(["--root", root, "batch", "report", path]);
      assert.equal(report.code, 1, `batch report ${path}: ${report.stderr}`);
      assert.match(
        report.stderr,
        /cannot read the results file ".*": it is not a regular file \(a FIFO, device or socket\)/,
      );
      const k8s = await penguin(["--root", root, "batch", "k8s", path, "--image", "x"]);
      assert.equal(k8s.code, 2, `batch k8s ${path}: ${k8s.stderr}`);
      assert.match(
        k8s.stderr,
        /cannot read the task file ".*": it is not a regular file \(a FIFO, device or socket\)/,
      );
    }
  });
});
