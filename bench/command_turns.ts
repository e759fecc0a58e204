// Commands on the hot path: `deno run -A bench/command_turns.ts [spawnRuns=30] [longRuns=5] [parts=abcde]`
// (`parts`: the letters of the sections to run; (d) comes with (c)).
//
// (a) Spawn cost of exec_command `echo hi` (executeTool → sandbox → output → status, the
//     shell snapshot already taken) against a bare `bwrap <same flags> bash -c 'echo hi'`
//     started straight from Deno, alternating, in the same run. Median and p90.
// (b) Per-turn overhead of a 20-turn shell task: `penguin run` as a subprocess under the
//     `-P=penguin` permission set (tests/support/cli.ts), against the scripted model server
//     (in a worker); each turn is one exec_command `echo`. Overhead of turn n = from the
//     server having sent response n completely to request n+1 arriving: tool included.
// (c) Flatness over a 200-turn task (the same task, 200 requests): turn 10 against turn 190, each
//     the median of the turns around it (5-15, 185-195), as a change in percent. Every turn is
//     measured, none is dropped or warmed up beforehand. Two windows of one run lie some 3 s
//     apart, and the machine's speed drifts over such spans by 15% and more either way, so the
//     figure pairs sessions instead: a chain of `longRuns + 1` sessions in which each starts
//     when the one before reaches turn 180 (bench/_paired_server_worker.ts), and the two then
//     take turns, one working while the other waits for its answer. Turns 185-195 of a session
//     and turns 5-15 of the next run in the same seconds; the median of the pairs' changes is
//     the figure, with the range and the share of the machine's CPU other work took meanwhile
//     (as /proc/stat sees it: other guests of a hypervisor that reports no steal time are not
//     seen). The same change taken within each session is shown too.
// (d) Peak RSS (VmHWM from /proc) of those 200-turn processes: the highest.
// (e) (b) again with a HOME whose ~/.bashrc runs `sleep 0.5` (sourced by ~/.profile, as on
//     Debian): the login profile is paid once per session, not per command.
import { join } from "node:path";
import { peakRss } from "./_peak_rss.ts";
import { cpuTicks, otherWork } from "./_cpu_share.ts";
import { addModel } from "../lib/state/mod.ts";
import { bwrapArgv, createPolicy, detectSandbox, resolvePlan } from "../lib/sandbox/mod.ts";
import { builtinTools, executeTool } from "../lib/tools/mod.ts";
import { keepStandIns } from "../lib/sandbox/_placeholders.ts";
import { toolCall } from "../lib/protocol/builders.ts";
import { denoDir, penguinArgv, REPO } from "../tests/support/cli.ts";

const SPAWN_RUNS = Number(Deno.args[0] ?? 30);
const LONG_RUNS = Number(Deno.args[1] ?? 5);
const PARTS = Deno.args[2] ?? "abcde";
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p90 = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))]!;
const ms = (x: number) => `${x.toFixed(1)} ms`;

const base = await Deno.realPath(
  await Deno.makeTempDir({ dir: "/var/tmp", prefix: "penguin-bench-cmd-" }),
);

async function emptyHome(name: string, files: Record<string, string> = {}): Promise<string> {
  const home = join(base, name);
  await Deno.mkdir(home, { recursive: true });
  for (const [f, text] of Object.entries(files)) await Deno.writeTextFile(join(home, f), text);
  return home;
}

async function spawnCost(): Promise<void> {
  const report = await detectSandbox();
  if (report.kind !== "bwrap" || !report.bwrap || !report.bash) {
    console.log(`(a) skipped: no working bubblewrap here (${report.failure ?? report.kind})`);
    return;
  }
  const ws = join(base, "spawn-ws");
  // A .git and a penguin.jsonc: no stand-in needed for bare bwrap (see lib/sandbox/_placeholders.ts).
  await Deno.mkdir(join(ws, ".git"), { recursive: true });
  await Deno.writeTextFile(join(ws, "penguin.jsonc"), "{}\n");
  const home = await emptyHome("spawn-home");
  const policy = createPolicy({
    workspace: ws,
    home,
    hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home },
  });
  const tool = builtinTools().get("exec_command")!;
  // As in a session, which keeps stand-ins (and, from 0.1.0 on, a sandbox with a launcher).
  const keeping = keepStandIns();
  let n = 0;
  const viaTool = async () => {
    const t = performance.now();
    let out = "";
    const call = toolCall(
      "exec_command",
      JSON.stringify({ description: "e", cmd: "echo hi" }),
      `c${n++}`,
    );
    for await (
      const item of executeTool(tool, call, { workspace: ws, sessionId: "s", sandbox: policy })
    ) {
      if (item.type === "tool_call_output") out = item.output;
    }
    if (out !== "hi\n") throw new Error(`exec_command said ${JSON.stringify(out)}`);
    return performance.now() - t;
  };
  const bareOnce = async () => {
    const t = performance.now();
    const plan = await resolvePlan(policy, ws);
    const argv = bwrapArgv(plan, [report.bash!, "-c", "echo hi"], {
      disableUserns: report.disableUserns,
    });
    const o = await new Deno.Command(report.bwrap!, { args: argv, stdin: "null" }).output();
    return new TextDecoder().decode(o.stdout) === "hi\n" ? performance.now() - t : undefined;
  };
  // A path the plan hides can vanish before bwrap mounts it (another process's data root, as
  // penguin's own start plans again): the attempt that worked is timed.
  const bare = async () => {
    for (let i = 0; i < 5; i++) {
      const t = await bareOnce();
      if (t !== undefined) return t;
    }
    throw new Error("bare bwrap failed 5 times");
  };
  await viaTool(); // the shell snapshot and the probe
  await bare();
  const a: number[] = [], b: number[] = [];
  for (let i = 0; i < SPAWN_RUNS; i++) {
    a.push(await viaTool());
    b.push(await bare());
  }
  console.log(`(a) spawn cost over ${SPAWN_RUNS} alternating runs:`);
  console.log(`    exec_command echo hi:          median ${ms(median(a))}, p90 ${ms(p90(a))}`);
  console.log(`    bare bwrap bash -c 'echo hi':  median ${ms(median(b))}, p90 ${ms(p90(b))}`);
  console.log(`    ratio (medians): ${(median(a) / median(b)).toFixed(2)}x (target <= 1.5x)`);
  await keeping.end();
}

interface Times {
  arrivedAt?: number;
  respondedAt?: number;
}

function serverWorker(turns: number): Promise<{ url: string; stop: () => Promise<Times[]> }> {
  const w = new Worker(new URL("./_command_server_worker.ts", import.meta.url), { type: "module" });
  return new Promise((resolve) => {
    w.onmessage = (e) => {
      resolve({
        url: e.data.url,
        stop: () =>
          new Promise((done) => {
            w.onmessage = (e2) => done(e2.data.times);
            w.postMessage("stop");
          }),
      });
    };
    w.postMessage({ turns });
  });
}

/** Start `penguin run` (a data root and workspace named `name`) against the server at `url`. */
async function launch(
  name: string,
  url: string,
  home: string,
): Promise<{ code: number; peakKb: number; stderr: string }> {
  const dir = join(base, name);
  const root = join(dir, "data");
  const ws = join(dir, "ws");
  await Deno.mkdir(ws, { recursive: true });
  await addModel(join(root, "default_project", ".project_config.toml"), {
    provider: "custom",
    model_id: "m",
    base_url: url,
    client_type: "openai-chat",
  }, { setDefault: true });
  const child = new Deno.Command(Deno.execPath(), {
    args: [...penguinArgv(), "--root", root, "run", "-m", "go", "--workspace", ws],
    cwd: REPO,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: home,
      DENO_DIR: denoDir(),
      NO_COLOR: "1",
    },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const { code, peakKb } = await peakRss(child);
  return { code, peakKb, stderr: await stderr };
}

/** Turn n's gap is `gaps[n - 1]`: from response n sent to request n+1 arriving. */
function gapsOf(times: Times[]): number[] {
  const gaps: number[] = [];
  for (let i = 0; i + 1 < times.length; i++) {
    gaps.push(times[i + 1]!.arrivedAt! - times[i]!.respondedAt!);
  }
  return gaps;
}

/** One `penguin run` of `turns` requests; per-turn gaps and peak RSS. */
async function task(
  name: string,
  turns: number,
  home: string,
): Promise<{ gaps: number[]; rssMb: number; other: string }> {
  const cpuBefore = cpuTicks();
  const server = await serverWorker(turns);
  const run = await launch(name, server.url, home);
  const busy = otherWork(cpuBefore, cpuTicks());
  const times = await server.stop();
  if (run.code !== 0 || times.length !== turns) {
    throw new Error(`${name}: exit ${run.code}, ${times.length}/${turns} requests\n${run.stderr}`);
  }
  const other = busy === undefined
    ? ""
    : ` (other work seen on the machine meanwhile: ${busy.toFixed(0)}% of its CPU)`;
  return { gaps: gapsOf(times), rssMb: run.peakKb / 1024, other };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
/** Turns `at - 5` to `at + 5` (turn n is `gaps[n - 1]`). */
const around = (gaps: number[], at: number) => gaps.slice(at - 6, at + 5);
const change = (from: number, to: number) => ((to - from) / from) * 100;

/** The chain of overlapping sessions of (c) (see bench/_paired_server_worker.ts). */
async function sessionChain(
  sessions: number,
  turns: number,
  home: string,
): Promise<{ gaps: number[][]; rssMb: number[]; other: string }> {
  const cpuBefore = cpuTicks();
  const w = new Worker(new URL("./_paired_server_worker.ts", import.meta.url), { type: "module" });
  const runs: Promise<{ code: number; peakKb: number; stderr: string }>[] = [];
  let urls: string[] = [];
  let fail: (e: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => (fail = reject));
  const start = (k: number) => {
    const run = launch(`chain-${k}`, urls[k]!, home);
    runs.push(run);
    // A session that fails would leave its partner held for ever: stop waiting at once.
    run.then((r) => r.code !== 0 && fail(new Error(`session ${k}: exit ${r.code}\n${r.stderr}`)));
  };
  const allStarted = new Promise<void>((resolve) => {
    w.onmessage = (e) => {
      if (e.data.urls) {
        urls = e.data.urls;
        start(0);
      } else if (typeof e.data.start === "number") {
        start(e.data.start);
      }
      if (runs.length === sessions) resolve();
    };
  });
  w.postMessage({ turns, sessions, startNextAt: turns - 20 });
  await Promise.race([allStarted, failed]);
  const results = await Promise.race([Promise.all(runs), failed]);
  const busy = otherWork(cpuBefore, cpuTicks());
  const times = await new Promise<Times[][]>((done) => {
    w.onmessage = (e) => done(e.data.times);
    w.postMessage("stop");
  });
  times.forEach((t, k) => {
    if (t.length !== turns) throw new Error(`session ${k}: ${t.length}/${turns} requests`);
  });
  const other = busy === undefined
    ? ""
    : `other work seen on the machine meanwhile: ${busy.toFixed(0)}% of its CPU`;
  return { gaps: times.map(gapsOf), rssMb: results.map((r) => r.peakKb / 1024), other };
}

/** (c) and (d): the 200-turn sessions. */
async function flatness(plainHome: string): Promise<void> {
  const pairs = LONG_RUNS;
  console.log(
    `(c) 200-turn tasks, ${pairs + 1} sessions overlapping in ${pairs} pairs; turns 185-195 of ` +
      `one session against turns 5-15 of the next, run in the same seconds, taking turns:`,
  );
  const chain = await sessionChain(pairs + 1, 200, plainHome);
  const paired: number[] = [];
  for (let k = 0; k < pairs; k++) {
    const early = median(around(chain.gaps[k + 1]!, 10));
    const late = median(around(chain.gaps[k]!, 190));
    paired.push(change(early, late));
    console.log(
      `    pair ${k + 1}: turn 10 ${ms(early)}, turn 190 ${ms(late)}, change ${
        paired.at(-1)!.toFixed(1)
      }%`,
    );
  }
  const range = (xs: number[]) =>
    `${Math.min(...xs).toFixed(1)}% to ${Math.max(...xs).toFixed(1)}%`;
  console.log(
    `    median change ${median(paired).toFixed(1)}% (target within +-10%); pairs from ${
      range(paired)
    }${chain.other ? `; ${chain.other}` : ""}`,
  );
  // The same figure taken within each session, its two windows some 3 s apart: exposed to the
  // machine's drift over those seconds.
  const within = chain.gaps.map((g) => change(median(around(g, 10)), median(around(g, 190))));
  console.log(
    `    within one session (windows seconds apart): median ${
      median(within).toFixed(1)
    }%, sessions from ${range(within)}`,
  );
  console.log(
    `(d) peak RSS of the 200-turn processes: ${
      Math.max(...chain.rssMb).toFixed(1)
    } MB (target <= 150 MB)`,
  );
}

/** (e): (b) again with a slow login profile, against (b)'s gaps. */
async function slowProfile(bGaps: number[]): Promise<void> {
  const slowHome = await emptyHome("home-slow", {
    ".bashrc": "sleep 0.5\nexport SLOW_RC=1\n",
    ".profile": '[ -f "$HOME/.bashrc" ] && . "$HOME/.bashrc"\n',
  });
  const e = await task("t20slow", 20, slowHome);
  console.log(`(e) 20-turn task with a .bashrc that sleeps 0.5 s:`);
  console.log(
    `    median ${ms(median(e.gaps))}, mean ${ms(mean(e.gaps))}, first turn ${ms(e.gaps[0]!)}; ` +
      `${(median(e.gaps) / median(bGaps)).toFixed(2)}x of (b) (target <= 2x)`,
  );
}

try {
  if (PARTS.includes("a")) await spawnCost();
  const plainHome = await emptyHome("home-plain");
  let b: { gaps: number[] } | undefined;
  if (PARTS.includes("b") || PARTS.includes("e")) {
    b = await task("t20", 20, plainHome);
    console.log(`(b) 20-turn shell task, end of response -> next request (tool included):`);
    console.log(
      `    median ${ms(median(b.gaps))}, mean ${ms(mean(b.gaps))}, first turn ${
        ms(b.gaps[0]!)
      } (target median <= 30 ms)`,
    );
  }
  if (PARTS.includes("c") || PARTS.includes("d")) await flatness(plainHome);
  if (b && PARTS.includes("e")) await slowProfile(b.gaps);
} finally {
  await Deno.remove(base, { recursive: true });
}
