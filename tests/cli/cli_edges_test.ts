// Rough CLI edges (issue 13): Deno's own warnings, closed pipes, typos and help pointers.
import assert from "node:assert/strict";
import { REPO, runCli } from "../support/cli.ts";
import { selfArgv } from "../../lib/tools/host/self.ts";

async function stderrOf(argv: string[], cwd = REPO): Promise<string> {
  const out = await new Deno.Command(argv[0]!, {
    args: argv.slice(1),
    cwd,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stderr);
}

Deno.test("Deno's experimental-permissions warning never reaches the user", async () => {
  const viaTask = await stderrOf([Deno.execPath(), "task", "penguin", "--version"]);
  assert.doesNotMatch(viaTask, /experimental|Warning/);
  const viaTests = await runCli(["--version"]);
  assert.equal(viaTests.stderr, "");
  const viaSelf = await stderrOf(selfArgv(["--version"]));
  assert.equal(viaSelf, "");
});
