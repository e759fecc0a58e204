// exec_command under the real sandbox: verdicts, windows, workdir, environment, abort, spawn errors.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  ABORTED_NOTE,
  BUILTIN_TOOL_LIMITS,
  clampYield,
  DEFAULT_TOOL_DEFINITIONS,
  EXEC_COMMAND_DEFINITION,
  READ_IMAGE_DEFINITION,
  toolSpec,
} from "../../lib/tools/mod.ts";
import { abortOnceRunning, call, procId, withSession } from "./_command_helpers.ts";
import { eventually, pidsWithArg, uniqueSleep } from "./_process_probes.ts";

/** A foreground command and how it ends: its status and whole output. */
interface Ending {
  name: string;
  description: string;
  cmd: string;
  status: string;
  output: string;
}

const ENDINGS: Ending[] = [
  {
    name: "exec_command returns a foreground command's merged output and completes on exit 0",
    description: "print two lines",
    cmd: "echo out; echo err >&2; echo last",
    status: "completed",
    output: "out\nerr\nlast\n",
  },
  {
    name: "a command without output completes with [no output]",
    description: "nothing",
    cmd: "true",
    status: "completed",
    output: "[no output]",
  },
  {
    name: "a failing command ends failed with its output and [exit code: 2]",
    description: "fail",
    cmd: "echo 'ls: cannot access x' >&2; exit 2",
    status: "failed",
    output: "ls: cannot access x\n\n[exit code: 2]",
  },
  {
    name: "a command killed by a signal ends failed with [terminated by signal SIGKILL]",
    description: "die",
    cmd: "kill -KILL $$",
    status: "failed",
    output: "[terminated by signal SIGKILL]",
  },
];

for (const e of ENDINGS) {
  Deno.test(e.name, async () => {
    await withSession(async ({ ctx }) => {
      const r = await call(ctx, "exec_command", { description: e.description, cmd: e.cmd });
      assert.deepEqual([r.status, r.output], [e.status, e.output]);
    });
  });
}

Deno.test("a command that outlives its window becomes proc-… and input_command polls it to the end", async () => {
  await withSession(async ({ ctx, ws, processes }) => {
    const first = await call(ctx, "exec_command", {
      description: "wait for go",
      cmd: "echo first; while [ ! -e go ]; do sleep 0.05; done; echo second; exit 4",
      yield_time_ms: 250,
    });
    assert.equal(first.status, "completed");
    const id = procId(first.output);
    assert.match(id, /^proc-[0-9a-f]{8}$/);
    assert.ok(
      first.output.endsWith(
        `[process running with process_id ${id}; use input_command to send input or poll for output]`,
      ),
    );
    assert.deepEqual(processes.ids(), [id]);

    await Deno.writeTextFile(join(ws, "go"), "");
    let seen = first.output.startsWith("first\n") ? "first\n" : "";
    let last = "";
    for (let i = 0; i < 20 && !last.includes("[exit code"); i++) {
      const r = await call(ctx, "input_command", { description: "poll", process_id: id });
      last = r.output;
      seen += r.output;
      if (r.output.includes("[exit code")) assert.equal(r.status, "failed");
    }
    assert.ok(last.endsWith("[exit code: 4]"), last);
    assert.match(seen, /first\n[\s\S]*second\n/);
    assert.deepEqual(processes.ids(), [], "an exited session is removed once reported");
  });
});

Deno.test("the yield window is max(arg|default, 250) capped 1 s below the timeout", () => {
  assert.equal(clampYield(undefined, 60_000, 120_000), 60_000);
  assert.equal(clampYield(10, 60_000, 120_000), 250);
  assert.equal(clampYield(-5, 60_000, 120_000), 250);
  assert.equal(clampYield(500_000, 60_000, 120_000), 119_000);
  assert.equal(clampYield(500_000, 60_000, 0), 500_000, "no cap without a timeout");
  assert.equal(clampYield(undefined, 120_000, 130_000), 120_000);
});

Deno.test("workdir resolves inside the workspace and is refused outside it", async () => {
  await withSession(async ({ ctx, ws }) => {
    await Deno.mkdir(join(ws, "sub"));
    const inside = await call(ctx, "exec_command", {
      description: "pwd",
      cmd: "pwd",
      workdir: "sub",
    });
    assert.deepEqual([inside.status, inside.output], ["completed", `${join(ws, "sub")}\n`]);

    const outside = await call(ctx, "exec_command", {
      description: "escape",
      cmd: "touch ran",
      workdir: "..",
    });
    assert.equal(outside.status, "failed");
    assert.match(outside.output, /^exec_command was not run: cannot use workdir "\.\."/);
    const missing = await call(ctx, "exec_command", {
      description: "missing",
      cmd: "touch ran",
      workdir: "nope",
    });
    assert.equal(missing.status, "failed");
    assert.match(missing.output, /does not exist/);
    await assert.rejects(Deno.stat(join(ws, "ran")), Deno.errors.NotFound);
    await assert.rejects(Deno.stat(join(ws, "..", "ran")), Deno.errors.NotFound);
  });
});

Deno.test("the child environment drops API keys and PENGUIN_* and carries the vault (masked in the output)", async () => {
  const planted = {
    OPENAI_API_KEY: "sk-host-secret",
    SOME_VENDOR_API_KEY: "host-secret-2",
    PENGUIN_HOME: "/host/penguin",
  };
  // The host environment is given to the policy, not planted in this process's: test modules run
  // in one process under `deno test --parallel`, and penguin subprocesses other modules start
  // would inherit it.
  await withSession(
    async ({ ctx }) => {
      const r = await call(ctx, "exec_command", {
        description: "env",
        cmd: 'env; [ "$SHARED" = "context wins" ] && [ "$VAULT_FROM_CONTEXT" = c-value ] && ' +
          '[ "$VAULT_FROM_POLICY" = p-value ] && echo vault-values-ok',
      });
      assert.equal(r.status, "completed");
      const env = new Map(
        r.output.split("\n").filter((l) => l.includes("=")).map((l) => {
          const at = l.indexOf("=");
          return [l.slice(0, at), l.slice(at + 1)] as const;
        }),
      );
      for (const name of env.keys()) {
        assert.ok(!/_API_KEY$/i.test(name), `${name} leaked`);
        assert.ok(!/^PENGUIN_/i.test(name), `${name} leaked`);
      }
      assert.ok(!r.output.includes("host-secret"));
      // The values reach the child; the output shows their markers, never the values.
      assert.match(r.output, /^vault-values-ok$/m);
      assert.equal(env.get("VAULT_FROM_POLICY"), "[redacted:vault:VAULT_FROM_POLICY]");
      assert.equal(env.get("VAULT_FROM_CONTEXT"), "[redacted:vault:VAULT_FROM_CONTEXT]");
      assert.equal(env.get("SHARED"), "[redacted:vault:SHARED]");
      assert.ok(!/p-value|c-value|context wins/.test(r.output));
      assert.equal(env.get("TERM"), "dumb");
    },
    {
      policy: {
        env: {
          host: { ...Deno.env.toObject(), ...planted },
          allow: [],
          vault: { VAULT_FROM_POLICY: "p-value", SHARED: "policy" },
        },
      },
      vault: { VAULT_FROM_CONTEXT: "c-value", SHARED: "context wins" },
    },
  );
});

Deno.test("an abort during the window kills the command", async () => {
  await withSession(async ({ ctx, processes }) => {
    const nap = uniqueSleep();
    const r = await abortOnceRunning(ctx, `echo started; sleep ${nap}`, nap);
    assert.equal(r.status, "aborted");
    assert.equal(r.output, `started\n\n${ABORTED_NOTE}`);
    assert.equal(processes.size, 0);
    assert.ok(
      await eventually(() => pidsWithArg(nap).length === 0),
      "the sleep survived the abort",
    );
  });
});

Deno.test("an unusable sandbox fails the call with [spawn error: …] and runs nothing", async () => {
  await withSession(async ({ ctx, ws, processes }) => {
    for (const background of [false, true]) {
      const r = await call(ctx, "exec_command", {
        description: "try",
        cmd: "touch ran",
        run_in_background: background,
      });
      assert.equal(r.status, "failed");
      assert.match(
        r.output,
        /^\[spawn error: Cannot run "touch ran" \(sandbox workspace-write\): /,
      );
      assert.match(r.output, /bubblewrap/);
      assert.match(r.output, /--sandbox off/);
      assert.ok(r.output.endsWith("]"));
    }
    await assert.rejects(Deno.stat(join(ws, "ran")), Deno.errors.NotFound);
    assert.equal(processes.size, 0);
    assert.equal(processes.pendingNotices, 0);
  }, { policy: { bwrapPath: "/nonexistent/penguin-test/bwrap" } });
});

Deno.test("without a process registry a command cannot outlive its window", async () => {
  await withSession(async ({ ctx }) => {
    const nap = uniqueSleep();
    const { processes: _none, ...bare } = ctx;
    const r = await call(bare, "exec_command", {
      description: "long",
      cmd: `sleep ${nap}`,
      yield_time_ms: 250,
    });
    assert.equal(r.status, "failed");
    assert.match(r.output, /^\[process killed at the end of its 250 ms window/);
    assert.ok(await eventually(() => pidsWithArg(nap).length === 0));
    const bg = await call(bare, "exec_command", {
      description: "bg",
      cmd: "true",
      run_in_background: true,
    });
    assert.equal(bg.status, "failed");
  });
});

Deno.test("bad arguments are explained without running anything", async () => {
  await withSession(async ({ ctx }) => {
    const r = await call(ctx, "exec_command", { description: "x", command: "ls" });
    assert.equal(r.status, "failed");
    assert.match(r.output, /required argument "cmd" is missing/);
    const y = await call(ctx, "exec_command", { cmd: "true", yield_time_ms: "soon" });
    assert.equal(y.status, "failed");
    assert.match(y.output, /"yield_time_ms"/);
  });
});

Deno.test("the command and image tools are built in with their default limits", () => {
  const names = DEFAULT_TOOL_DEFINITIONS.map((d) => d.name);
  for (const n of ["exec_command", "input_command", "kill_command", "read_image"]) {
    assert.ok(names.includes(n), n);
  }
  assert.deepEqual(BUILTIN_TOOL_LIMITS.exec_command, {
    permission: "rw",
    timeoutMs: 120000,
    maxOutputLength: 16000,
    callDescription: true,
  });
  assert.equal(BUILTIN_TOOL_LIMITS.input_command!.timeoutMs, 130000);
  assert.equal(BUILTIN_TOOL_LIMITS.kill_command!.timeoutMs, 30000);
  assert.deepEqual(
    [
      READ_IMAGE_DEFINITION.permission,
      READ_IMAGE_DEFINITION.timeoutMs,
      READ_IMAGE_DEFINITION.forModel,
    ],
    ["r", 60000, "vision"],
  );
  const spec = toolSpec(EXEC_COMMAND_DEFINITION).parameters as {
    required: string[];
    properties: Record<string, unknown>;
  };
  assert.deepEqual(spec.required, ["description", "cmd"]);
  assert.deepEqual(Object.keys(spec.properties), [
    "description",
    "cmd",
    "workdir",
    "yield_time_ms",
    "run_in_background",
  ]);
});
