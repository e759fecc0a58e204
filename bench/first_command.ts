// The first command's latency with a big home:
// `deno run -A bench/first_command.ts [runs=11] [home=/root] [think=0] [other checkout ...]`.
//
// Runs `penguin run` exactly as the `penguin` task of each checkout's deno.json does (this
// repository first; another checkout, e.g. /work/main, to compare) with HOME set to `home` (one
// holding big toolchains: the credential walk, the login shell and the sandbox plan all read
// it), against a scripted model whose first answer is one exec_command call and whose second is
// text; with `think` ms, the first answer starts that long after the request (a real model
// thinks before its first call). In rounds, each round running every checkout once, the order flipped each round, so the
// checkouts share the machine's drift. Medians over the rounds:
//   start    spawned → the first request reaching the scripted model
//   command  the first call sent (its answer begun) → the second request (the command's
//            output) reaching the model: model stream, tool dispatch, sandbox set-up, command
//   exit     spawned → the process's exit
// Each checkout runs with its own PENGUIN_RUN_DIR (a temp directory), so nothing the machine's
// other penguins share is touched.
import { join } from "node:path";
import { startModelServer, turn } from "../tests/support/model_server.ts";
import { denoDir, REPO } from "../tests/support/cli.ts";

const RUNS = Number(Deno.args[0] ?? 11);
const HOME = Deno.args[1] ?? "/root";
const THINK = Number(Deno.args[2] ?? 0);
const CHECKOUTS = [REPO, ...Deno.args.slice(3).map((p) => (p.endsWith("/") ? p : `${p}/`))];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const base = await Deno.realPath(
  await Deno.makeTempDir({ dir: "/var/tmp", prefix: "penguin-bench-cmd-" }),
);
const ws = join(base, "ws");
await Deno.mkdir(ws);

/** The argv of the `penguin` task of `checkout` (its flags, config and entry by absolute path). */
function taskArgv(checkout: string): string[] {
  const task = JSON.parse(Deno.readTextFileSync(`${checkout}deno.json`)).tasks.penguin as string;
  const words = task.split(/\s+/);
  return [...words.slice(1, -1), "--config", `${checkout}deno.json`, `${checkout}main.ts`];
}

let seen: number[] = [];
const server = await startModelServer({
  maxRequests: 1_000_000,
  handler: async (rec) => {
    const n = (rec.body as { messages?: unknown[] }).messages?.length ?? 0;
    if (n > 2) {
      seen.push(performance.now());
      return turn.text("done");
    }
    seen.push(performance.now());
    if (THINK > 0) await new Promise((r) => setTimeout(r, THINK));
    seen.push(performance.now());
    return turn.toolCall("exec_command", { cmd: "echo first-command-out" });
  },
});
const baseUrl = server.baseUrl("openai-chat");

const roots = new Map<string, { root: string; run: string }>();
for (const [i, c] of CHECKOUTS.entries()) {
  const root = join(base, `root${i}`);
  const run = join(base, `run${i}`);
  roots.set(c, { root, run });
  await timed(c, [
    ...["--root", root, "config", "model", "add", "--provider", "custom", "--model-id", "m"],
    ...["--base-url", baseUrl, "--api-key", "dummy", "--client-type", "openai-chat"],
    ...["--context-window", "1000000", "--set-default"],
  ]);
}

/** Run penguin of `checkout` with `args`; the request times seen and the exit time (ms). */
async function timed(checkout: string, args: string[]): Promise<number[]> {
  seen = [];
  const env = {
    NO_COLOR: "1",
    HOME,
    DENO_DIR: denoDir(),
    PATH: Deno.env.get("PATH") ?? "",
    PENGUIN_RUN_DIR: roots.get(checkout)?.run ?? join(base, "run-setup"),
  };
  const t0 = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: [...taskArgv(checkout), ...args],
    env,
    clearEnv: true,
    cwd: ws,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const t1 = performance.now();
  if (!out.success) {
    throw new Error(`${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return [...seen.map((t) => t - t0), t1 - t0];
}

const runArgs = (c: string) => [
  ...["run", "--root", roots.get(c)!.root, "--workspace", ws, "--approve", "allow-all"],
  ...["-m", "run it"],
];

// Warm-up: Deno's module cache, the run directory's seccomp file.
for (const c of CHECKOUTS) await timed(c, runArgs(c));

const rows = new Map<string, { start: number[]; command: number[]; exit: number[] }>();
for (const c of CHECKOUTS) rows.set(c, { start: [], command: [], exit: [] });
for (let r = 0; r < RUNS; r++) {
  for (const c of r % 2 === 0 ? CHECKOUTS : [...CHECKOUTS].reverse()) {
    const [first, answered, second, exit] = await timed(c, runArgs(c));
    if (second === undefined || exit === undefined) throw new Error("no second request");
    const row = rows.get(c)!;
    row.start.push(first!);
    row.command.push(second - answered!);
    row.exit.push(exit);
  }
}

const fmt = (x: number) => `${x.toFixed(1)} ms`.padStart(10);
for (const c of CHECKOUTS) {
  const row = rows.get(c)!;
  console.log(`\n${c}  HOME=${HOME}, think ${THINK} ms  (medians of ${RUNS} rounds)`);
  console.log(`  start → 1st request      ${fmt(median(row.start))}`);
  console.log(`  1st tool call → output   ${fmt(median(row.command))}`);
  console.log(`  spawn → exit             ${fmt(median(row.exit))}`);
}
await server.close();
await Deno.remove(base, { recursive: true });
