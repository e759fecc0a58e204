// Listing benchmark: `deno run -A bench/session_list.ts [count, default 10000]`.
//
// Generates `count` sessions from a real PenguinHarness trace (the fixture
// 02-tool-calls.jsonl, ~29 KB: a ~20 KB system prompt in the session_meta,
// the tool list, three tool calls), each with its own id, spread over 30
// date directories; one in ten is made large (~1 MB, so only its head and
// tail are read). Then times `listSessions` (page cache warm; median of 3).
// Target: 10,000 sessions in < 1 s.
import { join } from "node:path";
import { listSessions } from "../lib/session/mod.ts";

const TEMPLATE = "/work/shared/fixtures/penguin-traces/02-tool-calls.jsonl";
const TEMPLATE_ID = "session-2026-11-29-19-26-10-d9c88b0d";

async function generate(root: string, count: number): Promise<number> {
  const template = await Deno.readTextFile(TEMPLATE);
  const lines = template.split("\n").filter((l) => l !== "");
  // The large part goes after the first request, where tool outputs pile up.
  const head = lines.slice(0, 10).join("\n") + "\n";
  const rest = lines.slice(10).join("\n") + "\n";
  const filler = lines.find((l) => l.includes('"tool_call_output"'))! + "\n";
  const big = filler.repeat(Math.ceil((1 << 20) / filler.length));
  const traces = join(root, "default_project", "agents", "default_agent", "traces");
  let bytes = 0;
  for (let d = 0; d < 30; d++) {
    await Deno.mkdir(join(traces, `2026-01-${String(d + 1).padStart(2, "0")}`), {
      recursive: true,
    });
  }
  const enc = new TextEncoder();
  const jobs: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const day = String((i % 30) + 1).padStart(2, "0");
    const id = `session-2026-01-${day}-10-00-00-${i.toString(16).padStart(8, "0")}`;
    const text = (head + (i % 10 === 0 ? big : "") + rest).replaceAll(TEMPLATE_ID, id);
    const data = enc.encode(text);
    bytes += data.length;
    jobs.push(Deno.writeFile(join(traces, `2026-01-${day}`, `${id}_001.jsonl`), data));
    if (jobs.length >= 64) await Promise.all(jobs.splice(0));
  }
  await Promise.all(jobs);
  return bytes;
}

const count = Number(Deno.args[0] ?? 10000);
const root = await Deno.makeTempDir({ prefix: "penguin-bench-list-" });
try {
  const bytes = await generate(root, count);
  console.log(`${count} sessions, ${(bytes / 1024 / 1024).toFixed(0)} MB of traces`);
  const scope = { root, projectId: "default_project", agentId: "default_agent" };
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < 4; i++) {
    const t0 = performance.now();
    rows = (await listSessions(scope)).length;
    if (i > 0) times.push(performance.now() - t0); // the first run warms the page cache
  }
  times.sort((a, b) => a - b);
  console.log(
    `listSessions: ${rows} rows in ${times[1]!.toFixed(0)} ms (median of 3; min ${
      times[0]!.toFixed(0)
    } ms, max ${times[2]!.toFixed(0)} ms)`,
  );
} finally {
  await Deno.remove(root, { recursive: true });
}
