// `penguin schedules list|run` end to end: the CLI as a subprocess against
// the scripted model server, with the clock set by PENGUIN_NOW (no waiting).
import assert from "node:assert/strict";
import { join } from "node:path";
import { penguinArgv, penguinEnv, REPO, runCli } from "../support/cli.ts";
import { type ScriptedTurn, startModelServer, turn } from "../support/model_server.ts";
import { type Sandbox, withModelRoot } from "../support/roots.ts";
import { assertGoodTrace, ofKind, requestMessages } from "../agent/_support.ts";
import { startCollector } from "../support/otlp_collector.ts";
import { decodeSpans, named } from "../telemetry/_otlp.ts";

const NOW = "2026-01-01T05:30:00Z";
const SLOT = "2026-01-01T05:00:00.000Z";

function scheduleDir(root: string): string {
  return join(root, "default_project", "agents", "default_agent", "agent_state", "schedule");
}

/** A task's fields, in the order its file lists them (`start_at` is a TOML datetime). */
interface TaskFields {
  prompt: string;
  enabled?: boolean;
  start_at: string;
  period?: string;
  workspace?: string;
  session_id?: string;
  provider?: string;
  model_id?: string;
}

async function writeTask(root: string, name: string, fields: TaskFields): Promise<void> {
  const lines = Object.entries(fields).map(([k, v]) =>
    `${k} = ${k === "start_at" || typeof v === "boolean" ? v : JSON.stringify(v)}`
  );
  await Deno.mkdir(scheduleDir(root), { recursive: true });
  await Deno.writeTextFile(join(scheduleDir(root), `${name}.toml`), lines.join("\n") + "\n");
}

/** The hourly task `nightly` ("Write the report."), due since midnight, in the sandbox's workspace. */
function writeNightly(sb: Sandbox): Promise<void> {
  return writeTask(sb.root, "nightly", {
    prompt: "Write the report.",
    enabled: true,
    start_at: "2026-01-01T00:00:00Z",
    period: "1h",
    workspace: sb.workspace,
  });
}

/** A root whose default model is a server answering each request from `queue`. */
async function withScheduleRoot(
  body: (
    sb: Sandbox,
    queue: ScriptedTurn[],
    server: Awaited<ReturnType<typeof startModelServer>>,
  ) => Promise<void>,
  onRequest?: () => void,
): Promise<void> {
  const queue: ScriptedTurn[] = [];
  await withModelRoot({
    handler: () => {
      onRequest?.();
      return queue.shift();
    },
    maxRequests: 10,
    maxHoldMs: 60_000,
  }, async (sb, server) => {
    await body(sb, queue, server);
  }, { visible: true });
}

function schedules(root: string, args: string[], now = NOW) {
  return runCli(["--root", root, "schedules", ...args], { env: { PENGUIN_NOW: now } });
}

/** The user text a request sent last. */
function lastUserText(server: Awaited<ReturnType<typeof startModelServer>>, i: number): unknown {
  return requestMessages(server, i).filter((m) => m.role === "user").at(-1)?.content;
}

Deno.test("schedules run --once fires the due slot once, as a schedule session; a second --once at the same clock fires nothing", async () => {
  await withScheduleRoot(async (sb, queue, server) => {
    await writeNightly(sb);
    await writeTask(sb.root, "off", {
      prompt: "Never.",
      start_at: "2026-01-01T00:00:00Z",
      workspace: sb.workspace,
    });
    queue.push(turn.text("Report written."));

    const first = await schedules(sb.root, ["run", "--once"]);
    assert.equal(first.code, 0, first.stderr + first.stdout);
    const fired = new RegExp(
      `^\\S+ fired nightly \\(slot ${SLOT}\\) in session (session-\\S+) \\(workspace ${sb.workspace}\\)$`,
      "m",
    ).exec(first.stdout);
    assert.ok(fired, first.stdout);
    const sid = fired[1]!;
    assert.match(
      first.stdout,
      new RegExp(`^\\S+ finished nightly \\(slot ${SLOT}\\) in session ${sid}: completed$`, "m"),
    );
    assert.doesNotMatch(first.stdout, /\boff\b/, "a disabled task never fires");
    assert.equal(server.requests.length, 1);
    const block =
      `[scheduled_task]\nschedule: nightly\nfired_at: ${SLOT}\n[/scheduled_task]\n\nWrite the report.`;
    assert.equal(lastUserText(server, 0), block);

    // The prompt says truthfully who runs the tasks, where they live, and lists them.
    const system = String(requestMessages(server, 0).find((m) => m.role === "system")?.content);
    assert.ok(system.includes("`penguin schedules run`"), "the prompt names the scheduler");
    assert.ok(system.includes(scheduleDir(sb.root)), "the prompt names the schedule directory");
    assert.match(system, /^- nightly\n- off$/m);
    assert.doesNotMatch(system, /penguin server/);

    const records = await assertGoodTrace(sb.root, sid);
    const meta = records[0]!;
    assert.equal(meta.type, "session_meta");
    assert.equal((meta.payload as { source?: string }).source, "schedule");
    const texts = ofKind(records, "text").filter((t) => t.role === "user");
    assert.deepEqual(texts.map((t) => [t.sender, t.text]), [["server", block]]);

    const second = await schedules(sb.root, ["run", "--once"]);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, "", "the slot's firing is in the traces: nothing fires");
    assert.equal(server.requests.length, 1);

    const list = await schedules(sb.root, ["list", "--json"]);
    assert.equal(list.code, 0, list.stderr);
    const listed = JSON.parse(list.stdout).schedules as Record<string, unknown>[];
    assert.deepEqual(
      listed.map((s) => [s.name, s.enabled, s.next_slot, s.due]),
      [["nightly", true, "2026-01-01T06:00:00.000Z", false], ["off", false, null, false]],
    );

    // An hour later the next slot is due, and fires.
    queue.push(turn.text("Second report."));
    const later = await schedules(sb.root, ["run", "--once"], "2026-01-01T06:10:00Z");
    assert.equal(later.code, 0, later.stderr);
    assert.match(later.stdout, /fired nightly \(slot 2026-01-01T06:00:00\.000Z\)/);
    assert.equal(server.requests.length, 2);
  });
});

Deno.test("schedules list shows each task's next slot and names a broken file with its line", async () => {
  await withScheduleRoot(async (sb, queue) => {
    queue.push(turn.text("ok"));
    await writeTask(sb.root, "hourly", {
      prompt: "x",
      enabled: true,
      start_at: "2026-01-01T00:00:00Z",
      period: "1h",
    });
    await writeTask(sb.root, "later", { prompt: "x", start_at: "2026-02-01T00:00:00Z" });
    await writeTask(sb.root, "broken", {
      prompt: "x",
      start_at: "2026-01-01T00:00:00Z",
      period: "2m",
    });
    const r = await schedules(sb.root, ["list"]);
    assert.equal(r.code, 1, "a broken file is a problem found");
    assert.match(
      r.stderr,
      /^Invalid ".*\/schedule\/broken\.toml": line 3, column 1: period: expected at least 5m, found "2m"$/m,
    );
    const lines = r.stdout.trimEnd().split("\n");
    assert.match(lines[0]!, /^NAME\s+ENABLED\s+PERIOD\s+NEXT\s+RUNS IN$/);
    assert.match(
      lines[1]!,
      new RegExp(`^hourly\\s+yes\\s+1h\\s+${SLOT} \\(due\\)\\s+temporary workspace$`),
    );
    assert.match(
      lines[2]!,
      /^later\s+no\s+once\s+2026-02-01T00:00:00\.000Z\s+temporary workspace$/,
    );
    const once = await schedules(sb.root, ["run", "--once"]);
    assert.equal(once.code, 1, "--once reports the broken file");
    assert.match(
      once.stdout,
      /finished hourly \(slot 2026-01-01T05:00:00\.000Z\) in session \S+: completed/,
    );
    assert.match(once.stderr, /broken\.toml": line 3/);
  });
});

/** Start `penguin schedules run` (the daemon) and read its stdout line by line. */
function startDaemon(root: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...penguinArgv(), "--root", root, "schedules", "run"],
    cwd: REPO,
    env: penguinEnv({ PENGUIN_NOW: NOW }),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const lines: string[] = [];
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  /** Resolve with the first line (seen so far or to come) matching `re`. */
  async function waitLine(re: RegExp): Promise<string> {
    for (;;) {
      const hit = lines.find((l) => re.test(l));
      if (hit !== undefined) return hit;
      const { value, done } = await reader.read();
      if (done) throw new Error(`stdout ended before ${re}:\n${lines.join("\n")}\n${await stderr}`);
      buf += value;
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        lines.push(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
    }
  }
  async function exit(): Promise<{ code: number; lines: string[]; stderr: string }> {
    const status = await child.status;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
    }
    lines.push(...buf.split("\n").filter((l) => l !== ""));
    return { code: status.code, lines, stderr: await stderr };
  }
  return { child, waitLine, exit };
}

Deno.test("the schedules run daemon fires a due task, logs it, reads a new task on SIGHUP, refuses a second scheduler, and exits 0 on SIGTERM", async () => {
  await withScheduleRoot(async (sb, queue, server) => {
    await writeNightly(sb);
    queue.push(turn.text("Report written."));
    const d = startDaemon(sb.root);
    try {
      await d.waitLine(/ started: agent default_agent, tasks in .*\/agent_state\/schedule$/);
      const done = await d.waitLine(
        / finished nightly \(slot 2026-01-01T05:00:00\.000Z\) in session \S+: completed$/,
      );
      const sid = /in session (session-\S+):/.exec(done)![1]!;

      // A task added later is read on SIGHUP (without it, within 30 s).
      queue.push(turn.text("Extra done."));
      await writeTask(sb.root, "extra", {
        prompt: "One more thing.",
        enabled: true,
        start_at: "2026-01-01T05:10:00Z",
        workspace: sb.workspace,
      });
      d.child.kill("SIGHUP");
      await d.waitLine(
        / finished extra \(slot 2026-01-01T05:10:00\.000Z\) in session \S+: completed$/,
      );

      const second = await schedules(sb.root, ["run", "--once"]);
      assert.equal(second.code, 1);
      assert.match(
        second.stderr,
        /Cannot start the scheduler of agent default_agent: another "penguin schedules run" serves it/,
      );

      d.child.kill("SIGTERM");
      const r = await d.exit();
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.lines.at(-1)!, / stopped$/);
      assert.equal(r.lines.filter((l) => / fired /.test(l)).length, 2, r.lines.join("\n"));
      assert.equal(server.requests.length, 2);
      const records = await assertGoodTrace(sb.root, sid);
      assert.equal((records[0]!.payload as { source?: string }).source, "schedule");
    } finally {
      try {
        d.child.kill("SIGKILL");
      } catch {
        // already exited
      }
    }
  });
});

Deno.test("SIGINT while a scheduled task runs aborts it with an abort record, exit 0; a restarted scheduler does not fire that slot again", async () => {
  let requested: () => void = () => {};
  const requestSeen = new Promise<void>((resolve) => (requested = resolve));
  await withScheduleRoot(async (sb, queue, server) => {
    await writeTask(sb.root, "nightly", {
      prompt: "Tell a long story.",
      enabled: true,
      start_at: "2026-01-01T05:00:00Z",
      workspace: sb.workspace,
    });
    queue.push({ ...turn.text("Once upon a time, in a land far away"), chunk: 4, stall_after: 3 });
    const d = startDaemon(sb.root);
    try {
      const fired = await d.waitLine(
        / fired nightly \(slot 2026-01-01T05:00:00\.000Z\) in session \S+/,
      );
      const sid = /in session (session-\S+)/.exec(fired)![1]!;
      await requestSeen;
      d.child.kill("SIGINT");
      const r = await d.exit();
      assert.equal(r.code, 0, r.stderr);
      assert.ok(
        r.lines.some((l) => / stopping: 1 running task\(s\) are aborted$/.test(l)),
        r.lines.join("\n"),
      );
      assert.ok(
        r.lines.some((l) =>
          l.endsWith(`finished nightly (slot 2026-01-01T05:00:00.000Z) in session ${sid}: aborted`)
        ),
        r.lines.join("\n"),
      );
      const records = await assertGoodTrace(sb.root, sid);
      assert.deepEqual(ofKind(records, "abort").map((a) => a.reason), ["aborted by user"]);

      const again = await schedules(sb.root, ["run", "--once"]);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stdout, "", "the aborted slot is not fired again");
      assert.equal(server.requests.length, 1);
    } finally {
      try {
        d.child.kill("SIGKILL");
      } catch {
        // already exited
      }
    }
  }, () => requested());
});

Deno.test("a task bound to a session continues it: the firing is appended to that session's trace, once", async () => {
  await withScheduleRoot(async (sb, queue, server) => {
    queue.push(turn.text("Hello."));
    const first = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "hi"]);
    assert.equal(first.code, 0, first.stderr);
    const sid = /^Session: (session-\S+)$/m.exec(first.stderr)![1]!;
    await writeTask(sb.root, "follow-up", {
      prompt: "Check again.",
      enabled: true,
      start_at: "2026-01-01T05:00:00Z",
      session_id: sid,
    });
    queue.push(turn.text("Checked."));
    const r = await schedules(sb.root, ["run", "--once"]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, new RegExp(`fired follow-up \\(slot ${SLOT}\\) in session ${sid} `));
    const history = requestMessages(server, 1).filter((m) => m.role !== "system");
    assert.deepEqual(
      history.map((m) => m.role),
      ["user", "assistant", "user"],
      "the session's history is sent",
    );
    const records = await assertGoodTrace(sb.root, sid);
    assert.equal(
      (records[0]!.payload as { source?: string }).source,
      undefined,
      "still the user's session",
    );
    const texts = ofKind(records, "text").filter((t) => t.role === "user");
    assert.deepEqual(texts.map((t) => t.sender ?? "user"), ["user", "server"]);
    assert.match(String(texts[1]!.text), /^\[scheduled_task\]\nschedule: follow-up\n/);

    const again = await schedules(sb.root, ["run", "--once"]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, "");
    assert.equal(server.requests.length, 2);
  });
});

Deno.test("a task's model pair is used as written: an unknown pair fails the firing, nothing else is tried", async () => {
  await withScheduleRoot(async (sb, _queue, server) => {
    await writeTask(sb.root, "other-model", {
      prompt: "x",
      enabled: true,
      start_at: "2026-01-01T05:00:00Z",
      provider: "custom",
      model_id: "not-configured",
    });
    const r = await schedules(sb.root, ["run", "--once"]);
    assert.equal(r.code, 1, r.stdout);
    assert.match(
      r.stdout,
      new RegExp(`^\\S+ failed other-model \\(slot ${SLOT}\\): .*not-configured`, "m"),
    );
    assert.equal(server.requests.length, 0, "the default model is not tried instead");
  });
});

Deno.test("schedules run exports a firing's spans live when a collector is configured", async () => {
  const collector = startCollector();
  try {
    await withScheduleRoot(async (sb, queue) => {
      await writeNightly(sb);
      queue.push(turn.text("Report written."));
      const r = await runCli(["--root", sb.root, "schedules", "run", "--once"], {
        env: { PENGUIN_NOW: NOW, OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint },
      });
      assert.equal(r.code, 0, r.stderr + r.stdout);
      const sid = / in session (session-\S+) /.exec(r.stdout)?.[1];
      assert.ok(sid, r.stdout);
      // The firing flushed before the scheduler exited.
      const spans = decodeSpans(...collector.received.map((x) => x.body));
      const roots = spans.filter((s) => !s.parentSpanId);
      assert.equal(roots.length, 1);
      assert.equal(roots[0]!.attrs["gen_ai.conversation.id"], sid);
      assert.equal(named(spans, "chat ").length, 1);
    });
  } finally {
    await collector.close();
  }
});
