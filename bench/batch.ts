// `penguin batch run` throughput: `deno run -A bench/batch.ts [tasks=50] [turns=5] [parallel=1,2,4,8]`.
//
// Each setting runs `tasks` tasks of `turns` model requests each (turns-1 exec_command calls,
// then a final answer) against the scripted model server, with a fresh data root, and
// prints tasks per minute and the peak RSS (VmHWM, sampled from /proc) of the batch process
// and of its `penguin run` children (one per task).
import { join } from "node:path";
import { addModel } from "../lib/state/mod.ts";
import { penguinArgv, REPO } from "../tests/support/cli.ts";
import { type RecordedRequest, startModelServer, turn } from "../tests/support/model_server.ts";

const TASKS = Number(Deno.args[0] ?? 50);
const TURNS = Number(Deno.args[1] ?? 5);
const PARALLEL = (Deno.args[2] ?? "1,2,4,8").split(",").map(Number);

function toolResults(req: RecordedRequest): number {
  const msgs = (req.body as { messages?: { role?: string }[] }).messages ?? [];
  return msgs.filter((m) => m.role === "tool").length;
}

function vmHwmKb(pid: number): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

function children(pid: number): number[] {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`).trim().split(/\s+/)
      .filter((s) => s !== "").map(Number);
  } catch {
    return [];
  }
}

/** VmHWM of the batch process and of each `penguin run` child (by pid), sampled until `done`. */
async function sample(batch: number, done: () => boolean) {
  const kids = new Map<number, number>();
  let own = 0;
  while (!done()) {
    own = Math.max(own, vmHwmKb(batch) ?? 0);
    for (const c of children(batch)) {
      let cmd: string[] = [];
      try {
        cmd = (await Deno.readTextFile(`/proc/${c}/cmdline`)).split("\0");
      } catch {
        continue;
      }
      if (!cmd.includes("run") || !cmd.includes("--json")) continue;
      kids.set(c, Math.max(kids.get(c) ?? 0, vmHwmKb(c) ?? 0));
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return { own, kids: [...kids.values()].filter((k) => k > 0) };
}

const server = await startModelServer({
  maxRequests: 1_000_000,
  handler: (req) =>
    toolResults(req) < TURNS - 1
      ? turn.toolCall("exec_command", { description: "step", cmd: "true" })
      : turn.text("done"),
});
const base = await Deno.makeTempDir({ prefix: "penguin-bench-batch-", dir: "/var/tmp" });
try {
  console.log(`${TASKS} tasks × ${TURNS} turns, CPUs: ${navigator.hardwareConcurrency}`);
  console.log("parallel  wall      tasks/min  batch RSS  task RSS p50  task RSS max");
  for (const p of PARALLEL) {
    const dir = join(base, `p${p}`);
    const root = join(dir, "data");
    await addModel(join(root, "default_project", ".project_config.toml"), {
      provider: "custom",
      model_id: "m",
      base_url: server.baseUrl("openai-chat"),
      client_type: "openai-chat",
    }, { setDefault: true });
    const tasks = join(dir, "tasks.jsonl");
    await Deno.writeTextFile(
      tasks,
      Array.from(
        { length: TASKS },
        (_, i) => JSON.stringify({ id: `t${i}`, prompt: `task ${i}`, workspace: `ws/t${i}` }),
      ).join("\n"),
    );
    const t0 = performance.now();
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        ...penguinArgv(),
        "--root",
        root,
        "batch",
        "run",
        tasks,
        "--parallel",
        String(p),
        "--json",
      ],
      cwd: REPO,
      env: { NO_COLOR: "1" },
      stdout: "null",
      stderr: "piped",
    }).spawn();
    let done = false;
    const sampling = sample(child.pid, () => done);
    const out = await child.output();
    done = true;
    const wall = (performance.now() - t0) / 1000;
    const { own, kids } = await sampling;
    if (out.code !== 0) console.error(new TextDecoder().decode(out.stderr).slice(-2000));
    kids.sort((a, b) => a - b);
    const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;
    console.log(
      `${String(p).padEnd(10)}${`${wall.toFixed(1)} s`.padEnd(10)}${
        (TASKS / (wall / 60)).toFixed(1).padEnd(11)
      }${mb(own).padEnd(11)}${mb(kids[Math.floor(kids.length / 2)] ?? 0).padEnd(14)}${
        mb(kids.at(-1) ?? 0)
      }  (exit ${out.code}, ${kids.length} tasks sampled)`,
    );
  }
} finally {
  await server.close();
  await Deno.remove(base, { recursive: true });
}
