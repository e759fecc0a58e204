// The shell snapshot: the user's login profile runs once per session, its
// variables reach every command, its noise never reaches the model.
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import {
  buildChildEnv,
  createPolicy,
  loginEnvironment,
  parseSnapshot,
  type SandboxPolicy,
} from "../../lib/sandbox/mod.ts";
import { createProcessRegistry, type ExecutionContext } from "../../lib/tools/mod.ts";
import { call } from "./_command_helpers.ts";

interface Home {
  ws: string;
  home: string;
  policy: SandboxPolicy;
  ctx: ExecutionContext;
}

/** A workspace and a real HOME (both under /var/tmp: the sandbox's /tmp is private) with `files`. */
async function withHome(
  files: (ws: string) => Record<string, string>,
  fn: (h: Home) => Promise<void>,
): Promise<void> {
  const base = await Deno.stat("/var/tmp").then((s) => s.isDirectory, () => false);
  const dir = base ? { dir: "/var/tmp" } : {};
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "penguin-snap-ws-", ...dir }));
  const home = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "penguin-snap-home-", ...dir }),
  );
  for (const [name, text] of Object.entries(files(ws))) {
    await Deno.mkdir(dirname(join(home, name)), { recursive: true });
    await Deno.writeTextFile(join(home, name), text);
  }
  const policy = createPolicy({
    workspace: ws,
    home,
    hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home },
    // Names outside the snapshot's allowlist reach commands only when passed by name.
    allowEnv: ["FROM_PROFILE", "FROM_BASHRC", "SLOW"],
  });
  const processes = createProcessRegistry();
  const ctx: ExecutionContext = {
    workspace: ws,
    sessionId: "session-snap",
    sandbox: policy,
    processes,
  };
  try {
    await fn({ ws, home, policy, ctx });
  } finally {
    await processes.disposeAll();
    await Deno.remove(ws, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
}

// The profile writes its marks through a command's output: a path the startup files name in the
// workspace, literally or through a variable they set, is held read-only for the session.
const NOISY = (ws: string) => ({
  ".bash_profile": [
    `echo "pyenv: cannot rehash: /root/.pyenv/shims isn't writable" >&2`,
    "echo profile says hello",
    "export FROM_PROFILE=profile-value",
    `w=$(printf %s '${ws}'); echo ran >> "$w/profile-runs"`,
    ". ~/.bashrc",
    "",
  ].join("\n"),
  ".bashrc": [
    "echo bashrc noise >&2",
    "export FROM_BASHRC='two words'",
    'export PATH="$HOME/bin:$PATH"',
    `w=$(printf %s '${ws}'); echo ran >> "$w/bashrc-runs"`,
    "",
  ].join("\n"),
  // The snapshot keeps only PATH entries that exist.
  "bin/.keep": "",
});

Deno.test("variables the login profile exports reach commands, and its noise does not reach the output", async () => {
  await withHome(NOISY, async ({ ctx, home }) => {
    const r = await call(ctx, "exec_command", {
      description: "show profile variables",
      cmd: 'echo "$FROM_PROFILE|$FROM_BASHRC|${PATH%%:*}"',
    });
    assert.equal(r.status, "completed");
    assert.equal(r.output, `profile-value|two words|${home}/bin\n`);
  });
});

Deno.test("the login profile runs once per session, not once per command", async () => {
  await withHome(NOISY, async ({ ctx, ws }) => {
    for (let i = 0; i < 4; i++) {
      const r = await call(ctx, "exec_command", { description: "echo", cmd: `echo run ${i}` });
      assert.equal(r.output, `run ${i}\n`);
    }
    assert.equal(await Deno.readTextFile(join(ws, "profile-runs")), "ran\n");
    assert.equal(await Deno.readTextFile(join(ws, "bashrc-runs")), "ran\n");
  });
});

Deno.test("concurrent first commands share one run of the login profile", async () => {
  await withHome(NOISY, async ({ ctx, ws }) => {
    const outs = await Promise.all(
      [0, 1, 2].map((i) =>
        call(ctx, "exec_command", { description: "e", cmd: `echo $FROM_PROFILE ${i}` })
      ),
    );
    assert.deepEqual(outs.map((o) => o.output), [0, 1, 2].map((i) => `profile-value ${i}\n`));
    assert.equal(await Deno.readTextFile(join(ws, "profile-runs")), "ran\n");
  });
});

Deno.test("a slow .bashrc is paid once: the second command does not run it", async () => {
  await withHome((ws) => ({
    ".bashrc": `sleep 0.5\nw=$(printf %s '${ws}'); echo slow >> "$w/slow-runs"\nexport SLOW=done\n`,
    ".bash_profile": ". ~/.bashrc\n",
  }), async ({ ctx, ws }) => {
    const first = await call(ctx, "exec_command", { description: "e", cmd: "echo $SLOW" });
    const second = await call(ctx, "exec_command", { description: "e", cmd: "echo again $SLOW" });
    assert.deepEqual([first.output, second.output], ["done\n", "again done\n"]);
    assert.equal(await Deno.readTextFile(join(ws, "slow-runs")), "slow\n");
  });
});

Deno.test("a login profile that never finishes is given up, and commands run with the plain environment", async () => {
  await withHome(() => ({
    ".bash_profile": "export NEVER=set\nsleep 1000\n",
  }), async ({ policy, ctx }) => {
    // Whether or not the profile got as far as its sleep, it never prints a snapshot.
    assert.deepEqual(await loginEnvironment(policy, { timeoutMs: 300 }), {});
    const r = await call(ctx, "exec_command", { description: "e", cmd: 'echo "[$NEVER]"' });
    assert.deepEqual([r.status, r.output], ["completed", "[]\n"]);
  });
});

Deno.test("a login profile that exits early or fails leaves commands working", async () => {
  await withHome(() => ({ ".bash_profile": "echo broken >&2; exit 3\n" }), async ({ ctx }) => {
    const r = await call(ctx, "exec_command", { description: "e", cmd: "echo still works" });
    assert.deepEqual([r.status, r.output], ["completed", "still works\n"]);
  });
});

Deno.test("a snapshot counts only between its own markers, and drops startup hooks", () => {
  const n = "penguin-snapshot-abc";
  const text = `noise ${n}-begin\0FAKE=1\0${n}-end\0` + // a forged pair printed earlier…
    `${n}-begin\0A=1\0B=x=y\0BASH_ENV=/evil\0PROMPT_COMMAND=evil\0SHLVL=2\0PWD=/x\0` +
    `MULTI=line1\nline2\0${n}-end\0trailing`;
  assert.deepEqual(parseSnapshot(text, n), { A: "1", B: "x=y", MULTI: "line1\nline2" });
  assert.deepEqual(parseSnapshot("no markers at all", n), {});
  assert.deepEqual(
    parseSnapshot(`${n}-begin\0A=1\0`, n),
    {},
    "an unterminated snapshot is ignored",
  );
});

Deno.test("snapshot variables override the host allowlist, never provider keys, the vault or forced values", () => {
  // The snapshot keeps only paths that exist: a home in a temp dir with them.
  const h = Deno.makeTempDirSync({ prefix: "penguin-snap-h-" });
  Deno.mkdirSync(join(h, ".pyenv", "shims"), { recursive: true });
  Deno.mkdirSync(join(h, ".cargo"));
  const env = buildChildEnv({
    host: { PATH: "/usr/bin", HOME: h },
    login: {
      PATH: `${h}/.pyenv/shims:/usr/bin`,
      OPENAI_API_KEY: "sk-from-bashrc",
      LD_PRELOAD: "/evil.so",
      VAULTED: "from-profile",
      TERM: "xterm-256color",
      CARGO_HOME: `${h}/.cargo`,
    },
    vault: { VAULTED: "from-vault" },
  });
  Deno.removeSync(h, { recursive: true });
  assert.equal(env.PATH, `${h}/.pyenv/shims:/usr/bin`);
  assert.equal(env.CARGO_HOME, `${h}/.cargo`);
  assert.equal(env.VAULTED, "from-vault");
  assert.equal(env.TERM, "dumb");
  assert.equal(env.OPENAI_API_KEY, undefined);
  assert.equal(env.LD_PRELOAD, undefined);
});
