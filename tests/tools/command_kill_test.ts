// kill_command under the real sandbox: process trees, undelivered output, SIGKILL escalation.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createExecCommandTool, EXEC_COMMAND_DEFINITION } from "../../lib/tools/mod.ts";
import { call, procId, withSession } from "./_command_helpers.ts";
import { eventually, pidsWithArg, uniqueSleep, within } from "./_process_probes.ts";

Deno.test("kill_command kills the whole process tree and returns the undelivered output", async () => {
  await withSession(async ({ ctx, ws, processes }) => {
    const [a, b, c] = [uniqueSleep(), uniqueSleep(), uniqueSleep()];
    // A child, a grandchild in a sub-shell, and one that left the group with setsid.
    const cmd = `while [ ! -e go ]; do sleep 0.05; done; echo late-output; ` +
      `sleep ${a} & bash -c 'sleep ${b}; true' & setsid sleep ${c} & wait`;
    const start = await call(ctx, "exec_command", { description: "tree", cmd, yield_time_ms: 250 });
    const id = procId(start.output);
    await Deno.writeTextFile(join(ws, "go"), "");
    assert.ok(
      await eventually(() => [a, b, c].every((n) => pidsWithArg(n).length > 0)),
      "the tree never started",
    );
    assert.ok(await eventually(() => (processes.get(id)?.unread ?? 0) > 0), "no output arrived");

    const r = await call(ctx, "kill_command", { description: "stop", process_id: id });
    assert.equal(r.status, "completed");
    assert.equal(r.output, `late-output\n\n[process ${id} killed (SIGTERM)]`);
    assert.deepEqual(processes.ids(), []);
    for (const n of [a, b, c]) {
      assert.ok(await eventually(() => pidsWithArg(n).length === 0), `sleep ${n} survived`);
    }
  });
});

Deno.test("a command that ignores SIGTERM is SIGKILLed after 1000 ms", async () => {
  await withSession(async ({ ctx, processes }) => {
    const nap = uniqueSleep();
    const start = await call(ctx, "exec_command", {
      description: "stubborn",
      cmd: `trap '' TERM; sleep ${nap}`,
      yield_time_ms: 250,
    });
    const id = procId(start.output);
    assert.ok(await eventually(() => pidsWithArg(nap).length > 0));
    const r = await call(ctx, "kill_command", { description: "stop", process_id: id });
    assert.equal(r.status, "completed");
    assert.equal(
      r.output,
      `[process ${id} killed (SIGKILL after SIGTERM was ignored for 1000 ms)]`,
    );
    assert.deepEqual(processes.ids(), []);
    assert.ok(await eventually(() => pidsWithArg(nap).length === 0));
  });
});

Deno.test("kill_command on a command that already exited removes it and says how it ended", async () => {
  await withSession(async ({ ctx, ws, processes }) => {
    const start = await call(ctx, "exec_command", {
      description: "short",
      cmd: "while [ ! -e go ]; do sleep 0.05; done; echo unread; exit 3",
      yield_time_ms: 250,
    });
    const id = procId(start.output);
    await Deno.writeTextFile(join(ws, "go"), "");
    await within(processes.get(id)!.done, 30_000, "the command to exit");
    const r = await call(ctx, "kill_command", { description: "clean", process_id: id });
    assert.equal(r.status, "completed");
    assert.equal(
      r.output,
      `unread\n\n[process ${id} had already exited (exit code 3); session removed]`,
    );
    assert.deepEqual(processes.ids(), []);
    const again = await call(ctx, "kill_command", { description: "again", process_id: id });
    assert.equal(again.status, "failed");
    assert.match(again.output, /no command session has process_id/);
  });
});

Deno.test("a fork bomb that runs out of time (window without a registry, or the tool timeout) leaves no process", async () => {
  await withSession(async ({ ctx }) => {
    const tag = `1000.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
    // Forks 400 sleepers, then sleeps itself: it can only end by being killed, whenever that is.
    const cmd = `perl -e 'for (1..400) { my $p = fork; last unless defined $p; ` +
      `if (!$p) { sleep 1000; exit } } sleep 1000' ${tag}`;
    const tool = createExecCommandTool({ ...EXEC_COMMAND_DEFINITION, timeoutMs: 2000 });
    const { processes: _, ...noRegistry } = ctx;
    const r = await call(noRegistry, "exec_command", { description: "bomb", cmd }, { tool });
    assert.equal(r.status, "failed");
    assert.match(
      r.output,
      /\[process killed at the end of its 1000 ms window|\[tool timeout: exceeded 2000ms\]/,
    );
    // After a timeout the kill may outlast the call's grace: wait for the count (bounded).
    assert.ok(
      await eventually(() => pidsWithArg(tag).length === 0, 1200),
      `${pidsWithArg(tag).length} bomb processes survived`,
    );
  });
});
