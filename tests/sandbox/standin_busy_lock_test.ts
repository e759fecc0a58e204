// A command of a session whose workspace holds another session's directory can open and `flock`
// what penguin locks there: the user's `penguin.jsonc` and `.git`, and the stand-ins of a session
// on that directory. penguin took blocking locks on them, holding the registry's lock: the next
// session there hung for as long as that command liked, and every other penguin process of the
// user behind it (attack round 28 E e01, e02, e12). Now the command is refused at once, naming the
// path, and a session in another workspace runs on. The lock holders here are real processes
// (python3, as a model's command would be), waited on through their printed lines.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { exists, visibleTempDir } from "./_helpers.ts";
import { startStandinHolder } from "./_standin_holder_process.ts";
import { readUntil } from "../support/child_lines.ts";
import { useTestRunDir } from "../support/run_dir.ts";

useTestRunDir();

/**
 * python3 holding `flock`s on `paths` (relative to `cwd`): shared ones, made exclusive on a line
 * "x" on stdin; prints "shared" / "exclusive" once it holds them, lets go when stdin closes.
 */
const HOLDER = `
import fcntl, os, sys
fds = [os.open(p, os.O_RDONLY | os.O_NONBLOCK) for p in sys.argv[1:]]
mode = fcntl.LOCK_SH if os.environ.get("START") == "shared" else fcntl.LOCK_EX
for fd in fds: fcntl.flock(fd, mode | fcntl.LOCK_NB)
print("shared" if mode == fcntl.LOCK_SH else "exclusive", flush=True)
for line in sys.stdin:
    for fd in fds: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("exclusive", flush=True)
`;

function startHolder(cwd: string, paths: string[], start: "shared" | "exclusive") {
  const child = new Deno.Command("python3", {
    args: ["-c", HOLDER, ...paths],
    cwd,
    env: { START: start },
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const stdin = child.stdin.getWriter();
  return {
    lines,
    next: (word: string) => readUntil(lines, word),
    say: (line: string) => stdin.write(new TextEncoder().encode(`${line}\n`)),
    end: async () => {
      await stdin.close().catch(() => {});
      await lines.cancel().catch(() => {});
      await child.status;
    },
  };
}

const hostEnv = { PATH: "/usr/bin:/bin" };

/** Run `true` sandboxed in `ws`: its exit code, or the message it was refused with. */
async function runIn(ws: string): Promise<number | string> {
  const policy = createPolicy({ workspace: ws, home: "", hostEnv });
  try {
    const child = await spawnSandboxed({ shell: "true", policy, stdin: "null" });
    return (await child.status).code;
  } catch (err) {
    return (err as Error).message;
  }
}

const BUSY =
  /Cannot lock ".*\/ws\/(\.git|penguin\.jsonc)" for the sandbox: another process holds a lock on it/;

Deno.test({
  name: "the user's penguin.jsonc and .git locked by another process: refused at once, others run",
  ignore: !bwrap,
  async fn() {
    const base = await visibleTempDir("penguin-busy-user-");
    const ws = join(base, "ws");
    const other = join(base, "other");
    await Deno.mkdir(join(ws, ".git", "hooks"), { recursive: true });
    await Deno.writeTextFile(join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
    await Deno.writeTextFile(join(ws, ".git", "config"), "[core]\n");
    await Deno.writeTextFile(join(ws, "penguin.jsonc"), "{}\n");
    await Deno.mkdir(other);
    const holder = startHolder(ws, ["penguin.jsonc", ".git", ".git/config"], "exclusive");
    try {
      assert.match(await holder.next("exclusive"), /exclusive/);
      const [here, there] = await Promise.all([runIn(ws), runIn(other)]);
      assert.match(String(here), BUSY);
      assert.equal(there, 0, "a session in another workspace is not held up");
      await holder.end();
      assert.equal(await runIn(ws), 0, "runs once the lock is let go");
    } finally {
      await holder.end();
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test({
  name: "stand-ins left locked by another process: the next command there is refused, not held up",
  ignore: !bwrap,
  async fn() {
    const base = await visibleTempDir("penguin-busy-standin-");
    const ws = join(base, "ws");
    const other = join(base, "other");
    await Deno.mkdir(ws);
    await Deno.mkdir(other);
    const session = keepStandIns();
    // A penguin makes the stand-ins of ws and holds them; a "command" share-locks them too.
    const first = await startStandinHolder(["plan", ws]);
    let holder: ReturnType<typeof startHolder> | undefined;
    try {
      for (const p of [".git", "penguin.jsonc"]) assert.ok(await exists(join(ws, p)));
      holder = startHolder(ws, [".git", "penguin.jsonc"], "shared");
      assert.match(await holder.next("shared"), /shared/);
      // That penguin ends: it cannot remove them (still held), so they stay recorded.
      await first.child.stdin.close();
      assert.equal((await first.child.status).code, 0);
      await first.lines.cancel();
      for (const p of [".git", "penguin.jsonc"]) assert.ok(await exists(join(ws, p)));
      await holder.say("x");
      assert.match(await holder.next("exclusive"), /exclusive/);
      const [here, there] = await Promise.all([runIn(ws), runIn(other)]);
      assert.match(String(here), BUSY);
      assert.equal(there, 0, "a session in another workspace is not held up");
      await holder.end();
      // Free again: the command runs, and the session's end removes the stand-ins.
      assert.equal(await runIn(ws), 0);
      assert.deepEqual(await session.end(), []);
      for (const p of [".git", "penguin.jsonc"]) {
        assert.equal(await exists(join(ws, p)), false, `${p} is left`);
      }
    } finally {
      await session.end();
      await holder?.end();
      await first.child.stdin.close().catch(() => {});
      await first.lines.cancel().catch(() => {});
      await first.child.status;
      await Deno.remove(base, { recursive: true });
    }
  },
});

/**
 * python3 taking an exclusive lock on each of ws's fresh stand-ins as soon as it can open it,
 * until it has both or stdin closes; prints "armed" first.
 */
const GRABBER = `
import fcntl, os, select, sys
print("armed", flush=True)
got = {}
while len(got) < 2:
    if select.select([sys.stdin], [], [], 0)[0]: break
    for n in (".git", "penguin.jsonc"):
        if n in got: continue
        try: fd = os.open(n, os.O_RDONLY | os.O_NONBLOCK)
        except OSError: continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB); got[n] = fd
        except OSError: os.close(fd)
sys.stdin.read()
`;

Deno.test({
  name: "a fresh stand-in locked by another process before penguin: the command ends either way",
  ignore: !bwrap,
  async fn() {
    const base = await visibleTempDir("penguin-busy-fresh-");
    const ws = join(base, "ws");
    await Deno.mkdir(ws);
    const grabber = new Deno.Command("python3", {
      args: ["-c", GRABBER],
      cwd: ws,
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const lines = grabber.stdout.pipeThrough(new TextDecoderStream()).getReader();
    try {
      assert.match(await readUntil(lines, "armed"), /armed/);
      // Refused (the grabber won) or run (penguin locked first): never waiting on the grabber.
      const got = await runIn(ws);
      assert.ok(got === 0 || BUSY.test(String(got)), String(got));
    } finally {
      await grabber.stdin.close().catch(() => {});
      await lines.cancel().catch(() => {});
      await grabber.status;
      await Deno.remove(base, { recursive: true });
    }
  },
});
