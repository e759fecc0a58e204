// Start to first request, and what a start loads:
// `deno run -A bench/start_breakdown.ts [runs=11] [other checkout ...]`.
//
// Runs penguin exactly as the `penguin` task of each checkout's deno.json does (this repository
// first; another checkout, e.g. /work/main, to compare), in rounds: each round runs every
// checkout once per phase, the order flipped each round, so the checkouts share the machine's
// drift. Medians over the rounds, whole-process wall time:
//   bare     `deno run` of a one-line script (the floor: Deno's own start)
//   version  `penguin --version` to exit
//   help     `penguin run --help` to exit (the run command's modules loaded, nothing done)
//   start    `penguin run -m …` spawned → its first request reaching the scripted model
//   resume   `penguin run --resume latest -m …` spawned → its first request
// The breakdown of start: Deno (bare), penguin's entry (version − bare), the run command's
// modules (help − version), the work before the request (start − help).
//
// Then, once per checkout, the modules each phase reads, from `strace -f -e openat` (every
// source file Deno opens is opened once per process: there is no cache of compiled modules it
// reads instead): repository modules, npm package files, and the npm packages they belong to.
import { join } from "node:path";
import { startModelServer, turn } from "../tests/support/model_server.ts";
import { denoDir, REPO } from "../tests/support/cli.ts";
import { addModelArgv, checkoutsOf, quietCommand, taskArgv } from "./_checkouts.ts";

const ARGS = Deno.args.filter((a) => a !== "--no-strace");
const RUNS = Number(ARGS[0] ?? 11);
const CHECKOUTS = checkoutsOf(REPO, ARGS.slice(1));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const base = await Deno.realPath(
  await Deno.makeTempDir({ dir: "/var/tmp", prefix: "penguin-bench-start-" }),
);
const home = join(base, "home");
const ws = join(base, "ws");
await Deno.mkdir(home);
await Deno.mkdir(ws);
const oneLine = join(base, "one.ts");
await Deno.writeTextFile(oneLine, 'console.log("1");\n');
const env = { NO_COLOR: "1", HOME: home, DENO_DIR: denoDir(), PATH: Deno.env.get("PATH") ?? "" };

let arrived: (() => void) | undefined;
const server = await startModelServer({
  maxRequests: 1_000_000,
  handler: () => {
    arrived?.();
    return turn.text("done");
  },
});
const baseUrl = server.baseUrl("openai-chat");

/** Run `args` (deno's); ms from spawn to exit, or to the model's first request with `request`. */
async function timed(args: string[], request = false): Promise<number> {
  const seen = request ? new Promise<number>((r) => (arrived = () => r(performance.now()))) : null;
  const t0 = performance.now();
  const child = quietCommand(Deno.execPath(), args, env, ws).spawn();
  const out = await child.output();
  const t1 = performance.now();
  arrived = undefined;
  if (!out.success) {
    throw new Error(`${args.slice(-6).join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return (seen ? await seen : t1) - t0;
}

const roots = new Map<string, string>();
for (const [i, c] of CHECKOUTS.entries()) {
  const root = join(base, `root${i}`);
  roots.set(c, root);
  await timed([...taskArgv(c), ...addModelArgv(root, baseUrl)]);
}

const phases: Record<string, (c: string) => string[]> = {
  bare: () => ["run", "--quiet", "--no-config", oneLine],
  version: (c) => [...taskArgv(c), "--version"],
  help: (c) => [...taskArgv(c), "run", "--help"],
  start: (c) => [
    ...taskArgv(c),
    ...["run", "--root", roots.get(c)!, "--workspace", ws, "--approve", "allow-all", "-m", "hi"],
  ],
  resume: (c) => [...taskArgv(c), "run", "--root", roots.get(c)!, "--resume", "latest", "-m", "go"],
};
const requests = new Set(["start", "resume"]);

// Warm-up: Deno's module cache, and a session for resume to find.
for (const c of CHECKOUTS) {
  for (const [p, argv] of Object.entries(phases)) await timed(argv(c), requests.has(p));
}

const times = new Map<string, number[]>();
for (let r = 0; r < RUNS; r++) {
  const order = r % 2 === 0 ? CHECKOUTS : [...CHECKOUTS].reverse();
  for (const [p, argv] of Object.entries(phases)) {
    for (const c of order) {
      const key = `${c}\0${p}`;
      if (!times.has(key)) times.set(key, []);
      times.get(key)!.push(await timed(argv(c), requests.has(p)));
    }
  }
}

/** What a run of `args` opens: repository modules, npm files, npm packages. */
async function modulesRead(checkout: string, args: string[]): Promise<[number, number, number]> {
  const log = join(base, "strace.log");
  const out = await new Deno.Command("strace", {
    args: ["-f", "-qq", "-e", "trace=openat", "-o", log, Deno.execPath(), ...args],
    env,
    clearEnv: true,
    cwd: ws,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
  if (!out.success) return [NaN, NaN, NaN];
  const opened = new Set<string>();
  for (const m of (await Deno.readTextFile(log)).matchAll(/openat\([^"]*"([^"]+)"[^)]*\) = \d/g)) {
    opened.add(m[1]!);
  }
  const source = /\.(ts|js|mjs|cjs|json)$/;
  const repo = [...opened].filter((p) => p.startsWith(checkout) && source.test(p));
  const npmRoot = join(denoDir(), "npm") + "/";
  const npm = [...opened].filter((p) => p.startsWith(npmRoot) && /\.(js|mjs|cjs)$/.test(p));
  const packages = new Set(npm.map((p) => {
    const [, first, second] = p.slice(npmRoot.length).split("/"); // registry/name/version/…
    return first!.startsWith("@") ? `${first}/${second}` : first!;
  }));
  return [repo.length, npm.length, packages.size];
}

const fmt = (x: number) => `${x.toFixed(1)} ms`.padStart(10);
for (const c of CHECKOUTS) {
  const m = (p: string) => median(times.get(`${c}\0${p}`)!);
  console.log(`\n${c}  (medians of ${RUNS} rounds, whole process)`);
  for (const p of Object.keys(phases)) console.log(`  ${p.padEnd(8)}${fmt(m(p))}`);
  console.log("  start, broken down:");
  console.log(`    Deno itself (bare)              ${fmt(m("bare"))}`);
  console.log(`    penguin's entry (version-bare)  ${fmt(m("version") - m("bare"))}`);
  console.log(`    run's modules (help-version)    ${fmt(m("help") - m("version"))}`);
  console.log(`    work to 1st request (start-help)${fmt(m("start") - m("help"))}`);
  if (Deno.args.includes("--no-strace")) continue;
  console.log("  read (repo modules / npm files / npm packages):");
  for (const p of ["version", "help", "start", "resume"]) {
    const [repo, npm, pk] = await modulesRead(c, phases[p]!(c));
    console.log(
      `    ${p.padEnd(8)}${String(repo).padStart(5)} ${String(npm).padStart(5)} ${
        String(pk).padStart(4)
      }`,
    );
  }
}
await server.close();
await Deno.remove(base, { recursive: true });
