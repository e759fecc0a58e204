// The suite's own run directories (tests/support/run_dir.ts) must not pile up: each one left
// behind stays noted in the user's run-directory list, which every later penguin's plans read.
import { equal, ok } from "node:assert/strict";
import { fileURLToPath } from "node:url";

const SUPPORT = fileURLToPath(new URL("../support/run_dir.ts", import.meta.url));

/** Run a process that makes its test run directory and exits; its path. */
async function runDirOfExitedProcess(): Promise<string> {
  const script = `import { useTestRunDir } from ${JSON.stringify(SUPPORT)};
const dir = useTestRunDir();
Deno.writeTextFileSync(dir + "/state", "x");
console.log(dir);`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", script],
    env: { PENGUIN_RUN_DIR: "" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const dir = new TextDecoder().decode(out.stdout).trim();
  ok(dir.includes("penguin-test-run-"), dir);
  return dir;
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

Deno.test("the next test process removes the run directory of one that exited", async () => {
  const first = await runDirOfExitedProcess();
  const second = await runDirOfExitedProcess();
  try {
    ok(!exists(first), `${first} is still there after its test process exited and another began`);
    ok(exists(second), "a test process's own run directory stays while it may run penguin");
  } finally {
    await Deno.remove(second, { recursive: true }).catch(() => {});
  }
});
