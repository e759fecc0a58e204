// `penguin sandbox check` and `penguin sandbox run`, run as a subprocess under the production permissions.
import assert from "node:assert/strict";
import { join } from "node:path";
import { penguinArgv, penguinEnv, runCli } from "../support/cli.ts";
import { alive, eventually, exists, pidsWithArg, SANDBOX_CHECKS } from "./_helpers.ts";
import { withWorkspace } from "../support/roots.ts";
import { readUntil } from "../support/child_lines.ts";
import { cgroupsHere, memoryCgroupsHere } from "./_cgroups.ts";

Deno.test("sandbox check prints every check and exits 0 when the sandbox works", async () => {
  const r = await runCli(["sandbox", "check"]);
  assert.equal(r.code, 0, r.stderr);
  for (const name of SANDBOX_CHECKS) {
    assert.match(r.stdout, new RegExp(`^  ok\\s+${name}\\s+\\S`, "m"), name);
  }
  assert.match(
    r.stdout,
    /system call filter\s+seccomp \((x86_64|aarch64)\) refuses socket\(AF_UNIX\)/,
  );
  assert.match(r.stdout, /^Sandbox: bubblewrap; /m);
});

Deno.test("sandbox check tells the kernel's bounds on commands: processes and memory", async () => {
  const r = await runCli(["sandbox", "check"]);
  assert.equal(r.code, 0, r.stderr);
  if (memoryCgroupsHere()) {
    assert.match(
      r.stdout,
      /^ {2}ok\s+memory bound\s+\d+(\.\d)? (GiB|MiB) for all penguin commands of the machine together, \d+(\.\d)? (GiB|MiB) for this penguin's \(memory cgroup \/sys\/fs\/cgroup\/memory\/penguin\)$/m,
    );
  } else {
    assert.match(r.stdout, /^ {2}warn\s+memory bound\s+none beyond the sizes of \/tmp/m);
  }
  if (cgroupsHere()) {
    assert.match(r.stdout, /^ {2}ok\s+process limit\s+pids cgroup: the kernel refuses a fork/m);
  }
});

Deno.test("sandbox check --json prints the report", async () => {
  const r = await runCli(["sandbox", "check", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.equal(report.usable, true);
  assert.equal(report.kind, "bwrap");
  assert.equal(report.seccomp.installed, true);
  assert.equal(report.seccomp.arch, Deno.build.arch);
  assert.ok(
    report.seccomp.blocks.includes("socket(AF_UNIX) (stream and seqpacket socketpair allowed)"),
  );
  assert.ok(
    report.checks.every((c: { name: string; status: string; detail: string }) =>
      c.name && c.status && c.detail
    ),
  );
});

Deno.test("sandbox check exits 1 and says how to fix a missing bubblewrap", async () => {
  const r = await runCli(["sandbox", "check"], { env: { PENGUIN_BWRAP: "/nonexistent/bwrap" } });
  assert.equal(r.code, 1);
  assert.match(r.stdout, /^ {2}FAIL\s+bubblewrap\s+not found/m);
  assert.match(
    r.stdout,
    /fix: install bubblewrap: Debian\/Ubuntu `sudo apt-get install bubblewrap`/,
  );
  assert.match(r.stdout, /^Sandbox: none\. Commands for the model are refused/m);
});

Deno.test("sandbox run passes stdout, stderr and the exit code through", async () => {
  await withWorkspace(async (ws) => {
    const r = await runCli([
      "sandbox",
      "run",
      "--workspace",
      ws,
      "--",
      "bash",
      "-c",
      "echo out; echo err >&2; exit 3",
    ], { cwd: ws });
    assert.equal(r.code, 3, r.stderr);
    assert.equal(r.stdout, "out\n");
    assert.equal(r.stderr, "err\n");
  });
});

Deno.test("sandbox run passes stdin through", async () => {
  await withWorkspace(async (ws) => {
    const r = await runCli(["sandbox", "run", "--", "tr", "a-z", "A-Z"], {
      cwd: ws,
      stdin: "hello\n",
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "HELLO\n");
  });
});

Deno.test("sandbox run writes only the workspace", async () => {
  await withWorkspace(async (ws) => {
    await Deno.mkdir(join(ws, "ws"));
    await Deno.mkdir(join(ws, "outside"));
    const r = await runCli(
      [
        "sandbox",
        "run",
        "--workspace",
        join(ws, "ws"),
        "--",
        "bash",
        "-c",
        `echo a > in.txt; echo b > ${ws}/outside/out.txt`,
      ],
      { cwd: join(ws, "ws") },
    );
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /Read-only file system/);
    assert.equal(await Deno.readTextFile(join(ws, "ws", "in.txt")).catch(() => r.stderr), "a\n");
    assert.equal(await exists(join(ws, "outside", "out.txt")), false);
  });
});

Deno.test("sandbox run hides API keys and PENGUIN_* variables the parent has", async () => {
  await withWorkspace(async (ws) => {
    const env = {
      FOO_API_KEY: "sk-foo",
      PENGUIN_X: "px",
      OPENAI_API_KEY: "sk-openai",
      KEEP_OUT: "x",
    };
    for (const mode of ["workspace-write", "off"]) {
      const r = await runCli(["sandbox", "run", "--sandbox", mode, "--", "env"], { cwd: ws, env });
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout, /FOO_API_KEY|PENGUIN_X|OPENAI_API_KEY|KEEP_OUT|sk-/, mode);
      assert.match(r.stdout, /^PATH=/m);
    }
  });
});

Deno.test("sandbox run --network on reaches a host listener, off does not", async () => {
  await withWorkspace(async (ws) => {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    try {
      const probe = ["bash", "-c", `exec 3<>/dev/tcp/127.0.0.1/${port} && printf C >&3`];
      const off = await runCli(["sandbox", "run", "--network", "off", "--", ...probe], { cwd: ws });
      assert.notEqual(off.code, 0);
      const on = await runCli(["sandbox", "run", "--network", "on", "--", ...probe], { cwd: ws });
      assert.equal(on.code, 0, on.stderr);
      // Exactly one connection arrived before ours: the --network on one.
      const own = await Deno.connect({ hostname: "127.0.0.1", port });
      await own.write(new TextEncoder().encode("T"));
      const seen: string[] = [];
      for (let i = 0; i < 2; i++) {
        const conn = await listener.accept();
        const buf = new Uint8Array(1);
        await conn.read(buf);
        seen.push(String.fromCharCode(buf[0]!));
        conn.close();
      }
      own.close();
      assert.deepEqual(seen, ["C", "T"]);
    } finally {
      listener.close();
    }
  });
});

Deno.test("sandbox run --sandbox off warns on stderr and runs unconfined", async () => {
  await withWorkspace(async (ws) => {
    await Deno.mkdir(join(ws, "ws"));
    const r = await runCli([
      "sandbox",
      "run",
      "--sandbox",
      "off",
      "--workspace",
      join(ws, "ws"),
      "--",
      "touch",
      join(ws, "outside.txt"),
    ], { cwd: ws });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^penguin: warning: --sandbox off: .* runs without any OS sandbox/m);
    assert.equal(await exists(join(ws, "outside.txt")), true);
  });
});

Deno.test("sandbox run fails closed when bubblewrap is missing", async () => {
  await withWorkspace(async (ws) => {
    const r = await runCli(["sandbox", "run", "--", "touch", "ran"], {
      cwd: ws,
      env: { PENGUIN_BWRAP: "/nonexistent/bwrap" },
    });
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^penguin: Cannot run "touch ran" \(sandbox workspace-write\): bubblewrap \(bwrap\) is not installed\./m,
    );
    assert.match(r.stderr, /--sandbox off/);
    assert.equal(await exists(join(ws, "ran")), false);
  });
});

Deno.test("sandbox run rejects bad flags and a missing command with exit 2", async () => {
  for (
    const args of [
      ["sandbox", "run"],
      ["sandbox", "run", "--network", "maybe", "--", "true"],
      ["sandbox", "run", "--sandbox", "none", "--", "true"],
    ]
  ) {
    const r = await runCli(args);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(r.stderr, /^penguin: /);
  }
});

/** Start `penguin sandbox run -- bash -c script` and read stdout until `marker`. */
async function startRun(ws: string, script: string, marker: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...penguinArgv(), "sandbox", "run", "--", "bash", "-c", script],
    cwd: ws,
    env: penguinEnv(),
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = await readUntil(reader, marker);
  const rest = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return out;
      out += value;
    }
  })();
  return { child, rest };
}

Deno.test("Ctrl-C on sandbox run reaches the command, which decides how to exit", async () => {
  await withWorkspace(async (ws) => {
    const { child, rest } = await startRun(
      ws,
      "trap 'echo caught; exit 4' INT; echo ready; while :; do sleep 0.05; done",
      "ready",
    );
    child.kill("SIGINT");
    const status = await child.status;
    assert.equal(status.code, 4);
    assert.match(await rest, /caught/);
  });
});

Deno.test("SIGTERM on sandbox run kills the command and everything it started", async () => {
  await withWorkspace(async (ws) => {
    const tag = `1000.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
    const { child, rest } = await startRun(
      ws,
      `trap '' TERM; sleep ${tag} & echo ready; wait`,
      "ready",
    );
    assert.ok(await eventually(() => pidsWithArg(tag).length === 1));
    const [pid] = pidsWithArg(tag);
    child.kill("SIGTERM");
    const status = await child.status;
    await rest;
    assert.equal(status.code, 137);
    assert.ok(await eventually(() => !alive(pid!)), "the sleep survived");
  });
});

Deno.test("a sandbox dies with penguin even when penguin is killed with SIGKILL", async () => {
  await withWorkspace(async (ws) => {
    const tag = `1000.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
    const { child, rest } = await startRun(ws, `sleep ${tag} & echo ready; wait`, "ready");
    assert.ok(await eventually(() => pidsWithArg(tag).length === 1));
    const [pid] = pidsWithArg(tag);
    child.kill("SIGKILL");
    await child.status;
    await rest;
    assert.ok(await eventually(() => !alive(pid!)), "the sandbox outlived penguin");
  });
});
