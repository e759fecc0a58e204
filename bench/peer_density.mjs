// Density against the peers: how many sessions fit at once, and what a turn costs then.
//
//   node bench/peer_density.mjs --shared /work/shared/bench --extra ours.json \
//     [--harness ours,codex,pi] [--tasks 16] [--turns 20] [--peers /work/peers] [--root DIR]
//
// For each harness in turn (never two harnesses at once), starts `tasks` one-shot tasks of
// `turns` shell turns at the same moment, each with its own HOME and workspace, against one
// scripted model (the shared side-by-side benchmark's mock-llm.mjs; harness definitions from its
// harnesses.mjs, penguin described by the same --extra JSON as bench.mjs). Every process runs
// under `/usr/bin/time -f %M`. Prints per harness: tasks finished, wall time of the whole batch,
// the sum and the largest of the processes' peak RSS (the sum is an upper bound of the memory
// the batch held at once: the peaks need not coincide), and the per-turn overhead (end of a
// response to the next request, the tool included) as min / median / max over the tasks'
// medians. Node >= 18; whole-process figures, not a test.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";

const flags = {};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (!argv[i].startsWith("--")) continue;
  const k = argv[i].slice(2);
  flags[k] = argv[i + 1] !== undefined && !argv[i + 1].startsWith("--") ? argv[++i] : "1";
}
if (!flags.shared) {
  console.error(
    "peer_density: --shared <dir of bench.mjs, harnesses.mjs, mock-llm.mjs> is required",
  );
  process.exit(2);
}
const SHARED = path.resolve(flags.shared);
const TASKS = Number(flags.tasks ?? 16);
const TURNS = Number(flags.turns ?? 20);
const PEERS = path.resolve(flags.peers ?? "/work/peers");
const ROOT = path.resolve(flags.root ?? fs.mkdtempSync("/tmp/penguin-density-"));
const { builtins, loadExtraHarnesses } = await import(path.join(SHARED, "harnesses.mjs"));
const all = [...builtins, ...(flags.extra ? loadExtraHarnesses(flags.extra) : [])];
const wanted = String(flags.harness ?? "ours,codex,pi").split(",").map((n) => {
  const h = all.find((x) => x.name === n);
  if (!h) throw new Error(`peer_density: no harness named ${n} (have ${all.map((x) => x.name)})`);
  return h;
});
const now = () => performance.timeOrigin + performance.now();
const median = (xs) => {
  const a = [...xs].sort((p, q) => p - q);
  const m = a.length >> 1;
  return a.length === 0 ? null : a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
};

/** Start the scripted model; resolves to its port once it has written the port file. */
async function startMock() {
  fs.mkdirSync(ROOT, { recursive: true });
  const portFile = path.join(ROOT, "mock.port");
  const logFile = path.join(ROOT, "mock.jsonl");
  const child = spawn(
    process.execPath,
    [
      path.join(SHARED, "mock-llm.mjs"),
      "--port",
      "0",
      "--port-file",
      portFile,
      "--log",
      logFile,
      "--quiet",
      "--idle-exit",
      "3600",
    ],
    { stdio: ["ignore", "inherit", "inherit"] },
  );
  while (!fs.existsSync(portFile) || fs.readFileSync(portFile, "utf8").trim() === "") {
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, port: Number(fs.readFileSync(portFile, "utf8")), logFile };
}

/** Run one argv under /usr/bin/time; resolves to its exit code and peak RSS in kB. */
function runTimed(h, ctx, spec, label) {
  const base = path.join(ROOT, "runs", label);
  fs.mkdirSync(path.dirname(base), { recursive: true });
  const out = fs.openSync(`${base}.log`, "w");
  const env = {
    PATH: process.env.PATH,
    HOME: ctx.home,
    USER: process.env.USER ?? "root",
    SHELL: "/bin/bash",
    LANG: "C.UTF-8",
    TERM: "dumb",
    ...h.env(ctx),
  };
  const child = spawn("/usr/bin/time", ["-f", "%M", "-o", `${base}.time`, ...spec.argv], {
    cwd: ctx.ws,
    env,
    stdio: ["ignore", out, out],
  });
  return new Promise((resolve) =>
    child.on("exit", (code) => {
      fs.closeSync(out);
      let rssKB = null;
      try {
        rssKB = Number(fs.readFileSync(`${base}.time`, "utf8").trim().split("\n").pop());
      } catch { /* no figure: counted as missing */ }
      resolve({ code, rssKB });
    })
  );
}

/** Per-turn gaps of one task id from the mock's log (ms): a tool answer's end → next request. */
function gapsOf(records, id) {
  const main = records.filter((r) => r.id === id && (r.kind === "tool" || r.kind === "final"))
    .sort((a, b) => a.t_arrive - b.t_arrive);
  const gaps = [];
  for (let i = 1; i < main.length; i++) {
    if (main[i - 1].kind === "tool") gaps.push(main[i].t_arrive - main[i - 1].t_end);
  }
  return { gaps, finished: main.some((r) => r.kind === "final") };
}

const mock = await startMock();
const baseUrl = `http://127.0.0.1:${mock.port}/v1`;
const rows = [];
for (const h of wanted) {
  const ctxs = [];
  for (let k = 0; k < TASKS; k++) {
    const ctx = {
      name: h.name,
      root: ROOT,
      home: path.join(ROOT, "homes", `${h.name}-${k}`),
      ws: path.join(ROOT, "ws", `${h.name}-${k}`),
      port: mock.port,
      baseUrl,
      origin: `http://127.0.0.1:${mock.port}`,
      peers: PEERS,
    };
    const why = h.available(ctx);
    if (why) throw new Error(`peer_density: ${h.name} unavailable: ${why}`);
    fs.mkdirSync(ctx.home, { recursive: true });
    fs.mkdirSync(ctx.ws, { recursive: true });
    const cmds = h.setup(ctx);
    for (const c of cmds ? (Array.isArray(cmds) ? cmds : [cmds]) : []) {
      const r = await runTimed(h, ctx, c, `setup-${h.name}-${k}`);
      if (r.code !== 0) throw new Error(`peer_density: setup of ${h.name} exited ${r.code}`);
    }
    ctxs.push(ctx);
  }
  const ids = ctxs.map((_, k) => `dens-${h.name}-${k}-${Math.random().toString(36).slice(2, 7)}`);
  const t0 = now();
  const results = await Promise.all(ctxs.map((ctx, k) =>
    runTimed(
      h,
      ctx,
      h.run(
        ctx,
        `[[mock turns=${TURNS} id=${
          ids[k]
        }]] This is a scripted benchmark: run exactly the shell commands requested, then reply.`,
      ),
      `task-${h.name}-${k}`,
    )
  ));
  const wallS = (now() - t0) / 1000;
  await new Promise((r) => setTimeout(r, 100)); // the mock's last log line
  const records = fs.readFileSync(mock.logFile, "utf8").split("\n").filter(Boolean).map((l) =>
    JSON.parse(l)
  );
  const per = ids.map((id) => gapsOf(records, id));
  const medians = per.map((p) => median(p.gaps)).filter((x) => x !== null);
  const rss = results.map((r) => r.rssKB).filter((x) => Number.isFinite(x));
  rows.push({
    harness: h.name,
    finished: per.filter((p, k) => p.finished && results[k].code === 0).length,
    wallS,
    rssSumMB: rss.reduce((s, x) => s + x, 0) / 1024,
    rssMaxMB: Math.max(...rss) / 1024,
    gapMin: Math.min(...medians),
    gapMedian: median(medians),
    gapMax: Math.max(...medians),
  });
  console.error(`[density] ${h.name}: done in ${wallS.toFixed(1)} s`);
}
mock.child.kill("SIGTERM");
console.log(`${TASKS} tasks at once, ${TURNS} turns each; root ${ROOT}`);
console.log(
  "| harness | finished | batch wall s | peak RSS sum MB | largest peak MB | overhead/turn ms min / median / max |",
);
console.log("| --- | --- | --- | --- | --- | --- |");
const f = (x, d = 1) => (x == null || !Number.isFinite(x) ? "n/a" : x.toFixed(d));
for (const r of rows) {
  console.log(
    `| ${r.harness} | ${r.finished}/${TASKS} | ${f(r.wallS)} | ${f(r.rssSumMB, 0)} | ${
      f(r.rssMaxMB, 0)
    } | ${f(r.gapMin)} / ${f(r.gapMedian)} / ${f(r.gapMax)} |`,
  );
}
