// The sandbox probe's answer is remembered between penguin processes (lib/sandbox/_probe_cache.ts)
// under penguin's own permission set, not only under the tests' `-A`: a fact of the cache key
// penguin may not read there (the gid was one) made every command refuse to run. Two real
// `penguin run`s with a run directory of their own: the first writes probe.json, the second
// reads it (it is left as it was) and both run their command.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { addServerModel, visibleTempDir } from "../support/roots.ts";

/** Every `probe.json` under `dir`, with its modification time and inode. */
async function probeFiles(dir: string): Promise<{ path: string; stamp: string }[]> {
  const out: { path: string; stamp: string }[] = [];
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) out.push(...await probeFiles(p));
    else if (e.name === "probe.json") {
      const s = await Deno.lstat(p);
      out.push({ path: p, stamp: `${s.ino}:${s.mtime?.getTime()}` });
    }
  }
  return out;
}

Deno.test("run: the probe's answer is saved under penguin's own permissions and used by the next run", async () => {
  const base = await visibleTempDir("penguin-probe-cache-cli-");
  const ws = join(base, "ws");
  const root = join(base, "data");
  const runDir = join(base, "run");
  await Deno.mkdir(ws);
  const server = await startModelServer({
    handler: (_rec, index) =>
      index % 2 === 0
        ? turn.toolCall("exec_command", { cmd: "echo ran-$((40 + 2))" })
        : turn.text("done"),
  });
  try {
    await addServerModel(root, server);
    const env = { HOME: join(base, "home"), PENGUIN_RUN_DIR: runDir };
    await Deno.mkdir(env.HOME);
    const first = await runCli(["--root", root, "run", "--workspace", ws, "-m", "go"], { env });
    assert.equal(first.code, 0, first.stderr);
    assert.ok(JSON.stringify(server.requests[1]!.body).includes("ran-42"), "the command ran");
    const saved = await probeFiles(runDir);
    assert.equal(saved.length, 1, "one probe.json in the run directory");
    assert.equal((await Deno.lstat(saved[0]!.path)).mode! & 0o777, 0o600);

    const second = await runCli(["--root", root, "run", "--workspace", ws, "-m", "again"], {
      env,
    });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(server.requests.length, 4);
    assert.ok(JSON.stringify(server.requests[3]!.body).includes("ran-42"), "the command ran");
    assert.deepEqual(await probeFiles(runDir), saved, "the saved answer was used as it was");
  } finally {
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
});
