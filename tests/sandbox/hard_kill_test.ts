// The hard kill is asked for again until the process is gone, where asking twice is harmless
// (the supervisor: bash can miss a trapped signal that lands just as its `wait` begins).
import assert from "node:assert/strict";
import { handleFor, type RawChild, toExitStatus } from "../../lib/sandbox/_process.ts";

Deno.test("a hard kill that was missed is asked for again until the process is gone", async () => {
  const child = new Deno.Command("sleep", {
    args: ["1000"],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const raw: RawChild = {
    pid: child.pid,
    stdin: null,
    stdout: null,
    stderr: null,
    status: child.status.then(toExitStatus),
  };
  let hard = 0, last = 0;
  const handle = await handleFor(raw, {
    soft: () => {},
    // The first request is missed, the second is carried out.
    hard: () => void (++hard === 2 && child.kill("SIGKILL")),
    last: () => {
      last++;
      child.kill("SIGKILL");
    },
    repeatHardMs: 10,
  }, { stdin: "null", stdio: "inherit", killGraceMs: 0, sandbox: "bwrap", describe: "sleep" });
  const status = await handle.kill(0);
  assert.equal(status.signal, "SIGKILL");
  assert.ok(hard >= 2, `asked ${hard} time(s)`);
  assert.equal(last, 0, "no last resort");
});
