// A `penguin run` whose stdout reader goes away (`penguin run … | head`) still ends its session:
// the renderer's last write threw, and the session's stand-ins (the workspace's `.git` and
// `penguin.jsonc` placeholders), its last walk for armed repositories and its trace close were
// skipped (attack round 29 j06): the workspace kept penguin's stand-ins, and what the walk
// renamed aside was never told.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addServerModel, visibleTempDir } from "../support/roots.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { mkfifo, startRun } from "../support/run_session.ts";

Deno.test("a run whose stdout reader went away still removes its stand-ins and tells its end", async () => {
  const base = await visibleTempDir("penguin-run-closed-stdout-");
  const ws = join(base, "ws");
  const root = join(base, "data");
  await Deno.mkdir(ws);
  await mkfifo(join(ws, "ready"));
  await mkfifo(join(ws, "go"));
  const server = await startModelServer({
    handler: (_rec, i) =>
      i === 0
        ? turn.of(item.toolCall("exec_command", {
          cmd: 'mkdir -p sub && cd sub && git init -q . && git config core.fsmonitor "true" && ' +
            "echo made > ../ready && cat ../go",
        }, { id: "c1" }))
        : turn.text("x".repeat(2000) + "\n".repeat(1) + "done"),
    maxRequests: 4,
  });
  try {
    await addServerModel(root, server);
    const child = startRun(root, ws);
    // Once the command has made its repository the reader goes away: penguin's next write to
    // stdout (the command's output) fails.
    assert.equal(await Deno.readTextFile(join(ws, "ready")), "made\n");
    await child.stdout.cancel();
    await Deno.writeTextFile(join(ws, "go"), "go\n");
    const out = await child.output();
    const err = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, err);
    const left = (await Array.fromAsync(Deno.readDir(ws))).map((e) => e.name).sort();
    assert.deepEqual(left, ["go", "ready", "sub"], err);
    assert.equal(await Deno.lstat(join(ws, "sub", ".git")).then(() => true, () => false), false);
    // The session end report (here: the last walk set the disarmed directory's HEAD aside).
    assert.match(err, /\[penguin\] renamed ".*\/sub\//);
  } finally {
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
});
