// The process budget is one for all the user's penguin processes (lib/sandbox/_budget_ledger.ts;
// attack pass final16-bounded B1: three penguins each took "half the PIDs free"). Each test runs
// small scripts under penguin's own permission set, as separate processes that take shares
// (takeShare only: nothing is forked), told what to do over stdin. A forced budget with a ledger
// directory of the test's own keeps them apart from every other penguin on the machine; the last
// test takes small real shares in two run directories and sees one from the other.
import assert from "node:assert/strict";
import { join } from "node:path";
import { penguinArgv, REPO } from "../support/cli.ts";
import { withTempDir } from "../support/roots.ts";
import { MAX_HELD } from "../../lib/sandbox/_budget_ledger.ts";

const linux = Deno.build.os === "linux";
const url = (p: string) => JSON.stringify(new URL(`../../lib/sandbox/${p}`, import.meta.url).href);

/** The script: `take N`, `fill N` (take until refused), `facts`, `release`; a line out for each. */
const SCRIPT = `
import { _ledgerWritten, _pinBudget, budgetFacts, othersFacts, takeShare } from ${
  url("_process_budget.ts")
};
const [ledger, total] = Deno.args;
if (ledger) _pinBudget(Number(total), ledger);
const shares = [];
const say = (s) => Deno.stdout.write(new TextEncoder().encode(s + "\\n"));
const take = async (n) => {
  try {
    const share = await takeShare(n, "a probe");
    shares.push(share);
    return share.limit;
  } catch (err) {
    return "refused " + err.message;
  }
};
let buf = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buf += chunk;
  let i;
  while ((i = buf.indexOf("\\n")) >= 0) {
    const [word, arg] = buf.slice(0, i).split(" ");
    buf = buf.slice(i + 1);
    if (word === "take") await say("took " + (await take(Number(arg))));
    else if (word === "fill") {
      let sum = 0;
      for (let got; typeof (got = await take(Number(arg))) === "number";) sum += got;
      await say("filled " + sum);
    } else if (word === "facts") await say(JSON.stringify({ ...budgetFacts(), others: othersFacts() }));
    else if (word === "release") {
      for (const s of shares.splice(0)) s.release();
      await _ledgerWritten();
      await say("released");
    }
  }
}
`;

interface Penguin {
  pid: number;
  ask(line: string): Promise<string>;
  end(): Promise<void>;
}

/** Start the script under penguin's flags; `ledger` and `total` force the budget. */
function start(dir: string, env: Record<string, string>, ledger = "", total = 0): Penguin {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...penguinArgv().slice(0, -1), join(dir, "probe.ts"), ledger, String(total)],
    cwd: REPO,
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  const next = async (): Promise<string> => {
    for (;;) {
      const i = buf.indexOf("\n");
      if (i >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        return line;
      }
      const { value, done } = await lines.read();
      if (done) throw new Error(`the probe ended; output so far: ${JSON.stringify(buf)}`);
      buf += value;
    }
  };
  return {
    pid: child.pid,
    ask: async (line) => {
      await writer.write(new TextEncoder().encode(`${line}\n`));
      return await next();
    },
    end: async () => {
      await writer.close();
      await lines.cancel();
      const status = await child.status;
      assert.equal(status.code, 0, "the probe ended well");
    },
  };
}

/** `fn` with a temp dir holding the script and a ledger directory in it. */
function withProbe(fn: (dir: string, ledger: string) => Promise<void>): Promise<void> {
  return withTempDir("penguin-ledger-", async (dir) => {
    await Deno.writeTextFile(join(dir, "probe.ts"), SCRIPT);
    const ledger = join(dir, "ledger");
    await Deno.mkdir(ledger, { mode: 0o700 });
    await fn(dir, ledger);
  });
}

/** The script in the run directory `dir/run`, the budget forced to `total` with `ledger`. */
function startInRun(dir: string, ledger: string, total: number): Penguin {
  return start(dir, { PENGUIN_RUN_DIR: join(dir, "run") }, ledger, total);
}

/** End each of `penguins`, in turn. */
async function endAll(penguins: Penguin[]): Promise<void> {
  for (const p of penguins) await p.end();
}

const entries = (dir: string) =>
  [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => /^\d+-\d+$/.test(n)).sort();

/** This test process's start time (`/proc/self/stat` field 22). */
function ownStart(): string {
  const stat = Deno.readTextFileSync("/proc/self/stat");
  return stat.slice(stat.lastIndexOf(") ") + 2).split(" ")[19]!;
}

const TOTAL = 1000;

Deno.test({
  name: "three penguin processes taking shares at once together hold at most one budget",
  ignore: !linux,
  fn: () =>
    withProbe(async (dir, ledger) => {
      const three = [0, 1, 2].map(() => startInRun(dir, ledger, TOTAL));
      try {
        // Each holds a share, then all take until refused, at once.
        for (const p of three) assert.equal(await p.ask("take 128"), "took 128");
        const filled = await Promise.all(three.map((p) => p.ask("fill 128")));
        const sums = filled.map((l) => 128 + Number(l.replace(/^filled /, "")));
        const sum = sums.reduce((a, b) => a + b, 0);
        assert.ok(sum <= TOTAL, `together ${sum} (${sums}) of ${TOTAL}`);
        assert.ok(sum > TOTAL - 64, `the budget was used up: ${sum} (${sums})`);
        assert.equal(entries(ledger).length, 3, "one entry per penguin holding shares");
        // The refusal says what the others hold.
        const refused = await three[0]!.ask("take 64");
        assert.match(refused, /other penguin processes may hold \d+ more/);
        // Given back: another takes the room.
        assert.equal(await three[1]!.ask("release"), "released");
        assert.match(await three[2]!.ask("take 128"), /^took \d+$/);
        assert.equal(entries(ledger).length, 2, "an entry with nothing held is removed");
      } finally {
        await endAll(three);
      }
      assert.deepEqual(entries(ledger), [], "each entry is removed when its penguin exits");
    }),
});

Deno.test({
  name: "one penguin process cannot hold a shared budget whole: a quarter is kept for the others",
  ignore: !linux,
  fn: () =>
    withProbe(async (dir, ledger) => {
      // Attack round 18 bounded #2: one session's background commands held the whole budget.
      const [hog, other] = [0, 1].map(() => startInRun(dir, ledger, TOTAL));
      try {
        const filled = Number((await hog!.ask("fill 64")).replace(/^filled /, ""));
        assert.ok(filled <= TOTAL * 3 / 4 && filled > TOTAL * 3 / 4 - 64, `${filled}`);
        assert.match(
          await hog!.ask("take 64"),
          /of which one penguin process may hold 750 \(the rest is kept for the user's other ones\)/,
        );
        assert.match(await other!.ask("take 128"), /^took \d+$/, "another penguin still runs one");
      } finally {
        await endAll([hog!, other!]);
      }
    }),
});

Deno.test({
  name: "of several penguins racing for the last room, one gets it",
  ignore: !linux,
  fn: () =>
    withProbe(async (dir, ledger) => {
      // 100: one share of 64 fits, a second does not.
      const four = [0, 1, 2, 3].map(() => startInRun(dir, ledger, 100));
      try {
        const got = await Promise.all(four.map((p) => p.ask("take 64")));
        assert.equal(got.filter((l) => l === "took 64").length, 1, got.join("\n"));
        assert.equal(got.filter((l) => l.startsWith("took refused")).length, 3, got.join("\n"));
      } finally {
        await endAll(four);
      }
    }),
});

/** Whether `pid` waits for a lock (a blocked request shows in /proc/locks as `N: -> …`). */
function waitsForLock(pid: number): boolean {
  return Deno.readTextFileSync("/proc/locks").split("\n")
    .some((l) => / -> /.test(l) && l.split(/\s+/).includes(String(pid)));
}

Deno.test({
  name: "a share is taken under the ledger's lock: the one holding it takes the last room first",
  ignore: !linux,
  fn: () =>
    withProbe(async (dir, ledger) => {
      const p = startInRun(dir, ledger, 100);
      try {
        assert.match(await p.ask("facts"), /"held":0/, "loaded");
        // This test process plays another penguin in the middle of taking the last room.
        const lock = await Deno.open(join(ledger, "lock"), {
          read: true,
          write: true,
          create: true,
        });
        await lock.lock(true);
        let answered = false;
        const answer = p.ask("take 64").finally(() => answered = true);
        try {
          while (!waitsForLock(p.pid)) {
            if (answered) assert.fail(`taken while another held the lock: ${await answer}`);
            await new Promise((r) => setTimeout(r, 5)); // polling /proc/locks
          }
          await Deno.writeTextFile(join(ledger, `${Deno.pid}-${ownStart()}`), "64\n");
        } finally {
          lock.close();
        }
        assert.match(await answer, /^took refused .*may hold 64 more/);
      } finally {
        await p.end();
        await Deno.remove(join(ledger, `${Deno.pid}-${ownStart()}`)).catch(() => {});
      }
    }),
});

Deno.test({
  name: "a dead penguin's entry, and one of a reused pid, are not counted and are removed",
  ignore: !linux,
  fn: () =>
    withProbe(async (dir, ledger) => {
      const ended = new Deno.Command("true").spawn();
      await ended.status;
      const dead = `${ended.pid}-12345`;
      const reused = `${Deno.pid}-1`; // this pid, another start time
      for (const name of [dead, reused]) await Deno.writeTextFile(join(ledger, name), "900\n");
      const p = startInRun(dir, ledger, TOTAL);
      try {
        assert.equal(await p.ask("take 128"), "took 128");
        assert.equal(JSON.parse(await p.ask("facts")).others, 0);
        assert.ok(!entries(ledger).includes(dead) && !entries(ledger).includes(reused));
      } finally {
        await p.end();
      }
    }),
});

Deno.test({
  name: "a live penguin's entry counts; a corrupt or forged one counts at most its bound",
  ignore: !linux,
  fn: () =>
    withProbe(async (dir, ledger) => {
      const live = `${Deno.pid}-${ownStart()}`;
      // Not entries: no count (a negative one would enlarge the budget), and no hang on a FIFO.
      const junk: Record<string, string> = {
        [live.replace("-", "-0")]: "-500\n", // another start time: not this process anyway
        "12-x": "900\n",
        "notes.txt": "900\n",
      };
      for (const [name, text] of Object.entries(junk)) {
        await Deno.writeTextFile(join(ledger, name), text);
      }
      await Deno.writeTextFile(join(ledger, live), "-500\n");
      const fifo = await new Deno.Command("mkfifo", { args: [join(ledger, "1-1")] }).output();
      assert.ok(fifo.success);
      const p = startInRun(dir, ledger, TOTAL);
      try {
        assert.equal(await p.ask("take 128"), "took 128", "junk and a negative count ignored");
        assert.equal(JSON.parse(await p.ask("facts")).others, 0);
        // A live entry counts: 700 held elsewhere leaves 300 (kept half: 500) → the floor.
        await Deno.writeTextFile(join(ledger, live), "700\n");
        assert.equal(await p.ask("take 128"), "took 64");
        assert.equal(JSON.parse(await p.ask("facts")).others, 700);
        // A huge (forged) count only makes the budget smaller: refused.
        await Deno.writeTextFile(join(ledger, live), "99999999999\n");
        assert.match(await p.ask("take 64"), new RegExp(`refused .*may hold ${MAX_HELD} more`));
        // One too large to be an entry is not read.
        await Deno.writeTextFile(join(ledger, live), "7".repeat(40));
        assert.equal(await p.ask("take 64"), "took 64");
      } finally {
        await p.end();
      }
    }),
});

Deno.test({
  name: "penguins of two run directories share the machine's budget through the ledger",
  ignore: !linux,
  fn: () =>
    withProbe(async (dir) => {
      const runA = join(dir, "run-a");
      const runB = join(dir, "run-b");
      const a = start(dir, { PENGUIN_RUN_DIR: runA });
      const b = start(dir, { PENGUIN_RUN_DIR: runB });
      try {
        assert.equal(await a.ask("take 256"), "took 256");
        const mine = entries(join(runA, "budget"));
        assert.equal(mine.length, 1, "A's entry, in its own run directory");
        assert.equal(await Deno.readTextFile(join(runA, "budget", mine[0]!)), "256\n");
        assert.equal(await b.ask("take 64"), "took 64");
        const facts = JSON.parse(await b.ask("facts"));
        assert.ok(facts.others >= 256, `B counts A's 256: ${JSON.stringify(facts)}`);
        const ceiling = Math.min(
          Number((await Deno.readTextFile("/proc/sys/kernel/pid_max")).trim()),
          Number((await Deno.readTextFile("/proc/sys/kernel/threads-max")).trim()),
        );
        assert.ok(facts.total <= ceiling / 2, `${facts.total} of ${ceiling}`);
      } finally {
        await endAll([a, b]);
      }
      assert.deepEqual(entries(join(runA, "budget")), [], "removed when A exits");
    }),
});
