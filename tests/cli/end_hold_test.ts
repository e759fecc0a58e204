// A second signal during a session's end does not cut it short (attack pass final16-concgit #1–3,
// 6, 8, 9): the first one ends the task; a background command, stopped at the session's end,
// plants an armed repository then and tells the test through a FIFO; the test sends the second
// signal at that moment. penguin must go on to its last walk (which disarms the repository) and
// exit with its own status, not die of the signal.
import assert from "node:assert/strict";
import { join } from "node:path";
import { turn } from "../support/model_server.ts";
import { inRoot, spawnChat, spawnCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { useTestRunDir } from "../support/run_dir.ts";
import type { Sandbox } from "../agent/_support.ts";

useTestRunDir();

/**
 * The background command: on the SIGTERM of the session's end it plants an armed `R`, writes
 * to the FIFO `end` (the test waits there) and goes on, ignoring SIGTERM, until it is killed.
 */
const PLANT_AT_END = 'trap \'git init -q R; git -C R config core.fsmonitor "touch pwned"; ' +
  "echo ending > end' TERM; echo started; while :; do sleep 0.1; done";

const TURNS = [
  turn.toolCall("exec_command", {
    cmd: PLANT_AT_END,
    description: "background",
    run_in_background: true,
  }),
  turn.toolCall("exec_command", { cmd: "echo begin > end; sleep 30", description: "long" }),
  turn.text("x"),
];

/**
 * The FIFO `end` in the workspace, opened to read and write (opening never waits for a writer,
 * and penguin's exit is written there too, so no read waits for ever): `next()` is the next
 * word written to it: `begin` from the long command, `ending` from the background command once
 * the session's end began, `exited` once penguin exited.
 */
async function openEndFifo(ws: string, exited: Promise<unknown>) {
  const path = join(ws, "end");
  const out = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.equal(out.code, 0, "mkfifo");
  const f = await Deno.open(path, { read: true, write: true });
  void exited.then(() => f.write(new TextEncoder().encode("exited\n"))).catch(() => {});
  const words: string[] = [];
  return {
    async next(): Promise<string> {
      const buf = new Uint8Array(64);
      while (words.length === 0) {
        const n = await f.read(buf);
        if (n === null) return "exited";
        words.push(...new TextDecoder().decode(buf.subarray(0, n)).split(/\s+/).filter(Boolean));
      }
      return words.shift()!;
    },
    close: () => f.close(),
  };
}

/** Whether the workspace's R is disarmed (its `.git` renamed aside), with what R holds. */
async function rState(ws: string): Promise<{ armed: boolean; names: string[] }> {
  const names = (await Array.fromAsync(Deno.readDir(join(ws, "R")))).map((e) => e.name);
  return { armed: names.includes(".git"), names };
}

/** `first` once the long command runs, `second` once the session's end began. */
async function signalTwice(
  child: Deno.ChildProcess,
  ws: string,
  first: Deno.Signal,
  second: Deno.Signal,
  started: Promise<void>,
): Promise<void> {
  let exited = false;
  const status = child.status.then(() => exited = true);
  await started;
  const fifo = await openEndFifo(ws, status);
  try {
    assert.equal(await fifo.next(), "begin", "the long command started");
    child.kill(first);
    assert.equal(await fifo.next(), "ending", "the background command was stopped by the end");
    assert.equal(exited, false);
    child.kill(second);
  } finally {
    fifo.close();
  }
}

/** The session's end, as the test saw it: the exit status, stderr and R's state. */
interface Ended {
  status: Deno.CommandStatus;
  stderr: string;
  r: { armed: boolean; names: string[] };
}

/** `penguin run --json`: `first` mid-command, `second` once the end began. */
async function runTwoSignals(sb: Sandbox, first: Deno.Signal, second: Deno.Signal): Promise<Ended> {
  const child = spawnCli(inRoot(sb, "run", "--json", "-m", "Wait."));
  const stderr = new Response(child.stderr).text();
  const stdout = new Response(child.stdout).text();
  await signalTwice(child, sb.workspace, first, second, Promise.resolve());
  const status = await child.status;
  await stdout;
  return { status, stderr: await stderr, r: await rState(sb.workspace) };
}

for (const [first, second] of [["SIGTERM", "SIGTERM"], ["SIGINT", "SIGINT"]] as const) {
  Deno.test(`run: ${second} during the session's end after ${first}: the last walk still disarms`, async () => {
    await withModelRoot({ turns: TURNS }, async (sb) => {
      const ended = await runTwoSignals(sb, first, second);
      assert.deepEqual([ended.status.signal, ended.status.code], [null, 1], ended.stderr);
      assert.equal(ended.r.armed, false, `R: ${ended.r.names.join(" ")}\n${ended.stderr}`);
      assert.ok(ended.r.names.some((n) => n.startsWith(".git-disarmed")), ended.r.names.join(" "));
      assert.match(ended.stderr, /\[penguin\] finishing the session's end/);
      await assert.rejects(Deno.lstat(join(sb.workspace, "R", "pwned")), Deno.errors.NotFound);
    });
  });
}

Deno.test("a piped chat: SIGALRM during its end after SIGTERM: the last walk still disarms", async () => {
  await withModelRoot({ turns: TURNS }, async (sb) => {
    const child = spawnChat(sb, "piped");
    const input = child.stdin.getWriter();
    const stderr = new Response(child.stderr).text();
    const stdout = new Response(child.stdout).text();
    await signalTwice(
      child,
      sb.workspace,
      "SIGTERM",
      "SIGALRM",
      input.write(new TextEncoder().encode("Wait.\n")),
    );
    const status = await child.status;
    await input.close().catch(() => {});
    await stdout;
    const err = await stderr;
    assert.equal(status.signal, null, err);
    const r = await rState(sb.workspace);
    assert.equal(r.armed, false, `R: ${r.names.join(" ")}\n${err}`);
    assert.ok(r.names.some((n) => n.startsWith(".git-disarmed")), r.names.join(" "));
    assert.match(err, /\[penguin\] finishing the session's end/);
  });
});
