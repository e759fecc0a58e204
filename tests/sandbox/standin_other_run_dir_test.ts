// Two penguins on one workspace with different run directories (`PENGUIN_RUN_DIR`): A makes the
// stand-ins (an empty `.git`, an inert `penguin.jsonc`) and records them in its own registry; B
// takes them for the user's files and holds them while its command runs. A ends meanwhile and
// cannot remove them. When B's session ends, no process holds them: B removes them from A's
// registry, and nothing of penguin is left in the workspace (attack round 25 concgit c01: both
// stayed for good). This test process is B; A is a penguin process of its own.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, resolvePlan, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { lockProtected } from "../../lib/sandbox/_standin_registry.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { exists, visibleTempDir } from "./_helpers.ts";
import { readUntil } from "../support/child_lines.ts";
import { useTestRunDir } from "../support/run_dir.ts";

useTestRunDir();

const lib = (p: string) => JSON.stringify(new URL(`../../lib/sandbox/${p}`, import.meta.url).href);

/** A's script: its session makes the stand-ins with one command, ends on a line on stdin. */
const A_SCRIPT = (ws: string) => `
import { createPolicy, spawnSandboxed } from ${lib("mod.ts")};
import { keepStandIns } from ${lib("_placeholders.ts")};
const session = keepStandIns();
const policy = createPolicy({ workspace: ${JSON.stringify(ws)}, home: "",
  hostEnv: { PATH: "/usr/bin:/bin" } });
const child = await spawnSandboxed({ shell: "true", policy, stdin: "null" });
await child.status;
console.log("made");
const buf = new Uint8Array(16);
await Deno.stdin.read(buf);
console.log(JSON.stringify(await session.end()));
`;

Deno.test({
  name:
    "stand-ins of a penguin with another run directory, held here while it ended, go when this session ends",
  ignore: !bwrap,
  async fn() {
    const base = await visibleTempDir("penguin-standin-other-run-");
    const ws = join(base, "ws");
    await Deno.mkdir(ws);
    const made = [join(ws, ".git"), join(ws, "penguin.jsonc")];
    const b = keepStandIns();
    const a = new Deno.Command(Deno.execPath(), {
      args: ["eval", A_SCRIPT(ws)],
      env: { PENGUIN_RUN_DIR: join(base, "runA") },
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const lines = a.stdout.pipeThrough(new TextDecoderStream()).getReader();
    try {
      // B's plan (its sweep of stand-ins included) sees A's as files it must keep.
      const policy = createPolicy({ workspace: ws, home: "", hostEnv: { PATH: "/usr/bin:/bin" } });
      assert.match(await readUntil(lines, "made"), /made/);
      for (const p of made) assert.ok(await exists(p), `A made ${p}`);
      await resolvePlan(policy, ws);
      // B's command runs with them mounted: held as the user's files.
      const release = await lockProtected(made);
      const w = a.stdin.getWriter();
      await w.write(new TextEncoder().encode("end\n"));
      await w.close();
      const left = await readUntil(lines, "]");
      assert.equal((await a.status).code, 0);
      assert.match(left, /\[\]/, "A reports nothing stuck: they were held");
      for (const p of made) assert.ok(await exists(p), `${p} stays while B holds it`);
      release();
      // A later command of B's still runs (and holds them again while it does).
      const r = await spawnSandboxed({ shell: "true", policy, stdin: "null" });
      assert.equal((await r.status).code, 0);
      assert.deepEqual(await b.end(), []);
      for (const p of made) assert.equal(await exists(p), false, `${p} is left`);
    } finally {
      await lines.cancel().catch(() => {});
      await a.status;
      await Deno.remove(base, { recursive: true });
    }
  },
});
