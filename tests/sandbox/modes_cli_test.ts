// Sandbox modes and the workspace policy file end to end: `penguin run` and
// `penguin sandbox run` as subprocesses, the outcome checked in the world and
// in the trace (session_meta.sandbox).
import assert from "node:assert/strict";
import { join } from "node:path";
import { type ScriptedTurn, turn } from "../support/model_server.ts";
import { type CliResult, runCli } from "../support/cli.ts";
import { hostRun } from "../support/host_git.ts";
import { exists } from "./_helpers.ts";
import { withModelRoot, withWorkspace } from "../support/roots.ts";

interface Ctx {
  base: string;
  ws: string;
  root: string;
  run(args: string[]): Promise<CliResult>;
  requests(): number;
  meta(): Promise<Record<string, unknown>>;
  toolListReady(): Promise<Record<string, unknown>>;
}

async function records(root: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const p = join(dir, e.name);
      if (e.isDirectory) await walk(p);
      else if (e.name.endsWith(".jsonl")) {
        for (const line of (await Deno.readTextFile(p)).split("\n")) {
          if (line.trim()) out.push(JSON.parse(line));
        }
      }
    }
  };
  await walk(join(root, "default_project", "agents", "default_agent", "traces"));
  return out;
}

function scenario(
  turns: ScriptedTurn[],
  policy: string | undefined,
  body: (c: Ctx) => Promise<void>,
): Promise<void> {
  return withModelRoot({ turns }, async ({ base, root, workspace: ws }, server) => {
    if (policy !== undefined) await Deno.writeTextFile(join(ws, "penguin.jsonc"), policy);
    await body({
      base,
      ws,
      root,
      run: (args) => runCli(["--root", root, "run", "--workspace", ws, ...args, "-m", "go"]),
      requests: () => server.requests.length,
      meta: async () => {
        const m = (await records(root)).find((r) => r.type === "session_meta");
        assert.ok(m, "a session_meta record");
        return m.payload as Record<string, unknown>;
      },
      toolListReady: async () => {
        const r = (await records(root)).find((r) =>
          (r.payload as { type?: string }).type === "tool_list_ready"
        );
        assert.ok(r, "a tool_list_ready record");
        return r.payload as Record<string, unknown>;
      },
    });
  }, { visible: true });
}

const exec = (cmd: string) =>
  turn.toolCall("exec_command", { description: "x", cmd, yield_time_ms: 5000 });

Deno.test("run --sandbox off warns on stderr and records the mode in session_meta and tool_list_ready", async () => {
  await scenario([turn.text("done")], undefined, async (c) => {
    const r = await c.run(["--sandbox", "off"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /warning: --sandbox off: commands run WITHOUT an OS sandbox/);
    assert.deepEqual((await c.meta()).sandbox, { mode: "off", network: false, git: "read-only" });
    assert.deepEqual((await c.toolListReady()).sandbox, {
      mode: "off",
      network: false,
      git: "read-only",
    });
  });
});

Deno.test("run records the default mode and --network on in session_meta", async () => {
  await scenario([turn.text("done")], undefined, async (c) => {
    const r = await c.run(["--network", "on"]);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /warning/);
    assert.deepEqual((await c.meta()).sandbox, {
      mode: "workspace-write",
      network: true,
      git: "read-only",
    });
  });
});

Deno.test("penguin.jsonc narrows run: read-only, network off, an extra command rule", async () => {
  const policy = `{
    // this project wants no writes from commands and no curl
    "sandbox": "read-only",
    "network": "off",
    "command_rules": [{ "name": "no-curl", "pattern": "\\\\bcurl\\\\b" }],
  }`;
  await scenario(
    [
      exec("echo hi > from_cmd.txt"),
      exec("curl -s http://example.invalid/ > curl.txt"),
      turn.text("done"),
    ],
    policy,
    async (c) => {
      const r = await c.run(["--network", "on"]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stderr,
        /penguin\.jsonc: commands run read-only \(narrower than --sandbox workspace-write\)/,
      );
      assert.match(
        r.stderr,
        /penguin\.jsonc: commands run without network \(narrower than --network on\)/,
      );
      assert.equal(await exists(join(c.ws, "from_cmd.txt")), false);
      assert.equal(await exists(join(c.ws, "curl.txt")), false);
      assert.deepEqual((await c.meta()).sandbox, {
        mode: "read-only",
        network: false,
        git: "read-only",
      });
      const outputs = (await records(c.root)).filter((r) =>
        (r.payload as { type?: string }).type === "tool_call_output"
      ).map((r) => (r.payload as { output: string }).output);
      assert.equal(outputs[1], 'Tool call denied by policy. Reason: policy rule "no-curl".');
    },
  );
});

Deno.test("penguin.jsonc narrows the approval mode: deny-all keeps write_file from running", async () => {
  await scenario(
    [turn.toolCall("write_file", { file_path: "x.txt", content: "x" }), turn.text("done")],
    '{ "approval": "deny-all" }',
    async (c) => {
      const r = await c.run(["--approve", "allow-all"]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /approval deny-all \(narrower than --approve allow-all\)/);
      assert.equal(await exists(join(c.ws, "x.txt")), false);
    },
  );
});

Deno.test("run refuses to start on a network allowlist with --network on, naming line and column", async () => {
  await scenario(
    [turn.text("done")],
    '{\n  "network": { "allow": ["registry.npmjs.org"] }\n}',
    async (c) => {
      const r = await c.run(["--network", "on"]);
      assert.equal(r.code, 2);
      assert.match(
        r.stderr,
        /penguin\.jsonc": line 2, column 14: network\.allow: a network allowlist \(registry\.npmjs\.org\) cannot be enforced/,
      );
      assert.equal(c.requests(), 0, "no model request was made");
    },
  );
});

Deno.test("run stops on a malformed penguin.jsonc with the line and column", async () => {
  await scenario(
    [turn.text("done")],
    '{\n  "sandbox": "read-only",\n  "sandbx": "off"\n}',
    async (c) => {
      const r = await c.run([]);
      assert.equal(r.code, 2);
      assert.match(
        r.stderr,
        /Invalid ".*penguin\.jsonc": line 3, column 3: sandbx: unknown setting/,
      );
      assert.equal(c.requests(), 0);
    },
  );
});

Deno.test("writable roots outside the workspace of a trusted file need --grant-writable-roots, then commands may write there", async () => {
  await scenario(
    [exec("echo granted > ../extra/out.txt"), turn.text("done")],
    '{ "writable_roots": ["../extra"] }',
    async (c) => {
      await Deno.mkdir(join(c.base, "extra"));
      const trusted = await runCli(["--root", c.root, "trust", c.ws]);
      assert.equal(trusted.code, 0, trusted.stderr);
      const refused = await c.run([]);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /only when penguin is started with --grant-writable-roots/);
      const r = await c.run(["--grant-writable-roots"]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(await Deno.readTextFile(join(c.base, "extra", "out.txt")), "granted\n");
      assert.deepEqual((await c.meta()).sandbox, {
        mode: "workspace-write",
        network: false,
        extra_writable: [join(c.base, "extra")],
        git: "read-only",
      });
    },
  );
});

Deno.test("sandbox run applies penguin.jsonc: read-only narrows, outside roots need trust and the grant", async () => {
  await withWorkspace(async (base) => {
    const ws = join(base, "ws");
    await Deno.mkdir(ws);
    await Deno.mkdir(join(base, "extra"));
    const sandboxRun = (policy: string, args: string[], cmd: string) =>
      Deno.writeTextFile(join(ws, "penguin.jsonc"), policy).then(() =>
        runCli(["sandbox", "run", "--workspace", ws, ...args, "--", "bash", "-c", cmd])
      );
    const ro = await sandboxRun('{ "sandbox": "read-only" }', [], `echo x > ${ws}/ro.txt`);
    assert.notEqual(ro.code, 0);
    assert.match(ro.stderr, /penguin\.jsonc: commands run read-only/);
    assert.equal(await exists(join(ws, "ro.txt")), false);
    const policy = '{ "writable_roots": ["../extra"] }';
    const untrusted = await sandboxRun(
      policy,
      ["--grant-writable-roots"],
      `echo x > ${base}/extra/a.txt`,
    );
    assert.notEqual(untrusted.code, 0);
    assert.match(untrusted.stderr, /"writable_roots": \["\.\.\/extra"\] is ignored/);
    assert.equal(await exists(join(base, "extra", "a.txt")), false);
    assert.equal((await runCli(["trust", ws])).code, 0);
    const refused = await sandboxRun(policy, [], `echo x > ${base}/extra/a.txt`);
    assert.equal(refused.code, 2);
    assert.equal(await exists(join(base, "extra", "a.txt")), false);
    const granted = await sandboxRun(
      policy,
      ["--grant-writable-roots"],
      `echo x > ${base}/extra/a.txt`,
    );
    assert.equal(granted.code, 0, granted.stderr);
    assert.equal(await Deno.readTextFile(join(base, "extra", "a.txt")), "x\n");
  });
});

/** `git` on the host, with no system or user config. */
async function hostGit(cwd: string, home: string, args: string[]): Promise<string> {
  const out = await hostRun(home, cwd, "git", args);
  assert.equal(out.code, 0, out.stderr);
  return out.stdout;
}

const COMMIT = "echo b > b.txt && git add b.txt && " +
  "git -c user.name=m -c user.email=m@x commit -qm by-the-model && echo committed";

Deno.test("run: .git is read-only by default; --git-writable lets commands commit and is recorded", async () => {
  await scenario(
    [exec(COMMIT), turn.text("done"), exec(COMMIT), turn.text("done")],
    undefined,
    async (c) => {
      await hostGit(c.ws, c.base, ["init", "-q", "-b", "main", "."]);
      await hostGit(c.ws, c.base, ["commit", "-q", "--allow-empty", "-m", "init"]);
      const ro = await c.run([]);
      assert.equal(ro.code, 0, ro.stderr);
      assert.doesNotMatch(await hostGit(c.ws, c.base, ["log", "--format=%s"]), /by-the-model/);
      assert.deepEqual((await c.meta()).sandbox, {
        mode: "workspace-write",
        network: false,
        git: "read-only",
      });
      await Deno.remove(join(c.root, "default_project", "agents", "default_agent", "traces"), {
        recursive: true,
      });
      const rw = await c.run(["--git-writable"]);
      assert.equal(rw.code, 0, rw.stderr);
      assert.match(await hostGit(c.ws, c.base, ["log", "--format=%s"]), /^by-the-model$/m);
      assert.deepEqual((await c.meta()).sandbox, {
        mode: "workspace-write",
        network: false,
        git: "writable",
      });
    },
  );
});

Deno.test('sandbox run: "git": "writable" in a trusted penguin.jsonc lets the command commit, --git-writable too', async () => {
  await withWorkspace(async (base) => {
    const ws = join(base, "ws");
    await Deno.mkdir(ws);
    await hostGit(ws, base, ["init", "-q", "-b", "main", "."]);
    await hostGit(ws, base, ["commit", "-q", "--allow-empty", "-m", "init"]);
    const sandboxRun = (args: string[]) =>
      runCli(["sandbox", "run", "--workspace", ws, ...args, "--", "bash", "-c", COMMIT]);
    const ro = await sandboxRun([]);
    assert.notEqual(ro.code, 0);
    const flag = await sandboxRun(["--git-writable"]);
    assert.equal(flag.code, 0, flag.stderr);
    await Deno.writeTextFile(join(ws, "penguin.jsonc"), '{ "git": "writable" }');
    await hostGit(ws, base, ["reset", "-q", "--hard", "HEAD~1"]);
    const untrusted = await sandboxRun([]);
    assert.notEqual(untrusted.code, 0);
    assert.match(untrusted.stderr, /"git": "writable" is ignored/);
    assert.equal((await runCli(["trust", ws])).code, 0);
    const file = await sandboxRun([]);
    assert.equal(file.code, 0, file.stderr);
    assert.match(file.stderr, /penguin\.jsonc \(trusted\): commands may commit/);
    assert.match(await hostGit(ws, base, ["log", "--format=%s"]), /^by-the-model$/m);
  });
});

Deno.test("chat: --git-writable asks for a writable .git in every session it opens", async () => {
  const { parseChatFlags } = await import("../../lib/cli/commands/_chat_flags.ts");
  assert.equal(parseChatFlags(["--git-writable"]).session.git, "writable");
  assert.equal(parseChatFlags([]).session.git, undefined);
});
