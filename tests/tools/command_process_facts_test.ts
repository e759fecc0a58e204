// The `penguin_process` field of the command tools' outputs: the process id,
// its state and exit code as data, under the real sandbox.
import assert from "node:assert/strict";
import { join } from "node:path";
import { validateMessage } from "../../lib/protocol/validate.ts";
import { abortOnceRunning, call, inBackground, procId, withSession } from "./_command_helpers.ts";
import { uniqueSleep } from "./_process_probes.ts";

Deno.test("a foreground command that exits records penguin_process exited with its exit code", async () => {
  await withSession(async ({ ctx }) => {
    const ok = await call(ctx, "exec_command", { description: "ok", cmd: "echo hi" });
    assert.equal(ok.final.penguin_process?.state, "exited");
    assert.equal(ok.final.penguin_process?.exit_code, 0);
    assert.match(ok.final.penguin_process!.id, /^proc-[0-9a-f]{8}$/);
    const bad = await call(ctx, "exec_command", { description: "fail", cmd: "exit 3" });
    assert.deepEqual(
      [bad.final.penguin_process?.state, bad.final.penguin_process?.exit_code],
      ["exited", 3],
    );
  });
});

Deno.test("a command that outlives its window is running, then input_command records its exit", async () => {
  await withSession(async ({ ctx, ws }) => {
    const first = await call(ctx, "exec_command", {
      description: "wait for go",
      cmd: "while [ ! -e go ]; do sleep 0.05; done; exit 4",
      yield_time_ms: 250,
    });
    const id = procId(first.output);
    assert.deepEqual(first.final.penguin_process, { id, state: "running", exit_code: null });
    const polled = await call(ctx, "input_command", {
      description: "poll",
      process_id: id,
      yield_time_ms: 250,
    });
    assert.deepEqual(polled.final.penguin_process, { id, state: "running", exit_code: null });
    await Deno.writeTextFile(join(ws, "go"), "");
    let last = polled;
    for (let i = 0; i < 40 && last.final.penguin_process?.state === "running"; i++) {
      last = await call(ctx, "input_command", { description: "poll", process_id: id });
    }
    assert.deepEqual(last.final.penguin_process, { id, state: "exited", exit_code: 4 });
  });
});

Deno.test("background, killed and aborted commands record running and killed", async () => {
  await withSession(async ({ ctx }) => {
    const nap = uniqueSleep();
    const bg = await inBackground(ctx, `sleep ${nap}`);
    const id = procId(bg.output);
    assert.deepEqual(bg.final.penguin_process, { id, state: "running", exit_code: null });
    const killed = await call(ctx, "kill_command", { description: "stop", process_id: id });
    assert.equal(killed.final.penguin_process?.id, id);
    assert.equal(killed.final.penguin_process?.state, "killed");
    assert.equal(typeof killed.final.penguin_process?.exit_code, "number");

    const other = uniqueSleep();
    const aborted = await abortOnceRunning(ctx, `sleep ${other}`, other);
    assert.equal(aborted.status, "aborted");
    assert.equal(aborted.final.penguin_process?.state, "killed");
  });
});

Deno.test("a tool output with penguin_process validates, and its unknown fields are kept", () => {
  const record = {
    timestamp: "2026-01-01T00:00:00.000Z",
    type: "model_msg",
    payload: {
      type: "tool_call_output",
      role: "user",
      output: "x",
      tool_call_id: "c1",
      stop_reason: "completed",
      penguin_process: { id: "proc-00000001", state: "running", exit_code: null, extra: 1 },
      later_field: true,
    },
  };
  const r = validateMessage(record);
  assert.ok(r.ok, JSON.stringify(r));
  assert.deepEqual(r.message.payload, record.payload, "nothing dropped or rewritten");
  const bad = structuredClone(record);
  bad.payload.penguin_process.state = "sleeping";
  assert.equal(validateMessage(bad).ok, false);
});
