// The process registry and the unread-output buffer: 1 MiB drop marker, cap eviction, idle TTL.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createOutputBuffer } from "../../lib/tools/_output_buffer.ts";
import {
  DEFAULT_BUFFER_LIMIT,
  DEFAULT_IDLE_TTL_MS,
  DEFAULT_MAX_SESSIONS,
  INPUT_COMMAND_DEFINITION,
  newProcessId,
} from "../../lib/tools/mod.ts";
import { createInputCommandTool } from "../../lib/tools/input_command.ts";
import { call, procId, withSession } from "./_command_helpers.ts";
import { eventually, pidsWithArg, uniqueSleep, within } from "./_process_probes.ts";

Deno.test("a registry holds 64 sessions, 1 MiB unread output each, 10 idle days", () => {
  assert.equal(DEFAULT_MAX_SESSIONS, 64);
  assert.equal(DEFAULT_BUFFER_LIMIT, 1024 * 1024);
  assert.equal(DEFAULT_IDLE_TTL_MS, 10 * 24 * 60 * 60 * 1000);
  for (let i = 0; i < 20; i++) assert.match(newProcessId(), /^proc-[0-9a-f]{8}$/);
});

Deno.test("the unread buffer drops the oldest chars and reports them once in a marker", () => {
  const b = createOutputBuffer(10);
  b.append("abcdefgh");
  b.append("ijkl");
  assert.equal(b.size, 10);
  assert.equal(b.dropped, 2);
  assert.equal(b.take(), "[... 2 chars of earlier output dropped ...]\ncdefghijkl");
  assert.equal(b.take(), "");
  b.append("xy");
  assert.equal(b.take(), "xy", "the marker is not repeated");
  // Never split a surrogate pair: dropping the high half drops the low half too.
  const s = createOutputBuffer(3);
  s.append("a\u{1F600}bc");
  assert.equal(s.take(), "[... 3 chars of earlier output dropped ...]\nbc");
});

Deno.test("more than 1 MiB of unread output keeps the newest 1 MiB behind the drop marker", async () => {
  await withSession(async ({ ctx, ws, processes }) => {
    const start = await call(ctx, "exec_command", {
      description: "flood",
      cmd:
        "while [ ! -e go ]; do sleep 0.05; done; head -c 1200000 /dev/zero | tr '\\0' x; echo; echo END",
      yield_time_ms: 250,
    });
    const id = procId(start.output);
    await Deno.writeTextFile(join(ws, "go"), "");
    await within(processes.get(id)!.done, 30_000, "the command to exit");
    const unlimited = createInputCommandTool({ ...INPUT_COMMAND_DEFINITION, maxOutputLength: 0 });
    const r = await call(ctx, "input_command", { description: "read", process_id: id }, {
      tool: unlimited,
    });
    assert.equal(r.status, "completed");
    const total = 1_200_000 + "\nEND\n".length;
    const dropped = total - DEFAULT_BUFFER_LIMIT;
    const marker = `[... ${dropped} chars of earlier output dropped ...]\n`;
    assert.ok(r.output.startsWith(marker), r.output.slice(0, 80));
    const body = r.output.slice(marker.length);
    assert.equal(body.length, DEFAULT_BUFFER_LIMIT);
    assert.ok(body.endsWith("x\nEND\n"));
    assert.equal(body.replace(/x/g, ""), "\nEND\n");
  });
});

Deno.test("a full registry evicts an exited session first, else the least recently used running one", async () => {
  let clock = 0;
  await withSession(async ({ ctx, ws, processes }) => {
    const [a, b, c] = [uniqueSleep(), uniqueSleep(), uniqueSleep()];
    const start = async (cmd: string) => {
      clock += 10;
      return procId(
        (await call(ctx, "exec_command", { description: "s", cmd, yield_time_ms: 250 })).output,
      );
    };

    const quick = await start("while [ ! -e go ]; do sleep 0.05; done; exit 0");
    const first = await start(`sleep ${a}`);
    await Deno.writeTextFile(join(ws, "go"), "");
    await within(processes.get(quick)!.done, 30_000, "the quick command to exit");
    const second = await start(`sleep ${b}`);
    assert.deepEqual(processes.ids(), [first, second], "the exited session went first");
    assert.ok(pidsWithArg(a).length > 0, "running sessions were spared");

    clock += 10;
    processes.get(first); // first is now the most recently used
    const third = await start(`sleep ${c}`);
    assert.deepEqual(processes.ids().sort(), [first, third].sort());
    assert.ok(await eventually(() => pidsWithArg(b).length === 0), "the evicted command survived");
    assert.ok(pidsWithArg(a).length > 0 && pidsWithArg(c).length > 0);
  }, { registry: { maxSessions: 2, now: () => clock } });
});

Deno.test("evicting an armed background command reports it as failed", async () => {
  await withSession(async ({ ctx, processes }) => {
    const nap = uniqueSleep();
    const bg = procId(
      (await call(ctx, "exec_command", {
        description: "bg",
        cmd: `sleep ${nap}`,
        run_in_background: true,
      })).output,
    );
    await call(ctx, "exec_command", { description: "fg", cmd: "sleep 5", yield_time_ms: 250 });
    const [n] = processes.takeNotices();
    assert.ok(n, "a notice for the evicted command");
    assert.equal(n.id, bg);
    assert.equal(n.status, "failed");
    assert.match(n.detail ?? "", /limit of 1 command sessions was reached/);
    assert.ok(await eventually(() => pidsWithArg(nap).length === 0));
  }, { registry: { maxSessions: 1 } });
});

Deno.test("the idle sweep kills and removes sessions unused for longer than the TTL", async () => {
  let clock = 1_000_000;
  await withSession(async ({ ctx, processes }) => {
    const [old, fresh] = [uniqueSleep(), uniqueSleep()];
    const idOld = procId(
      (await call(ctx, "exec_command", {
        description: "o",
        cmd: `sleep ${old}`,
        yield_time_ms: 250,
      }))
        .output,
    );
    clock += 5_000;
    const idFresh = procId(
      (await call(ctx, "exec_command", {
        description: "f",
        cmd: `sleep ${fresh}`,
        yield_time_ms: 250,
      })).output,
    );
    assert.deepEqual(await processes.sweep(), []);
    clock += 10_000 - 5_000 + 1;
    assert.deepEqual(await processes.sweep(), [idOld]);
    assert.deepEqual(processes.ids(), [idFresh]);
    assert.ok(await eventually(() => pidsWithArg(old).length === 0));
    assert.ok(pidsWithArg(fresh).length > 0);
  }, { registry: { idleTtlMs: 10_000, now: () => clock } });
});
