// The first command's set-up runs in the background once the model begins its first tool call
// (issue 32): real `penguin run`s with a temp HOME whose `~/.profile` (run by the shell
// snapshot's login shell) marks in the workspace that it started and then waits for a file the
// test makes. The login shell has not started when the first request reaches the model (nothing
// may compete with the request), and starts while the model's answer is still streaming, once
// its tool call has begun (the scripted model holds the rest until the mark appears). The first command still gets the walk's
// result: a credential file in a shown toolchain stays hidden. A session that ends before any
// command stops the login shell and leaves no stand-in in the workspace.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { addServerModel, visibleTempDir } from "../support/roots.ts";
import { reverse } from "../support/profile_run.ts";

const NETRC_SECRET = "WarmNetrc8Kq2Zx4";

/** Whether `path` exists. */
async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

/**
 * Resolves true once `path` exists in `dir` (watched), false if it has not after `guardMs` (a
 * guard against a hang when the order is wrong; no result depends on how long it took).
 */
async function appears(path: string, dir: string, guardMs: number): Promise<boolean> {
  const watcher = Deno.watchFs(dir);
  const guard = setTimeout(() => watcher.close(), guardMs);
  try {
    if (await exists(path)) return true;
    for await (const _ of watcher) if (await exists(path)) return true;
    return await exists(path);
  } finally {
    clearTimeout(guard);
    try {
      watcher.close();
    } catch {
      // Closed by the guard.
    }
  }
}

interface Setup {
  base: string;
  home: string;
  ws: string;
  root: string;
  env: Record<string, string>;
}

/** A temp HOME whose profile marks `started` and waits for `go` in the workspace. */
async function setUp(prefix: string): Promise<Setup> {
  const base = await visibleTempDir(prefix);
  const home = join(base, "home");
  const ws = join(base, "ws");
  const root = join(base, "data");
  await Deno.mkdir(join(home, ".cache", "pip"), { recursive: true });
  await Deno.mkdir(ws);
  await Deno.writeTextFile(join(home, ".cache", "pip", ".netrc"), `password ${NETRC_SECRET}\n`);
  await Deno.writeTextFile(join(home, ".cache", "pip", "wheel-ok.txt"), "WheelOkWarm5Tg\n");
  // The marks are named through a command's output: a path a startup file names in a writable
  // root, literally or through a variable the file sets, is held read-only (a stand-in while
  // missing), which would keep the profile from writing.
  await Deno.writeTextFile(
    join(home, ".profile"),
    [
      `w=$(printf %s '${ws}')`,
      `: > "$w/login-started"`,
      `while [ ! -e "$w/go" ]; do sleep 0.05; done`,
      `: > "$w/login-saw-request"`,
      "",
    ].join("\n"),
  );
  // A run directory of this test's own: the seccomp file and data-roots list are no other test's.
  return { base, home, ws, root, env: { HOME: home, PENGUIN_RUN_DIR: join(base, "run") } };
}

Deno.test("run: the login shell starts once the model begins a tool call, while the answer streams", async () => {
  const s = await setUp("penguin-warm-up-");
  let absentAtRequest = false;
  let startedDuring: Promise<boolean> | undefined;
  const server = await startModelServer({
    handler: async (_rec, index) => {
      if (index > 0) return turn.text("done");
      // Nothing of the first command's set-up runs beside the first request: the login shell
      // cannot start before the answer begins. (Begun with the session, as it was, it marked its
      // start well within the wait; the wait decides nothing when the order is right.)
      absentAtRequest = !(await appears(join(s.ws, "login-started"), s.ws, 3_000));
      // The answer has begun (the call and its arguments sent); the rest waits until the login
      // shell is under way, which then gets its `go`.
      startedDuring = appears(join(s.ws, "login-started"), s.ws, 60_000).then(async (seen) => {
        await Deno.writeTextFile(join(s.ws, "go"), "");
        return seen;
      });
      return {
        ...turn.toolCall("exec_command", {
          cmd: "ls; rev ~/.cache/pip/.netrc 2>&1; cat ~/.cache/pip/wheel-ok.txt",
        }),
        hold_after: { events: 3, until: startedDuring },
      };
    },
  });
  try {
    await addServerModel(s.root, server);
    const r = await runCli(["--root", s.root, "run", "--workspace", s.ws, "-m", "go"], {
      env: s.env,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(absentAtRequest, "the login shell had started before the first request came");
    assert.ok(await startedDuring, "the login shell did not start while the answer streamed");
    assert.equal(server.requests.length, 2);
    const body = JSON.stringify(server.requests[1]!.body);
    // The profile ran to its end, after the first request was answered.
    assert.ok(body.includes("login-saw-request"), body.slice(-2000));
    // The walk's result applies to the first command: the toolchain shows, its .netrc does not.
    assert.ok(body.includes("WheelOkWarm5Tg"), body.slice(-2000));
    assert.ok(!body.includes(reverse(NETRC_SECRET)), "the .netrc in ~/.cache/pip was read");
    assert.ok(!body.includes(NETRC_SECRET), "the .netrc in ~/.cache/pip was read");
  } finally {
    await server.close();
    await Deno.remove(s.base, { recursive: true });
  }
});

Deno.test("run: a session whose model calls no tool starts no login shell", async () => {
  const s = await setUp("penguin-warm-up-none-");
  const server = await startModelServer({ handler: () => turn.text("no command needed") });
  try {
    await addServerModel(s.root, server);
    const r = await runCli(["--root", s.root, "run", "--workspace", s.ws, "-m", "hi"], {
      env: s.env,
    });
    assert.equal(r.code, 0, r.stderr);
    // The profile never ran, and no sandbox held stand-ins (`.git`, `penguin.jsonc`) here.
    assert.deepEqual(await Array.fromAsync(Deno.readDir(s.ws)), []);
  } finally {
    await server.close();
    await Deno.remove(s.base, { recursive: true });
  }
});

Deno.test("run: a session that ends before any command stops its login shell and leaves no stand-in", async () => {
  const s = await setUp("penguin-warm-up-stop-");
  await Deno.writeTextFile(join(s.ws, "notes.txt"), "read me\n");
  let started: Promise<boolean> | undefined;
  const server = await startModelServer({
    handler: (_rec, index) => {
      if (index > 0) return turn.text("no command needed");
      // A tool call that is no command: the set-up begins; the answer ends only once the login
      // shell is under way (it never gets its `go`).
      started = appears(join(s.ws, "login-started"), s.ws, 60_000);
      return {
        ...turn.toolCall("read_file", { path: "notes.txt" }),
        hold_after: { events: 3, until: started },
      };
    },
  });
  try {
    await addServerModel(s.root, server);
    const r = await runCli(["--root", s.root, "run", "--workspace", s.ws, "-m", "hi"], {
      env: s.env,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(await started, "the login shell had not started");
    // Stopped before its end, and the stand-ins its sandbox held (`.git`, `penguin.jsonc`) gone.
    const left = (await Array.fromAsync(Deno.readDir(s.ws))).map((e) => e.name).sort();
    assert.deepEqual(left, ["login-started", "notes.txt"]);
  } finally {
    await server.close();
    await Deno.remove(s.base, { recursive: true });
  }
});
