// The spawn handle: output, input, exit status, signals and kill, in both sandboxed and off mode.
import assert from "node:assert/strict";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { resolvePlan, type SandboxMode, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { _pinLaunch } from "../../lib/sandbox/spawn.ts";
import { _pinBudget } from "../../lib/sandbox/_process_budget.ts";
import {
  alive,
  collect,
  eventually,
  exists,
  pidsWithArg,
  readUntil,
  withPolicyWorkspace,
} from "./_helpers.ts";

const MODES: SandboxMode[] = ["workspace-write", "off"];

// This process's budget alone: the fork bombs below need a command's whole limit (2048), which
// the machine's budget, shared with every other penguin running here, may not give them (a
// smaller share is a guard that kills the bomb before the test counts it).
_pinBudget(8192);

/**
 * Each way a command can start: workspace-write on the direct path (bwrap as penguin's child) and
 * on the supervised one, and off. The launch is pinned for the iteration's body only.
 */
function* launches(): Generator<SandboxMode> {
  for (
    const [mode, direct] of [["workspace-write", true], ["workspace-write", false], [
      "off",
      true,
    ]] as const
  ) {
    _pinLaunch(direct ? {} : { direct: false });
    try {
      yield mode;
    } finally {
      _pinLaunch({});
    }
  }
}

/** Both bubblewrap launches, direct and supervised, pinned for the iteration's body. */
function* bwrapLaunches(): Generator<string> {
  for (const direct of [true, false]) {
    _pinLaunch({ direct });
    try {
      yield direct ? "direct" : "supervised";
    } finally {
      _pinLaunch({});
    }
  }
}

Deno.test("stdout and stderr arrive merged in order, and the exit code comes back", async () => {
  await withPolicyWorkspace(async (policy) => {
    for (const mode of MODES) {
      const r = await collect(
        await spawnSandboxed({
          shell: "echo a; echo b >&2; echo c; exit 7",
          policy: { ...policy, mode },
        }),
      );
      assert.equal(r.out, "a\nb\nc\n", mode);
      assert.deepEqual([r.code, r.signal], [7, null], mode);
    }
  });
});

Deno.test("argv runs without a shell, one argument per entry", async () => {
  await withPolicyWorkspace(async (policy) => {
    for (const mode of MODES) {
      const r = await collect(
        await spawnSandboxed({
          argv: ["printf", "[%s]", "a b", "$HOME", "'q'"],
          policy: { ...policy, mode },
        }),
      );
      assert.equal(r.out, "[a b][$HOME]['q']", mode);
    }
  });
});

Deno.test("write() feeds stdin and closeStdin() ends it", async () => {
  await withPolicyWorkspace(async (policy) => {
    for (const mode of MODES) {
      const child = await spawnSandboxed({
        shell: 'read -r l; echo "got $l"; cat; echo end',
        policy: { ...policy, mode },
      });
      assert.equal(await child.write("hello\n"), true);
      assert.match(await readUntil(child, "got hello"), /got hello/);
      await child.write("more\n");
      await child.closeStdin();
      const rest = await collect(child);
      assert.equal(rest.out, "more\nend\n", mode);
      assert.equal(await child.write("late"), false);
    }
  });
});

Deno.test("onOutput receives every chunk and outputClosed resolves at end of output", async () => {
  await withPolicyWorkspace(async (policy) => {
    let text = "";
    const child = await spawnSandboxed({
      shell: "for i in 1 2 3; do echo line$i; done",
      policy,
      onOutput: (t) => text += t,
    });
    await child.status;
    await child.outputClosed;
    assert.equal(text, "line1\nline2\nline3\n");
  });
});

Deno.test("a command killed by a signal reports the signal", async () => {
  await withPolicyWorkspace(async (policy) => {
    for (const mode of launches()) {
      const r = await collect(
        await spawnSandboxed({ shell: "kill -TERM $$", policy: { ...policy, mode } }),
      );
      assert.deepEqual([r.code, r.signal], [143, "SIGTERM"], mode);
    }
  });
});

Deno.test("a command killed by a signal leaves no job report of the sandbox in its output", async () => {
  await withPolicyWorkspace(async (policy) => {
    for (const mode of MODES) {
      const r = await collect(
        await spawnSandboxed({ shell: "echo before; kill -TERM $$", policy: { ...policy, mode } }),
      );
      assert.equal(r.out, "before\n", mode);
    }
  });
});

Deno.test("the command's environment is the plan's, with nothing of the supervisor's", async () => {
  await withPolicyWorkspace(async (policy) => {
    const withVault = { ...policy, env: { ...policy.env, vault: { MY_TOKEN: "a b=c\nd" } } };
    const r = await collect(
      await spawnSandboxed({ argv: ["bash", "-c", "env -0"], policy: withVault }),
    );
    const env = new Map(
      r.out.split("\0").filter((e) => e).map((
        e,
      ) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]),
    );
    assert.equal(env.get("MY_TOKEN"), "a b=c\nd");
    assert.equal(env.get("TERM"), "dumb");
    const stray = [...env.keys()].filter((k) => k.startsWith("__PS"));
    assert.deepEqual(stray, []);
    // Only what bash itself adds (PWD, SHLVL, _) on top of the plan's variables.
    const plan = await resolvePlan(withVault, withVault.workspace);
    const extra = [...env.keys()].filter((k) => !(k in plan.env)).sort();
    assert.deepEqual(extra.filter((k) => !["PWD", "SHLVL", "_", "OLDPWD"].includes(k)), []);
  });
});

Deno.test("under bubblewrap the sandbox's init is the wrapper and the command its child", async () => {
  await withPolicyWorkspace(async (policy) => {
    const r = await collect(
      await spawnSandboxed({ argv: ["bash", "-c", 'echo "$$ $PPID"'], policy }),
    );
    // The command is the init's child.
    assert.match(r.out, /^\d+ 1\n$/);
  });
});

Deno.test("a command that never ends fails the test's collect with its output, and is killed", async () => {
  await withPolicyWorkspace(async (policy) => {
    const tag = `1000.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
    const child = await spawnSandboxed({
      shell: `echo started; sleep ${tag}`,
      policy: { ...policy, mode: "off" },
    });
    await assert.rejects(
      () => collect(child, 300),
      /did not end within 0\.3 s and was killed; its output: "started\\n"/,
    );
    assert.ok(await eventually(() => pidsWithArg(tag).length === 0), "the sleep is gone");
  });
});

/** Signals a command traps itself: the trap prints `said` and exits `code`. */
const TRAPPED: { signal: "SIGINT" | "SIGQUIT"; trap: string; said: RegExp; code: number }[] = [
  { signal: "SIGINT", trap: "trap 'echo caught; exit 5' INT", said: /caught/, code: 5 },
  { signal: "SIGQUIT", trap: "trap 'echo quit; exit 6' QUIT", said: /quit/, code: 6 },
];

for (const t of TRAPPED) {
  Deno.test(`signal(${t.signal}) reaches the command's own trap`, async () => {
    await withPolicyWorkspace(async (policy) => {
      for (const mode of launches()) {
        const child = await spawnSandboxed({
          shell: `${t.trap}; echo ready; while :; do sleep 0.05; done`,
          policy: { ...policy, mode },
        });
        await readUntil(child, "ready");
        child.signal(t.signal);
        const r = await collect(child);
        assert.match(r.out, t.said, mode);
        assert.equal(r.code, t.code, mode);
      }
    });
  });
}

// A supervisor forwards from a bash trap run while `wait` blocks; under load one forwarded signal
// in a few thousand never arrived. Penguin signals the command's group itself: a stopped
// supervisor, which runs no trap at all, shows the signal does not go through it.
Deno.test("on the supervised path a signal reaches the command while its supervisor is stopped", async () => {
  _pinLaunch({ direct: false });
  try {
    await withPolicyWorkspace(async (policy) => {
      for (const mode of MODES) {
        const child = await spawnSandboxed({
          shell: "trap 'echo caught; exit 5' INT; echo ready; while :; do sleep 0.05; done",
          policy: { ...policy, mode },
        });
        await readUntil(child, "ready");
        Deno.kill(child.pid, "SIGSTOP");
        let stopped = true;
        const resume = () => {
          if (stopped) Deno.kill(child.pid, "SIGCONT");
          stopped = false;
        };
        // Bounded only for a failure: without the fix nothing arrives until the supervisor runs.
        const limit = setTimeout(resume, 60_000);
        try {
          child.signal("SIGINT");
          const said = await readUntil(child, "caught");
          assert.ok(stopped, `${mode}: the command's trap ran only once the supervisor ran again`);
          assert.match(said, /caught/, mode);
        } finally {
          clearTimeout(limit);
          resume();
        }
        const r = await collect(child);
        assert.equal(r.code, 5, mode);
      }
    });
  } finally {
    _pinLaunch({});
  }
});

// Repeated: a terminal signal that lands while the command exits must not cost its exit status
// (bash loses the status of a child reaped while a trapped signal arrives; the supervisor ignores
// these signals instead of trapping them). One round showed the loss about once in twenty.
// The supervised path (penguin's direct child is the supervisor, in penguin's process group): the
// direct path's own terminal test is in terminal_test.ts, under a real pseudo-terminal.
Deno.test("a terminal's SIGINT to penguin's process group is not forwarded by the supervisor", async () => {
  _pinLaunch({ direct: false });
  try {
    await terminalRounds();
  } finally {
    _pinLaunch({});
  }
});

async function terminalRounds() {
  await withPolicyWorkspace(async (policy) => {
    for (const [mode, rounds] of [["workspace-write", 5], ["off", 40]] as const) {
      for (let i = 0; i < rounds; i++) {
        const child = await spawnSandboxed({
          shell: "trap 'echo caught' INT; echo ready; read -r line; echo got $line",
          policy: { ...policy, mode },
        });
        await readUntil(child, "ready");
        Deno.kill(child.pid, "SIGINT");
        Deno.kill(child.pid, "SIGQUIT");
        await child.write("x\n");
        const r = await collect(child);
        assert.equal(r.out, "got x\n", `${mode}, round ${i}`);
        assert.equal(r.code, 0, `${mode}, round ${i}`);
      }
    }
  });
}

Deno.test("kill() takes down the whole process group, grandchildren included", async () => {
  await withPolicyWorkspace(async (policy) => {
    for (const mode of launches()) {
      const tag = `1000.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
      const child = await spawnSandboxed({
        shell: `sleep ${tag} & sleep ${tag} & echo started; wait`,
        policy: { ...policy, mode },
      });
      await readUntil(child, "started");
      assert.ok(await eventually(() => pidsWithArg(tag).length === 2), `${mode}: both sleeps run`);
      const pids = pidsWithArg(tag);
      const status = await child.kill();
      assert.notEqual(status.code, 0);
      assert.ok(
        await eventually(() => pids.every((p) => !alive(p))),
        `${mode}: sleeps ${pids} still alive`,
      );
    }
  });
});

Deno.test("kill() escalates to SIGKILL for processes that ignore SIGTERM or left the group", async () => {
  await withPolicyWorkspace(async (policy) => {
    for (const _launch of bwrapLaunches()) {
      const tag = `1000.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
      const child = await spawnSandboxed({
        shell:
          `trap '' TERM; setsid sleep ${tag} & sleep ${tag} & echo started; while :; do sleep 0.05; done`,
        policy,
        killGraceMs: 300,
      });
      await readUntil(child, "started");
      assert.ok(await eventually(() => pidsWithArg(tag).length === 2));
      const pids = pidsWithArg(tag);
      const status = await child.kill();
      assert.equal(status.signal, "SIGKILL");
      assert.ok(await eventually(() => pids.every((p) => !alive(p))), `sleeps ${pids} still alive`);
    }
  });
});

Deno.test("when the command exits, everything it left behind in the sandbox dies with it", async () => {
  await withPolicyWorkspace(async (policy) => {
    for (const _launch of bwrapLaunches()) {
      const tag = `1000.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
      const child = await spawnSandboxed({
        shell: `setsid sleep ${tag} & sleep ${tag} & echo started`,
        policy,
      });
      const r = await collect(child);
      assert.match(r.out, /started/);
      assert.ok(
        await eventually(() => pidsWithArg(tag).length === 0),
        "leftover processes survive the sandbox",
      );
    }
  });
});

/**
 * A fork bomb: perl forks up to `n` sleeping children (argv tagged `tag`), prints
 * `started <children forked>` (a fork the machine refuses ends the loop early), then runs the perl
 * code `then`.
 */
const bomb = (tag: string, n: number, then: string) =>
  `perl -e 'my $k = 0; for (1..${n}) { my $p = fork; last unless defined $p; if (!$p) { sleep 1000; exit } $k++ } $| = 1; print "started $k\\n"; ${then}' ${tag}`;

/** The number of children a {@linkcode bomb} said it forked, once it has said so. */
async function forked(child: Awaited<ReturnType<typeof spawnSandboxed>>): Promise<number> {
  const said = /started (\d+)/.exec(await readUntil(child, "\n"));
  assert.ok(said, "the bomb did not start");
  return Number(said[1]);
}

Deno.test("when a fork bomb's command exits, its status arrives only once every process is gone", async () => {
  await withPolicyWorkspace(async (policy) => {
    for (const _launch of bwrapLaunches()) {
      const tag = `1000.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
      const child = await spawnSandboxed({ shell: bomb(tag, 2000, "exit 3"), policy });
      // Counted the moment the status arrives: no wait, no grace.
      const left = await child.status.then(() => pidsWithArg(tag));
      assert.deepEqual(left, [], "processes of the sandbox outlived its status");
      assert.equal((await collect(child)).code, 3);
    }
  });
});

Deno.test("kill() resolves only once every process of the sandbox is gone, fork bomb included", async () => {
  await withPolicyWorkspace(async (policy) => {
    for (const _launch of bwrapLaunches()) {
      for (const grace of [1000, 0]) {
        const tag = `1000.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
        const child = await spawnSandboxed({
          shell: bomb(tag, 2000, `$SIG{TERM} = "IGNORE"; sleep 1 while 1`),
          policy,
        });
        const n = await forked(child);
        // However many forks the loaded machine allowed, a bomb it is, and all of it runs.
        assert.ok(n >= 100, `only ${n} forks`);
        assert.ok(await eventually(() => pidsWithArg(tag).length > n), `the bomb of ${n} runs`);
        await child.kill(grace);
        assert.deepEqual(pidsWithArg(tag), [], `grace ${grace}: processes survived kill()`);
      }
    }
  });
});

Deno.test("aborting the signal kills the child", async () => {
  await withPolicyWorkspace(async (policy) => {
    for (const _launch of bwrapLaunches()) {
      const ac = new AbortController();
      const child = await spawnSandboxed({
        shell: "echo up; sleep 1000",
        policy,
        signal: ac.signal,
      });
      await readUntil(child, "up");
      ac.abort();
      const { signal } = await child.status;
      assert.ok(signal === "SIGTERM" || signal === "SIGKILL", String(signal));
    }
  });
});

Deno.test("a missing working directory fails before anything runs", async () => {
  await withPolicyWorkspace(async (policy, ws) => {
    await assert.rejects(
      spawnSandboxed({ shell: "touch ran", policy, cwd: `${ws}/missing` }),
      (e) => e instanceof PenguinError && e.kind === "runtime",
    );
    assert.equal(await exists(`${ws}/ran`), false);
  });
});

Deno.test("the command runs in the given working directory", async () => {
  await withPolicyWorkspace(async (policy, ws) => {
    await Deno.mkdir(`${ws}/sub`);
    for (const mode of MODES) {
      const r = await collect(
        await spawnSandboxed({ shell: "pwd", policy: { ...policy, mode }, cwd: `${ws}/sub` }),
      );
      assert.equal(r.out, `${ws}/sub\n`, mode);
    }
  });
});

Deno.test("a child inherits no descriptors beyond stdin, stdout and stderr", async () => {
  await withPolicyWorkspace(async (policy) => {
    for (const mode of MODES) {
      const r = await collect(
        await spawnSandboxed({
          shell: "ls /proc/self/fd",
          policy: { ...policy, mode },
          stdin: "null",
        }),
      );
      // ls itself holds one descriptor for the directory it lists.
      assert.deepEqual(r.out.trim().split("\n").map(Number).sort((a, b) => a - b).slice(0, 3), [
        0,
        1,
        2,
      ], mode);
      assert.ok(r.out.trim().split("\n").length <= 4, `${mode}: ${r.out}`);
    }
  });
});

Deno.test("the supervisor starts under setpriv directly when penguin may run it, else bash re-executes itself", async () => {
  const { supervisorCommand } = await import("../../lib/sandbox/_supervisor.ts");
  const direct = supervisorCommand("/bin/bash", ["bwrap", "x"], {
    setpriv: "/usr/bin/setpriv",
    direct: true,
    kind: "ns",
  });
  assert.equal(direct.command, "/usr/bin/setpriv");
  assert.deepEqual(direct.args.slice(0, 5), ["--pdeathsig", "KILL", "--", "/bin/bash", "-c"]);
  // The script itself is told there is no setpriv left to re-execute under.
  assert.deepEqual(direct.args.slice(6), [
    "penguin-supervisor",
    "-",
    "ns",
    "0",
    "-",
    "0",
    "bwrap",
    "x",
  ]);
  const group = supervisorCommand("/bin/bash", ["sh"], {
    setpriv: "/usr/bin/setpriv",
    direct: true,
    kind: "group",
  });
  assert.deepEqual(group.args.slice(0, 2), ["--pdeathsig", "USR2"]);
  const viaBash = supervisorCommand("/bin/bash", ["sh"], {
    setpriv: "/usr/bin/setpriv",
    direct: false,
    kind: "group",
  });
  assert.equal(viaBash.command, "/bin/bash");
  assert.deepEqual(viaBash.args.slice(2), [
    "penguin-supervisor",
    "/usr/bin/setpriv",
    "group",
    "0",
    "-",
    "0",
    "sh",
  ]);
});
