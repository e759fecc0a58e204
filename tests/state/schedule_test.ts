// Scheduled task files (parsing, errors with file and line), their slots
// (pure), and the [scheduled_task] record the traces keep of a firing.
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadSchedules, parseScheduledTask } from "../../lib/state/schedule.ts";
import { dueSlot, lastSlot, nextSlot } from "../../lib/state/schedule_slots.ts";
import {
  firedSlots,
  parseScheduledTaskText,
  scheduledTaskText,
  slotKey,
} from "../../lib/session/scheduled_firings.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";

const F = "/x/schedule/nightly.toml";

function parseError(text: string, name = "nightly"): string {
  try {
    parseScheduledTask(text, F, name);
  } catch (err) {
    assert.ok(err instanceof PenguinError, String(err));
    assert.equal(err.kind, "config");
    return err.message;
  }
  assert.fail(`expected an error for:\n${text}`);
}

Deno.test("a full task file parses: TOML date-times, ISO strings, period, model pair", () => {
  const t = parseScheduledTask(
    [
      'prompt = "Write the report"',
      "enabled = true",
      "start_at = 2026-01-01T06:00:00Z",
      'period = "6h"',
      'end_at = "2026-02-01T06:00:00+01:00"',
      'workspace = "/srv/reports"',
      'provider = "deepseek"',
      'model_id = "deepseek-v4-flash"',
    ].join("\n"),
    F,
    "nightly",
  );
  assert.equal(t.name, "nightly");
  assert.equal(t.prompt, "Write the report");
  assert.equal(t.enabled, true);
  assert.equal(t.startAt.toISOString(), "2026-01-01T06:00:00.000Z");
  assert.equal(t.periodMs, 6 * 3_600_000);
  assert.equal(t.endAt?.toISOString(), "2026-02-01T05:00:00.000Z");
  assert.equal(t.workspace, "/srv/reports");
  assert.deepEqual(t.model, { provider: "deepseek", modelId: "deepseek-v4-flash" });
  assert.equal(t.sessionId, undefined);
});

Deno.test("a minimal task is disabled and one-shot; a local TOML date-time is local time", () => {
  const t = parseScheduledTask('prompt = "x"\nstart_at = 2026-03-04T05:06:07', F, "once");
  assert.equal(t.enabled, false);
  assert.equal(t.periodMs, undefined);
  assert.equal(t.startAt.getTime(), new Date(2026, 2, 4, 5, 6, 7).getTime());
});

Deno.test("task file errors name the file and the line", () => {
  const cases: [string, RegExp][] = [
    [
      'prompt = "x"\nstart_at = 2026-01-01T00:00:00Z\nenable = true',
      /line 3, column 1: enable: unknown key/,
    ],
    [
      "enabled = true\nstart_at = 2026-01-01T00:00:00Z",
      /prompt: expected a non-empty string, found nothing/,
    ],
    [
      'prompt = "  "\nstart_at = 2026-01-01T00:00:00Z',
      /line 1, column 1: prompt: expected a non-empty string/,
    ],
    ['prompt = "x"', /start_at: expected an ISO-8601 time/],
    [
      'prompt = "x"\nstart_at = "tomorrow"',
      /line 2, column 1: start_at: expected an ISO-8601 time.*found "tomorrow"/,
    ],
    [
      'prompt = "x"\nstart_at = 2026-01-01',
      /line 2, column 1: start_at: expected an ISO-8601 time/,
    ],
    [
      'prompt = "x"\nstart_at = "2026-01-01T00:00:00"',
      /start_at: expected an ISO-8601 time with a zone/,
    ],
    [
      'prompt = "x"\nstart_at = 2026-01-01T00:00:00Z\nperiod = "4m"',
      /line 3, column 1: period: expected at least 5m/,
    ],
    [
      'prompt = "x"\nstart_at = 2026-01-01T00:00:00Z\nperiod = "1w"',
      /line 3, column 1: period: expected a period such as 30m, 6h or 1d/,
    ],
    [
      'prompt = "x"\nstart_at = 2026-01-01T00:00:00Z\nenabled = "yes"',
      /line 3, column 1: enabled: expected true or false, found "yes"/,
    ],
    [
      'prompt = "x"\nstart_at = 2026-01-01T00:00:00Z\nend_at = 2026-01-01T00:00:00Z',
      /line 3, column 1: end_at: expected a time after start_at/,
    ],
    [
      'prompt = "x"\nstart_at = 2026-01-01T00:00:00Z\nprovider = "deepseek"',
      /line 3, column 1: provider: expected provider and model_id together/,
    ],
    [
      'prompt = "x"\nstart_at = 2026-01-01T00:00:00Z\nsession_id = "s"\nworkspace = "/w"',
      /line 4, column 1: workspace: expected no workspace with session_id/,
    ],
    [
      'prompt = "x"\nstart_at = 2026-01-01T00:00:00Z\nworkspace = "rel/dir"',
      /line 3, column 1: workspace: expected an absolute path/,
    ],
    [
      'prompt = "x\nstart_at = 2026-01-01T00:00:00Z',
      /^Cannot parse "\/x\/schedule\/nightly\.toml": line 1, column \d+: /,
    ],
  ];
  for (const [text, want] of cases) {
    const msg = parseError(text);
    assert.match(msg, want, `for:\n${text}`);
    assert.ok(msg.includes(JSON.stringify(F)), `the file is named: ${msg}`);
  }
  assert.match(
    parseError('prompt = "x"\nstart_at = 2026-01-01T00:00:00Z', "bad name"),
    /the task name "bad name" may only use letters, digits, _ and -/,
  );
});

Deno.test("loadSchedules reads every <name>.toml, reports broken files and keeps the others", async () => {
  const dir = await Deno.makeTempDir({ prefix: "penguin-schedule-" });
  try {
    assert.deepEqual(await loadSchedules(join(dir, "missing")), { tasks: [], errors: [] });
    await Deno.writeTextFile(join(dir, "b.toml"), 'prompt = "b"\nstart_at = 2026-01-01T00:00:00Z');
    await Deno.writeTextFile(join(dir, "a.toml"), 'prompt = "a"\nstart_at = 2026-01-01T00:00:00Z');
    await Deno.writeTextFile(join(dir, "broken.toml"), "prompt = ");
    await Deno.writeTextFile(join(dir, "notes.txt"), "not a task");
    await Deno.writeTextFile(join(dir, ".hidden.toml"), "junk");
    const { tasks, errors } = await loadSchedules(dir);
    assert.deepEqual(tasks.map((t) => t.name), ["a", "b"]);
    assert.equal(errors.length, 1);
    assert.match(errors[0]!.message, /^Cannot parse ".*broken\.toml": line 1, column \d+: /);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const at = (iso: string) => new Date(iso);
const HOUR = 3_600_000;

/** The slot `fn` finds for `task` at `now`, as an ISO string (undefined: none). */
function slotAt(
  fn: typeof lastSlot,
  task: Parameters<typeof lastSlot>[0],
  now: string,
): string | undefined {
  return fn(task, at(now))?.toISOString();
}

Deno.test("slots: the latest at or before now, the next after it, within start_at and end_at", () => {
  const periodic = { startAt: at("2026-01-01T00:00:00Z"), periodMs: HOUR };
  assert.equal(slotAt(lastSlot, periodic, "2025-12-31T23:59:59Z"), undefined);
  assert.equal(slotAt(nextSlot, periodic, "2025-12-31T23:59:59Z"), "2026-01-01T00:00:00.000Z");
  assert.equal(slotAt(lastSlot, periodic, "2026-01-01T00:00:00Z"), "2026-01-01T00:00:00.000Z");
  assert.equal(slotAt(lastSlot, periodic, "2026-01-01T05:59:59Z"), "2026-01-01T05:00:00.000Z");
  assert.equal(slotAt(nextSlot, periodic, "2026-01-01T05:00:00Z"), "2026-01-01T06:00:00.000Z");

  const bounded = { ...periodic, endAt: at("2026-01-01T02:30:00Z") };
  assert.equal(slotAt(lastSlot, bounded, "2026-01-02T00:00:00Z"), "2026-01-01T02:00:00.000Z");
  assert.equal(slotAt(nextSlot, bounded, "2026-01-01T02:00:00Z"), undefined);
  assert.equal(slotAt(nextSlot, bounded, "2026-01-01T01:10:00Z"), "2026-01-01T02:00:00.000Z");

  const once = { startAt: at("2026-01-01T00:00:00Z") };
  assert.equal(slotAt(nextSlot, once, "2025-01-01T00:00:00Z"), "2026-01-01T00:00:00.000Z");
  assert.equal(slotAt(lastSlot, once, "2027-01-01T00:00:00Z"), "2026-01-01T00:00:00.000Z");
  assert.equal(slotAt(nextSlot, once, "2026-01-01T00:00:00Z"), undefined);
});

Deno.test("due slot: only the latest missed slot, once, and never for a disabled task", () => {
  const task = { enabled: true, startAt: at("2026-01-01T00:00:00Z"), periodMs: HOUR };
  const fired = new Set<number>();
  const hasFired = (s: Date) => fired.has(s.getTime());
  const now = at("2026-01-01T07:30:00Z");
  const due = dueSlot(task, now, hasFired);
  assert.equal(
    due?.toISOString(),
    "2026-01-01T07:00:00.000Z",
    "seven missed slots: the latest fires",
  );
  fired.add(due!.getTime());
  assert.equal(dueSlot(task, now, hasFired), undefined, "a fired slot is not due again");
  assert.equal(
    dueSlot(task, at("2026-01-01T08:00:00Z"), hasFired)?.toISOString(),
    "2026-01-01T08:00:00.000Z",
  );
  assert.equal(dueSlot({ ...task, enabled: false }, now, () => false), undefined);
  assert.equal(dueSlot(task, at("2025-12-31T00:00:00Z"), () => false), undefined);
});

Deno.test("the [scheduled_task] text names the task and slot and parses back", () => {
  const slot = at("2026-01-01T07:00:00Z");
  const text = scheduledTaskText("nightly", slot, "Write the report");
  assert.equal(
    text,
    "[scheduled_task]\nschedule: nightly\nfired_at: 2026-01-01T07:00:00.000Z\n[/scheduled_task]\n\nWrite the report",
  );
  assert.deepEqual(parseScheduledTaskText(text), { schedule: "nightly", slot });
  assert.deepEqual(
    parseScheduledTaskText(
      "<scheduled_task>\nschedule: a\nfired_at: 2026-01-01T07:00:00Z\n</scheduled_task>\n\nx",
    ),
    { schedule: "a", slot },
  );
  assert.equal(parseScheduledTaskText("Write the report"), undefined);
  assert.equal(
    parseScheduledTaskText("[scheduled_task]\nschedule: a\n[/scheduled_task]"),
    undefined,
  );
});

Deno.test("firedSlots reads server-sent [scheduled_task] texts from trace files, and only those", async () => {
  const traces = await Deno.makeTempDir({ prefix: "penguin-fired-" });
  try {
    const day = join(traces, "2026-01-01");
    await Deno.mkdir(day);
    const slot = at("2026-01-01T07:00:00Z");
    const rec = (payload: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      JSON.stringify({
        timestamp: "2026-01-01T07:00:01.000Z",
        type: "model_msg",
        payload,
        ...extra,
      });
    const text = (t: string, sender?: string) => ({
      type: "text",
      role: "user",
      text: t,
      stop_reason: "completed",
      ...(sender ? { sender } : {}),
    });
    await Deno.writeTextFile(
      join(day, "session-2026-01-01-07-00-01-aaaaaaaa_001.jsonl"),
      [
        rec(text(scheduledTaskText("nightly", slot, "x"), "server")),
        rec(text(scheduledTaskText("typed-by-user", slot, "x"))),
        rec(text(scheduledTaskText("from-child", slot, "x"), "server"), { origin: ["c"] }),
        "{torn",
      ].join("\n"),
    );
    await Deno.writeTextFile(
      join(day, "notes.jsonl"),
      rec(text(scheduledTaskText("other", slot, "x"), "server")),
    );
    assert.deepEqual([...await firedSlots(traces)], [slotKey("nightly", slot)]);
    assert.deepEqual(
      [...await firedSlots(traces, new Date(Date.now() + 3_600_000))],
      [],
      "older files are skipped",
    );
    assert.deepEqual([...await firedSlots(join(traces, "missing"))], []);
  } finally {
    await Deno.remove(traces, { recursive: true });
  }
});
