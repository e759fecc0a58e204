// A data root made inside the workspace of a running session is open to the commands that session
// started before the root existed: a background command rewrote the project config of a root the
// user made meanwhile (`--root ws/later config model add`), and the user's next run sent the
// prompt and key to the model's endpoint (attack round 27 c07). Penguin refuses to make, mark or
// adopt a root where a running penguin's commands may write; once that penguin has ended, it may.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addServerModel, visibleTempDir } from "../support/roots.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { modelAddArgs, runCli } from "../support/cli.ts";
import { heldRun, startRunIn } from "../support/run_session.ts";
import { rootStatus } from "../../lib/state/root_mark.ts";
import { markWhereNoCommandWrites } from "../../lib/cli/_root_gate.ts";
import { noteLiveRoots } from "../../lib/sandbox/_live_roots.ts";
import { createPolicy } from "../../lib/sandbox/policy.ts";

Deno.test("a data root is not made, marked or adopted inside the workspace of a running session", async () => {
  const base = await visibleTempDir("penguin-root-live-ws-");
  const ws = join(base, "ws");
  await Deno.mkdir(ws);
  const held = await heldRun(join(base, "data"), ws);
  try {
    // The session's command runs: a root made in its workspace now is refused.
    const later = join(ws, "later");
    const add = modelAddArgs(later, "custom", "m", "--base-url", "http://127.0.0.1:9/v1");
    const refused = await runCli(add, { adopt: false });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /Cannot use the data root .*a running penguin \(pid \d+\)/s);
    assert.notEqual(await rootStatus(later), "marked");
    // Nor is one the user (or the model) made there adopted.
    await Deno.mkdir(join(later, "default_project"), { recursive: true });
    const adopt = await runCli(["--root", later, "trust", "--data-root"], { adopt: false });
    assert.equal(adopt.code, 2, adopt.stderr);
    assert.match(adopt.stderr, /Cannot adopt the data root/);
    assert.equal(await rootStatus(later), "foreign");
    // Once the session has ended, the root may be made there.
    const out = await held.end();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    await Deno.remove(later, { recursive: true });
    const ok = await runCli(add, { adopt: false });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(await rootStatus(later), "marked");
  } finally {
    await held.close();
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a session that has run no command yet counts too: its file tools write its workspace", async () => {
  const base = await visibleTempDir("penguin-root-live-ws-");
  const ws = join(base, "ws");
  await Deno.mkdir(ws);
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  let asked!: () => void;
  const waiting = new Promise<void>((r) => asked = r);
  const server = await startModelServer({
    handler: async () => {
      asked();
      await released;
      return turn.text("done");
    },
    maxRequests: 4,
  });
  try {
    await addServerModel(join(base, "data"), server);
    const child = startRunIn(base, ws);
    // The session waits for its first answer: no command has run, a write_file could come next.
    await waiting;
    const later = join(ws, "later");
    const add = modelAddArgs(later, "custom", "m", "--base-url", "http://127.0.0.1:9/v1");
    const refused = await runCli(add, { adopt: false });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /Cannot use the data root .*a running penguin/s);
    release();
    const out = await child.output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  } finally {
    release();
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a sandbox that notes its directories between the check and the mark has the mark taken back", async () => {
  // Review of round 27's fix: the gate checked, then marked; a sandbox planned in between did not
  // hide the root (empty, unmarked at its plan) and its commands could fill the marked root.
  const base = await visibleTempDir("penguin-root-live-ws-");
  const ws = join(base, "ws");
  const later = join(ws, "later");
  await Deno.mkdir(later, { recursive: true });
  try {
    // This process's own sandbox, noted after a check that found nothing.
    await noteLiveRoots(createPolicy({ workspace: ws, home: "", hostEnv: {} }));
    await assert.rejects(
      markWhereNoCommandWrites(later, "use"),
      /Cannot use the data root .*a running penguin/s,
    );
    assert.equal(await rootStatus(later), "empty", "the mark was taken back");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a data root is not made over the workspace of a running session either", async () => {
  // A session in `R/default_project` writes what would be the project of a root `R` (its config).
  const base = await visibleTempDir("penguin-root-live-ws-");
  const root = join(base, "r");
  const ws = join(root, "default_project");
  await Deno.mkdir(ws, { recursive: true });
  try {
    await noteLiveRoots(createPolicy({ workspace: ws, home: "", hostEnv: {} }));
    await assert.rejects(
      markWhereNoCommandWrites(root, "use"),
      /Cannot use the data root .*: it holds ".*default_project", a directory the commands of a running penguin/s,
    );
    assert.equal(await rootStatus(root), "foreign", "not marked");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
