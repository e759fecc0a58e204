// Two penguin processes in one workspace that has no .git and no penguin.jsonc: whichever
// ends first, the other's commands still cannot create them (break 1 of issue 26: the first
// session's end removed the stand-ins the second one still had mounted, and the second one's
// command planted a .git whose core.fsmonitor the user's next `git status` ran).
import assert from "node:assert/strict";
import { join } from "node:path";
import { addServerModel } from "../support/roots.ts";
import { item, type ScriptedTurn, startModelServer, turn } from "../support/model_server.ts";
import { penguinArgv, penguinEnv, REPO, withoutTerminal } from "../support/cli.ts";
import { visibleTempDir } from "../sandbox/_helpers.ts";
import { exists } from "../sandbox/_helpers.ts";

type Server = Awaited<ReturnType<typeof startModelServer>>;

/** A signal a test raises once: `wait` resolves after `raise`. */
function gate(): { wait: Promise<void>; raise: () => void } {
  let raise!: () => void;
  const wait = new Promise<void>((r) => raise = r);
  return { wait, raise };
}

/** A model whose first answer runs `cmd` and whose second waits for `done` before it ends the task. */
async function session(cmd: string, done: Promise<void>): Promise<Server> {
  const first: ScriptedTurn = turn.of(
    item.toolCall("exec_command", { description: "work", cmd, yield_time_ms: 1000 }, {
      id: "c1",
    }),
  );
  return await startModelServer({
    handler: async (_rec, i) => {
      if (i === 0) return first;
      await done;
      return turn.text("finished");
    },
    maxRequests: 10,
  });
}

async function configure(root: string, server: Server): Promise<void> {
  await addServerModel(root, server, { api_key: "sk-concurrent-sessions-0123456789" });
}

function startRun(root: string, ws: string, home?: string): Deno.ChildProcess {
  const { command, args } = withoutTerminal([
    Deno.execPath(),
    ...penguinArgv(),
    "--root",
    root,
    "run",
    "--workspace",
    ws,
    "-m",
    "go",
  ]);
  return new Deno.Command(command, {
    args,
    cwd: REPO,
    env: penguinEnv(home ? { HOME: home } : {}),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function mkfifo(path: string): Promise<void> {
  assert.ok((await new Deno.Command("mkfifo", { args: [path] }).output()).success);
}

/** Read one FIFO to its end (blocks until a writer has opened and closed it). */
const readFifo = (path: string) => Deno.readTextFile(path);
/** Open a FIFO for writing and close it (blocks until a reader opens it). */
const releaseFifo = (path: string) => Deno.writeTextFile(path, "go\n");

async function finish(child: Deno.ChildProcess): Promise<string> {
  const out = await child.output();
  const dec = new TextDecoder();
  const text = dec.decode(out.stdout) + dec.decode(out.stderr);
  assert.equal(out.code, 0, text);
  return text;
}

async function hostGitStatus(ws: string, home: string): Promise<void> {
  await new Deno.Command("git", {
    args: ["status"],
    cwd: ws,
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home, GIT_CONFIG_NOSYSTEM: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
}

const ORDERS = [
  "the first one ends first",
  "the second one ends first",
  "the first one ends first and they have different homes",
] as const;

for (const order of ORDERS) {
  Deno.test(`two sessions in one workspace without .git keep it missing when ${order}`, async () => {
    const base = await visibleTempDir("penguin-two-sessions-");
    const ws = join(base, "ws");
    await Deno.mkdir(ws);
    const marker = join(base, "planted-fsmonitor-ran");
    for (const f of ["a-up", "a-go", "b-up", "b-go", "b-done"]) await mkfifo(join(ws, f));
    const aDone = gate();
    const bDone = gate();
    // A holds its sandbox open until released; B attacks once released, after A is gone.
    const a = await session("echo up > a-up; cat a-go > /dev/null; echo a-released", aDone.wait);
    const attack = [
      "echo up > b-up; cat b-go > /dev/null",
      "mkdir .git 2>>attack.log; mkdir -p .git/hooks 2>>attack.log",
      `printf '[core]\\n\\tfsmonitor = "touch ${marker}; false"\\n' 2>>attack.log > .git/config`,
      `echo '{"git": "writable"}' 2>>attack.log > penguin.jsonc`,
      "ls -A > listing.txt; echo done > b-done",
    ].join("; ");
    const b = await session(attack, bDone.wait);
    try {
      await configure(join(base, "data-a"), a);
      await configure(join(base, "data-b"), b);
      const first = startRun(join(base, "data-a"), ws);
      assert.equal(await readFifo(join(ws, "a-up")), "up\n");
      const otherHome = join(base, "home-b");
      await Deno.mkdir(otherHome);
      const second = startRun(
        join(base, "data-b"),
        ws,
        order.endsWith("different homes") ? otherHome : undefined,
      );
      assert.equal(await readFifo(join(ws, "b-up")), "up\n");
      // Both sandboxes run now, both holding the stand-ins for .git and penguin.jsonc.
      if (order !== "the second one ends first") {
        await releaseFifo(join(ws, "a-go"));
        aDone.raise();
        await finish(first);
        await releaseFifo(join(ws, "b-go"));
        assert.equal(await readFifo(join(ws, "b-done")), "done\n");
        bDone.raise();
        await finish(second);
      } else {
        await releaseFifo(join(ws, "b-go"));
        assert.equal(await readFifo(join(ws, "b-done")), "done\n");
        bDone.raise();
        await finish(second);
        // A still runs, still holds: its .git is still a stand-in, not the user's.
        assert.equal(await exists(join(ws, ".git")), true, "A's stand-in stays while A runs");
        await releaseFifo(join(ws, "a-go"));
        aDone.raise();
        await finish(first);
      }
      const log = await Deno.readTextFile(join(ws, "attack.log"));
      assert.match(log, /\.git.*(Read-only|File exists|Permission denied)/i, log);
      assert.match(log, /\.git\/config.*(Read-only|Permission denied|No such)/i, log);
      assert.match(log, /penguin\.jsonc.*(Read-only|Permission denied)/i, log);
      if (order.endsWith("different homes")) {
        // B took A's stand-ins for the user's files and left them to A's records: the next
        // penguin with A's home sweeps them.
        const c = await session("true", Promise.resolve());
        await configure(join(base, "data-c"), c);
        await finish(startRun(join(base, "data-c"), ws));
        await c.close();
      }
      assert.equal(await exists(join(ws, ".git")), false, "no .git left: the stand-in is gone");
      assert.equal(await exists(join(ws, "penguin.jsonc")), false, "no penguin.jsonc left");
      await hostGitStatus(ws, base);
      assert.equal(await exists(marker), false, "the user's git status ran no planted command");
    } finally {
      aDone.raise();
      bDone.raise();
      await a.close();
      await b.close();
      await Deno.remove(base, { recursive: true });
    }
  });
}

Deno.test("a session inside another one's workspace leaves no stand-in once both ended", async () => {
  // A works in ws/sub and ends while B, on ws, runs a command with A's stand-ins mounted as the
  // user's files: B removes them at its end (attack round 26 A11: they stayed until a later
  // penguin's sweep).
  const base = await visibleTempDir("penguin-nested-sessions-");
  const ws = join(base, "ws");
  const sub = join(ws, "sub");
  await Deno.mkdir(sub, { recursive: true });
  await mkfifo(join(sub, "a-up"));
  await mkfifo(join(sub, "a-go"));
  await mkfifo(join(ws, "b-up"));
  await mkfifo(join(ws, "b-go"));
  const aDone = gate();
  const bDone = gate();
  const a = await session("echo up > a-up; cat a-go > /dev/null", aDone.wait);
  const b = await session("echo up > b-up; cat b-go > /dev/null", bDone.wait);
  const made = [join(sub, ".git"), join(sub, "penguin.jsonc")];
  try {
    await configure(join(base, "data-a"), a);
    await configure(join(base, "data-b"), b);
    const inner = startRun(join(base, "data-a"), sub);
    assert.equal(await readFifo(join(sub, "a-up")), "up\n");
    for (const p of made) assert.equal(await exists(p), true, `A's stand-in ${p}`);
    const outer = startRun(join(base, "data-b"), ws);
    assert.equal(await readFifo(join(ws, "b-up")), "up\n");
    await releaseFifo(join(sub, "a-go"));
    aDone.raise();
    await finish(inner);
    for (const p of made) assert.equal(await exists(p), true, `${p} stays while B runs`);
    await releaseFifo(join(ws, "b-go"));
    bDone.raise();
    await finish(outer);
    for (const p of made) assert.equal(await exists(p), false, `${p} is left`);
  } finally {
    aDone.raise();
    bDone.raise();
    await a.close();
    await b.close();
    await Deno.remove(base, { recursive: true });
  }
});
