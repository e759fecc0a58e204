// Peak memory of `penguin run` while one exec_command prints a lot:
// `deno run -A bench/command_output_memory.ts [bytes...]` (default 1e9 4e9).
//
// Each size runs a real `penguin run` (deno run -P=penguin main.ts, as the binary) against the
// scripted model server in this process: the model calls exec_command once with
// `head -c <bytes> /dev/zero | tr '\0' x`, then answers with text. exec_command's timeout is
// disabled in the agent's system_config.yaml and the yield window is one hour, so the command
// runs to completion in the foreground. A vault value and OPENAI_API_KEY are set, so the output
// goes through the secret masking as in a real session. The peak RSS is VmHWM of the penguin process itself
// (the direct child of this process, not the sandboxed command), polled from /proc.
import { join } from "node:path";
import {
  addModel,
  loadOrInitAgent,
  loadSystemConfig,
  saveSystemConfig,
  setVaultEntry,
} from "../lib/state/mod.ts";
import { startModelServer, turn } from "../tests/support/model_server.ts";
import { penguinArgv, REPO } from "../tests/support/cli.ts";

const SIZES = Deno.args.length > 0 ? Deno.args.map(Number) : [1e9, 4e9];

/** penguinArgv with the extra deno flags of BENCH_DENO_FLAGS (e.g. `--v8-flags=--trace-gc`). */
function denoArgv(): string[] {
  const [run, ...rest] = penguinArgv();
  const extra = (Deno.env.get("BENCH_DENO_FLAGS") ?? "").split(" ").filter((f) => f !== "");
  return [run!, ...extra, ...rest];
}

async function setup(dir: string, url: string): Promise<{ root: string; ws: string }> {
  const root = join(dir, "data");
  const ws = join(dir, "ws");
  await Deno.mkdir(ws, { recursive: true });
  await addModel(join(root, "default_project", ".project_config.toml"), {
    provider: "custom",
    model_id: "m",
    base_url: url,
    client_type: "openai-chat",
  }, { setDefault: true });
  const agent = await loadOrInitAgent({
    root,
    projectId: "default_project",
    agentId: "default_agent",
  });
  const cfg = await loadSystemConfig(agent.paths.systemConfig);
  cfg.tools = { ...cfg.tools, builtin: [{ name: "exec_command", timeoutMs: 0 }] };
  await saveSystemConfig(agent.paths.systemConfig, cfg);
  // A vault value and an API key, so the output masking runs as it does in real sessions.
  await setVaultEntry(agent.paths.vault, "BENCH_TOKEN", "bench-vault-value-0123456789");
  return { root, ws };
}

/** Peak VmHWM (kB) of `pid` until `done()`, and the RSS split (anon / file) when VmRSS was highest. */
async function peakOf(pid: number, done: () => boolean): Promise<{ kb: number; split: string }> {
  let peakKb = 0;
  let rssKb = 0;
  let split = "";
  const field = (status: string, name: string) =>
    Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  while (!done()) {
    try {
      const status = await Deno.readTextFile(`/proc/${pid}/status`);
      peakKb = Math.max(peakKb, field(status, "VmHWM"));
      const rss = field(status, "VmRSS");
      if (rss > rssKb) {
        rssKb = rss;
        split = `anon ${(field(status, "RssAnon") / 1024).toFixed(0)} MB, file ${
          (field(status, "RssFile") / 1024).toFixed(0)
        } MB`;
      }
    } catch {
      // the process just exited
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { kb: peakKb, split };
}

async function measure(dir: string, bytes: number): Promise<void> {
  const cmd = `head -c ${bytes} /dev/zero | tr '\\0' x`;
  const server = await startModelServer({
    turns: [
      turn.toolCall("exec_command", {
        description: "print a lot",
        cmd,
        yield_time_ms: 3_600_000,
      }),
      turn.text("Done."),
    ],
  });
  try {
    const { root, ws } = await setup(join(dir, String(bytes)), server.baseUrl("openai-chat"));
    const t0 = performance.now();
    const child = new Deno.Command(Deno.execPath(), {
      args: [...denoArgv(), "--root", root, "run", "-m", "go", "--workspace", ws],
      cwd: REPO,
      env: { NO_COLOR: "1", OPENAI_API_KEY: "sk-bench-0123456789abcdefghij" },
      stdin: "null",
      stdout: Deno.env.get("BENCH_VERBOSE") ? "inherit" : "null",
      stderr: Deno.env.get("BENCH_VERBOSE") ? "inherit" : "piped",
    }).spawn();
    const stderr = Deno.env.get("BENCH_VERBOSE")
      ? Promise.resolve("")
      : new Response(child.stderr).text();
    let exited = false;
    const status = child.status.finally(() => (exited = true));
    const peak = await peakOf(child.pid, () => exited);
    const { code } = await status;
    const secs = (performance.now() - t0) / 1000;
    const fed = JSON.stringify(server.requests[1]?.body ?? "");
    const notes = [
      ...fed.matchAll(/\[(output [^\]]*|\.\.\. \d+ chars of earlier output dropped \.\.\.)\]/g),
    ]
      .map((m) => m[1]!.replace(/: \/.*/, ""));
    console.log(
      `${(bytes / 1e9).toFixed(1)} GB of command output: peak RSS (VmHWM) of penguin ${
        (peak.kb / 1024).toFixed(1)
      } MB (highest sampled RSS: ${peak.split}); exit ${code}; ${
        secs.toFixed(1)
      } s; ${server.requests.length} requests; ${notes.join("; ")}`,
    );
    if (code !== 0) console.log((await stderr).slice(-2000));
    if (Deno.env.get("BENCH_VERBOSE")) {
      const i = fed.indexOf("[output truncated");
      console.log(fed.slice(i - 100, i + 400));
    }
  } finally {
    await server.close();
  }
}

const dir = await Deno.makeTempDir({ prefix: "penguin-bench-cmdmem-" });
try {
  for (const bytes of SIZES) await measure(dir, bytes);
} finally {
  await Deno.remove(dir, { recursive: true });
}
