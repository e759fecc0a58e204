// input_command under the real sandbox: stdin, Ctrl-C, polling, unknown ids, aborted polls.
import assert from "node:assert/strict";
import { join } from "node:path";
import type { ExecutionContext } from "../../lib/tools/mod.ts";
import { call, procId, withSession } from "./_command_helpers.ts";
import { UNREAD_NOTE } from "../../lib/tools/input_command.ts";
import { eventually, pidsWithArg, uniqueSleep, within } from "./_process_probes.ts";

/** Start `cmd` so that it outlives a 250 ms window; returns its id. */
async function background(ctx: ExecutionContext, cmd: string): Promise<string> {
  const r = await call(ctx, "exec_command", { description: "start", cmd, yield_time_ms: 250 });
  assert.equal(r.status, "completed", r.output);
  return procId(r.output);
}

/** input_command writing `chars` to process `id`. */
const feed = (ctx: ExecutionContext, id: string, chars: string, description = "feed") =>
  call(ctx, "input_command", { description, process_id: id, chars });

/** input_command waiting up to 250 ms for more output of process `id`. */
const poll = (ctx: ExecutionContext, id: string, description = "poll") =>
  call(ctx, "input_command", { description, process_id: id, yield_time_ms: 250 });

Deno.test("cat is fed through input_command and echoes back while it keeps running", async () => {
  await withSession(async ({ ctx, processes }) => {
    const id = await background(ctx, "cat");
    const first = await feed(ctx, id, "hello from stdin\n");
    assert.equal(first.status, "completed");
    assert.ok(first.output.endsWith(`[process still running with process_id ${id}]`));
    let seen = first.output;
    for (let i = 0; i < 40 && !seen.includes("hello from stdin\n"); i++) {
      seen += (await poll(ctx, id)).output;
    }
    assert.ok(seen.includes("hello from stdin\n"), seen);
    assert.deepEqual(processes.ids(), [id]);

    const quiet = await poll(ctx, id, "peek");
    assert.deepEqual(
      [quiet.status, quiet.output],
      ["completed", `[process still running with process_id ${id}]`],
    );
  });
});

Deno.test('a lone "\\u0003" interrupts a sleep and its process group really ends', async () => {
  await withSession(async ({ ctx, processes }) => {
    const nap = uniqueSleep();
    const id = await background(ctx, `sleep ${nap}; echo not reached`);
    assert.ok(await eventually(() => pidsWithArg(nap).length > 0), "the sleep never started");
    let r = await feed(ctx, id, "\u0003", "ctrl-c");
    for (let i = 0; i < 40 && r.output.includes("still running"); i++) {
      r = await poll(ctx, id);
    }
    assert.equal(r.status, "failed");
    assert.equal(r.output, "[terminated by signal SIGINT]");
    assert.deepEqual(processes.ids(), []);
    assert.ok(await eventually(() => pidsWithArg(nap).length === 0), "the sleep survived Ctrl-C");
  });
});

Deno.test("U+0003 mixed with other characters is refused and nothing is written", async () => {
  await withSession(async ({ ctx, processes }) => {
    const id = await background(ctx, "cat");
    const r = await feed(ctx, id, "abc\u0003\n", "mixed");
    assert.equal(r.status, "failed");
    assert.match(r.output, /must be sent alone/);
    assert.deepEqual(processes.ids(), [id], "the process is untouched");
    const peek = await poll(ctx, id, "peek");
    assert.ok(!peek.output.includes("abc"));
  });
});

Deno.test("an unknown process_id fails and lists the live ids", async () => {
  await withSession(async ({ ctx }) => {
    const none = await call(ctx, "input_command", {
      description: "x",
      process_id: "proc-00000000",
    });
    assert.equal(none.status, "failed");
    assert.match(none.output, /no command session has process_id "proc-00000000"/);
    assert.match(none.output, /There are no command sessions/);

    const id = await background(ctx, "cat");
    const some = await call(ctx, "input_command", {
      description: "x",
      process_id: "proc-ffffffff",
    });
    assert.equal(some.status, "failed");
    assert.ok(some.output.includes(`Live process ids: ${id}.`), some.output);
  });
});

Deno.test("input to a command that already exited reports the exit and removes the session", async () => {
  await withSession(async ({ ctx, ws, processes }) => {
    const id = await background(ctx, "while [ ! -e go ]; do sleep 0.05; done; echo bye; exit 5");
    await Deno.writeTextFile(join(ws, "go"), "");
    await within(processes.get(id)!.done, 30_000, "the command to exit");
    const r = await feed(ctx, id, "x\n", "late");
    assert.equal(r.status, "failed");
    assert.equal(r.output, "bye\n\n[exit code: 5]");
    assert.deepEqual(processes.ids(), []);
  });
});

Deno.test("an abort ends only the poll: the command keeps running", async () => {
  await withSession(async ({ ctx, processes }) => {
    const nap = uniqueSleep();
    const id = await background(ctx, `sleep ${nap}`);
    assert.ok(await eventually(() => pidsWithArg(nap).length > 0));
    const controller = new AbortController();
    const polling = call(ctx, "input_command", {
      description: "long poll",
      process_id: id,
    }, { signal: controller.signal });
    controller.abort();
    const r = await polling;
    assert.equal(r.status, "aborted");
    assert.deepEqual(processes.ids(), [id]);
    assert.ok(pidsWithArg(nap).length > 0, "the sleep must survive an aborted poll");
  });
});

// Attack round 21 (bounded A05b): a command that does not read its input held input_command until
// the tool's timeout, whatever yield_time_ms said; later input queued behind it.
Deno.test("input a command does not read yet ends at the window, and is written as it reads", async () => {
  await withSession(async ({ ctx }) => {
    const big = "x".repeat(1024 * 1024);
    const total = big.length + "tail\n".length;
    // The command reads only once the test lets it (a file in the workspace), then counts.
    const id = await background(
      ctx,
      `while [ ! -e go ]; do sleep 0.05; done; head -c ${total} | wc -c`,
    );
    const r = await call(ctx, "input_command", {
      description: "feed",
      process_id: id,
      chars: big,
      yield_time_ms: 250,
    });
    assert.equal(r.status, "completed");
    assert.ok(r.output.includes(UNREAD_NOTE), r.output.slice(-300));
    assert.ok(r.output.endsWith(`[process still running with process_id ${id}]`), r.output);
    // Later input goes after it, in order, once the command reads.
    await Deno.writeTextFile(join(ctx.workspace, "go"), "");
    let seen = (await feed(ctx, id, "tail\n", "more")).output;
    for (let i = 0; i < 200 && !seen.includes(String(total)); i++) {
      seen += (await poll(ctx, id)).output;
    }
    assert.match(seen, new RegExp(`\\b${total}\\b`), seen.slice(-300));
  });
});
