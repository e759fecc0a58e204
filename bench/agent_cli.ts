// `penguin run` as a process: `deno run -A bench/agent_cli.ts [turns=500]`.
//
// 1. Cold start: from spawning `deno run -P=penguin main.ts run -m …` to the scripted model
//    server receiving the first request (median of 10 runs; the server runs in a worker of
//    this process). For scale, the time `deno run` needs for `penguin --version`.
// 2. Peak RSS (VmHWM, polled from /proc/<pid>/status) of one `penguin run` process driving
//    a session of `turns` requests, each a read_file tool call.
import { join } from "node:path";
import { peakRss } from "./_peak_rss.ts";
import { addModel } from "../lib/state/mod.ts";
import { penguinArgv, REPO } from "../tests/support/cli.ts";
import { serverWorker } from "./agent_turn_overhead.ts";

const TURNS = Number(Deno.args[0] ?? 500);
const now = () => performance.timeOrigin + performance.now();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function setup(dir: string, url: string): Promise<{ root: string; ws: string }> {
  const root = join(dir, "data");
  const ws = join(dir, "ws");
  await Deno.mkdir(ws, { recursive: true });
  await Deno.writeTextFile(join(ws, "f.txt"), "hello\n".repeat(20));
  await addModel(join(root, "default_project", ".project_config.toml"), {
    provider: "custom",
    model_id: "m",
    base_url: url,
    client_type: "openai-chat",
  }, { setDefault: true });
  return { root, ws };
}

function spawn(args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [...penguinArgv(), ...args],
    cwd: REPO,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
}

async function coldStart(dir: string): Promise<void> {
  // Warm the module cache once so every measured start is a warm-cache cold process.
  await spawn(["--version"]).status;
  const version: number[] = [];
  for (let i = 0; i < 10; i++) {
    const t0 = now();
    await spawn(["--version"]).status;
    version.push(now() - t0);
  }
  const server = await serverWorker(1); // every request is answered with a plain text
  const { root, ws } = await setup(join(dir, "cold"), server.url);
  const runOnce = async (): Promise<number> => {
    const t0 = now();
    const code = (await spawn(["--root", root, "run", "-m", "hi", "--workspace", ws]).status).code;
    if (code !== 0) throw new Error(`cold-start run failed (exit ${code})`);
    return t0;
  };
  const t0s: number[] = [await runOnce()]; // the first run also initializes the agent
  for (let i = 0; i < 10; i++) t0s.push(await runOnce());
  const arrivals = await server.stop();
  const starts = t0s.map((t, i) => arrivals[i]! - t);
  const warm = starts.slice(1);
  console.log(`cold start of \`penguin run\` under deno run, spawn → first request at the server:`);
  console.log(`  first run of a new agent (initializes agent_state): ${starts[0]!.toFixed(0)} ms`);
  console.log(
    `  later runs: median ${median(warm).toFixed(0)} ms (min ${Math.min(...warm).toFixed(0)}, max ${
      Math.max(...warm).toFixed(0)
    }) over 10`,
  );
  console.log(
    `  for scale, \`penguin --version\` start to exit: median ${median(version).toFixed(0)} ms`,
  );
}

async function peakRssOfRun(dir: string): Promise<void> {
  const server = await serverWorker(TURNS);
  const { root, ws } = await setup(join(dir, "rss"), server.url);
  const child = spawn(["--root", root, "run", "-m", "go", "--workspace", ws]);
  const { code, peakKb } = await peakRss(child);
  const arrivals = await server.stop();
  console.log(
    `peak RSS (VmHWM) of one \`penguin run\` over ${arrivals.length} requests: ${
      (peakKb / 1024).toFixed(1)
    } MB (exit ${code})`,
  );
}

const dir = await Deno.makeTempDir({ prefix: "penguin-bench-cli-" });
try {
  await coldStart(dir);
  await peakRssOfRun(dir);
} finally {
  await Deno.remove(dir, { recursive: true });
}
