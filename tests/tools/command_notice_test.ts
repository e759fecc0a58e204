// Background completion notices: run_in_background, the notice text, suppression by kill, dispose.
import assert from "node:assert/strict";
import {
  AUTOMATIC_NOTICE_SENTENCE,
  type BackgroundNotice,
  formatBackgroundNotice,
  noticeTail,
  taskLabel,
} from "../../lib/tools/mod.ts";
import { call, inBackground, procId, withSession } from "./_command_helpers.ts";
import { eventually, pidsWithArg, uniqueSleep, within } from "./_process_probes.ts";

Deno.test("run_in_background returns at once and produces exactly one completion notice", async () => {
  const heard: BackgroundNotice[] = [];
  await withSession(async ({ ctx, processes }) => {
    const r = await inBackground(ctx, "echo bg-out; exit 3");
    assert.equal(r.status, "completed");
    const id = procId(r.output);
    assert.equal(
      r.output,
      `[process running in the background with process_id ${id}; its result will arrive as a message when it exits, so there is no need to poll — input_command sends input or peeks, kill_command stops it]`,
    );
    await within(processes.get(id)!.done, 30_000, "the command to exit");
    assert.ok(await eventually(() => processes.pendingNotices > 0));
    const notices = processes.takeNotices();
    assert.equal(notices.length, 1);
    assert.deepEqual(processes.takeNotices(), [], "taking empties the queue");
    const n = notices[0]!;
    assert.deepEqual(
      [n.kind, n.id, n.status, n.detail, n.label, n.output],
      ["command", id, "failed", "exit code 3", "echo bg-out; exit 3", "bg-out\n"],
    );
    assert.equal(
      n.text,
      [
        "[background_task_done]",
        AUTOMATIC_NOTICE_SENTENCE,
        "kind: command",
        `id: ${id}`,
        "status: failed",
        "detail: exit code 3",
        "[/background_task_done]",
        `Background command failed: \`echo bg-out; exit 3\` (process_id ${id}) — exit code 3`,
        "",
        "bg-out\n",
      ].join("\n"),
    );
    assert.deepEqual(heard, notices, "onNotice saw the same notice");
    // The session stays until collected; its output went out with the notice.
    const poll = await call(ctx, "input_command", { description: "x", process_id: id });
    assert.equal(poll.output, "[exit code: 3]");
  }, { registry: { onNotice: (n) => heard.push(n) } });
});

Deno.test("a background command that succeeds is reported as finished", async () => {
  await withSession(async ({ ctx, processes }) => {
    const r = await inBackground(ctx, "echo done\n# second line");
    const id = procId(r.output);
    const got = await within(
      new Promise<BackgroundNotice>((resolve) => processes.onNotice(resolve)),
      30_000,
      "the notice",
    );
    assert.deepEqual([got.status, got.detail, got.label], [
      "completed",
      "exit code 0",
      "echo done…",
    ]);
    assert.ok(
      got.text.includes(
        `Background command finished: \`echo done…\` (process_id ${id}) — exit code 0\n\ndone\n`,
      ),
    );
  });
});

Deno.test("kill_command disarms the notice of a background command", async () => {
  await withSession(async ({ ctx, processes }) => {
    const nap = uniqueSleep();
    const r = await inBackground(ctx, `sleep ${nap}`);
    const id = procId(r.output);
    const session = processes.get(id)!;
    assert.ok(await eventually(() => pidsWithArg(nap).length > 0));
    const k = await call(ctx, "kill_command", { description: "stop", process_id: id });
    assert.equal(k.output, `[process ${id} killed (SIGTERM)]`);
    await within(session.done, 30_000, "the command to exit");
    await new Promise((r) => setTimeout(r, 0));
    assert.equal(processes.pendingNotices, 0);
    assert.deepEqual(processes.takeNotices(), []);
  });
});

Deno.test("a notice carries at most 4000 chars of output, marked when cut", async () => {
  await withSession(async ({ ctx }) => {
    const heard: Promise<BackgroundNotice> = new Promise((resolve) =>
      ctx.processes!.onNotice(resolve)
    );
    await inBackground(ctx, "head -c 10000 /dev/zero | tr '\\0' a; echo; echo END");
    const n = await within(heard, 30_000, "the notice");
    const prefix = "[earlier output dropped: exceeded 4000 chars]\n";
    assert.ok(n.output.startsWith(prefix));
    const tail = n.output.slice(prefix.length);
    assert.equal(tail.length, 4000);
    assert.equal(tail, "a".repeat(4000 - 5) + "\nEND\n");
    assert.ok(n.text.endsWith(`\n\n${n.output}`));
  });
});

Deno.test("disposeAll kills every command, drops armed notices and refuses new ones", async () => {
  await withSession(async ({ ctx, processes }) => {
    const [a, b] = [uniqueSleep(), uniqueSleep()];
    await inBackground(ctx, `sleep ${a}`);
    await call(ctx, "exec_command", { description: "fg", cmd: `sleep ${b}`, yield_time_ms: 250 });
    assert.ok(await eventually(() => pidsWithArg(a).length > 0 && pidsWithArg(b).length > 0));
    await processes.disposeAll();
    assert.equal(processes.size, 0);
    for (const n of [a, b]) assert.ok(await eventually(() => pidsWithArg(n).length === 0));
    assert.equal(processes.pendingNotices, 0);
    const late = await inBackground(ctx, "true", "late");
    assert.deepEqual([late.status, late.output], [
      "failed",
      "[process killed: the session is closing]",
    ]);
  });
});

Deno.test("notice labels take the first line, at most 120 chars with an ellipsis", () => {
  assert.equal(taskLabel("  make test  "), "make test");
  assert.equal(taskLabel("a\nb"), "a…");
  const long = "x".repeat(130);
  assert.equal(taskLabel(long), "x".repeat(119) + "…");
  assert.equal(noticeTail("short"), "short");
  const n = formatBackgroundNotice({
    kind: "subagent",
    id: "sub-1",
    status: "completed",
    command: "review the diff",
    output: "",
  });
  assert.equal(
    n.text,
    [
      "[background_task_done]",
      AUTOMATIC_NOTICE_SENTENCE,
      "kind: subagent",
      "id: sub-1",
      "status: completed",
      "[/background_task_done]",
      "Background subagent finished: `review the diff` (subagent_id sub-1)",
      "",
      "[no output]",
    ].join("\n"),
  );
});

Deno.test("a background notice masks vault values even when the buffer dropped the start of one", async () => {
  const token = "vault-token-0123456789abcdef";
  await withSession(async ({ ctx, processes }) => {
    // 28 chars of secret, then 20 x: a 30-char buffer without masking would keep the secret's last 10.
    const r = await inBackground(ctx, `printf '%s' "$MY_TOKEN"; printf 'xxxxxxxxxxxxxxxxxxxx'`);
    const id = procId(r.output);
    await within(processes.get(id)!.done, 30_000, "the command to exit");
    assert.ok(await eventually(() => processes.pendingNotices > 0));
    const [n] = processes.takeNotices();
    assert.ok(n!.text.endsWith("MY_TOKEN]xxxxxxxxxxxxxxxxxxxx"), n!.text);
    for (let i = 0; i + 6 <= token.length; i++) {
      assert.ok(!n!.text.includes(token.slice(i, i + 6)), `a piece of the secret in ${n!.text}`);
    }
  }, { registry: { bufferLimit: 30 }, vault: { MY_TOKEN: token } });
});
