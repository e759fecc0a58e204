// Nothing a command started outlives penguin: fork bombs counted by PID in
// /proc, once `penguin run` has exited normally (background commands are
// killed at the end of the session) and once it was killed with SIGKILL in
// the middle of a command. Every wait is on a condition (a file the bomb
// writes, the process exit, the PID count), never on a sleep.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer, turn } from "../support/model_server.ts";
import { penguinArgv, penguinEnv, REPO } from "../support/cli.ts";
import { makeRoot } from "../agent/_support.ts";
import { pidsWithArg } from "../tools/_process_probes.ts";
import { withModelRoot } from "../support/roots.ts";

/** Forks `n` sleeping children tagged with `tag`, writes `ready` with their count, then sleeps. */
const bomb = (tag: string, n: number) =>
  `perl -e 'my $n = 0; for (1..${n}) { my $p = fork; last unless defined $p; ` +
  `if (!$p) { sleep 1000; exit } $n++ } open(my $f, ">", "ready.tmp"); print $f $n; close $f; ` +
  `rename "ready.tmp", "ready"; sleep 1000' ${tag}`;

/** A shell loop (inside the sandbox) that returns once the bomb has written `ready`. */
const WAIT_READY = "until [ -e ready ]; do sleep 0.05; done; echo forked=$(cat ready)";

function tagOf(): string {
  return `1000.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
}

function cli(root: string, ws: string): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: [...penguinArgv(), "--root", root, "run", "--workspace", ws, "-m", "go"],
    cwd: REPO,
    env: penguinEnv(),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

Deno.test("when penguin run ends, no process of a background fork bomb is left, counted the moment it exits", async () => {
  const tag = tagOf();
  const script = [
    turn.toolCall("exec_command", {
      description: "bomb",
      cmd: bomb(tag, 400),
      run_in_background: true,
    }),
    turn.toolCall("exec_command", { description: "wait", cmd: WAIT_READY }),
    turn.text("done"),
  ];
  let served = 0;
  await withModelRoot({
    handler: () => script[Math.min(served++, script.length - 1)]!,
    maxRequests: 10,
  }, async (sb) => {
    const out = await cli(sb.root, sb.workspace).output();
    const left = pidsWithArg(tag); // no grace: the exit of penguin is the signal
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    assert.equal(await Deno.readTextFile(join(sb.workspace, "ready")), "400", "the bomb ran");
    assert.deepEqual(left, [], `${left.length} bomb processes outlived penguin`);
  });
});

Deno.test("when penguin is killed with SIGKILL mid-command, every process of the command's fork bomb dies", async () => {
  const tag = tagOf();
  let served = 0;
  const server = await startModelServer({
    handler: () =>
      served++ === 0
        ? turn.toolCall("exec_command", { description: "bomb", cmd: bomb(tag, 400) })
        : turn.text("unreachable"),
    maxRequests: 10,
  });
  const sb = await makeRoot(server);
  const child = cli(sb.root, sb.workspace).spawn();
  try {
    const ready = join(sb.workspace, "ready");
    // Condition: the bomb has forked all its children (bounded failsafe: 120 s).
    for (let i = 0; i < 2400 && !await Deno.stat(ready).then(() => true, () => false); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(await Deno.readTextFile(ready), "400", "the bomb ran");
    assert.ok(pidsWithArg(tag).length > 400, "the bomb is alive before penguin dies");
    child.kill("SIGKILL");
    await child.status;
    // The teardown runs on its own after penguin died (parent-death signals): wait for the count.
    let left = pidsWithArg(tag);
    for (let i = 0; i < 1200 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      left = pidsWithArg(tag);
    }
    assert.deepEqual(left, [], `${left.length} bomb processes outlived penguin's SIGKILL`);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await child.status;
    await child.stdout.cancel();
    await child.stderr.cancel();
    await server.close();
    await sb.cleanup();
  }
});
