// Host-side work that reads a tree file by file is refused while a running penguin's commands may
// write that tree: a command swapping a file or directory for a link to a secret between penguin's
// look and its read had the user's SSH key copied into an installed skill (attack round 28 g12)
// and into an agent snapshot (g13). Once the session has ended, both work.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addServerModel, visibleTempDir } from "../support/roots.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { penguinArgv, penguinEnv, REPO, runCli } from "../support/cli.ts";

async function mkfifo(path: string): Promise<void> {
  assert.ok((await new Deno.Command("mkfifo", { args: [path] }).output()).success);
}

Deno.test("skills install and agent snapshot wait for a running session's commands to end", async () => {
  const base = await visibleTempDir("penguin-live-writers-");
  const ws = join(base, "ws");
  const root = join(base, "data");
  await Deno.mkdir(join(ws, "sk"), { recursive: true });
  await Deno.writeTextFile(
    join(ws, "sk", "SKILL.md"),
    "---\nname: sk\ndescription: a skill the model wrote\n---\nDo things.\n",
  );
  await mkfifo(join(ws, "up"));
  await mkfifo(join(ws, "go"));
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  const server = await startModelServer({
    handler: async (_rec, i) => {
      if (i === 0) {
        return turn.of(item.toolCall("exec_command", {
          cmd: "echo up > up; cat go > /dev/null",
          yield_time_ms: 1000,
        }, { id: "c1" }));
      }
      await released;
      return turn.text("done");
    },
    maxRequests: 10,
  });
  try {
    await addServerModel(root, server);
    const child = new Deno.Command(Deno.execPath(), {
      args: [...penguinArgv(), "--root", root, "run", "--workspace", ws, "-m", "go"],
      cwd: REPO,
      env: penguinEnv(),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    assert.equal(await Deno.readTextFile(join(ws, "up")), "up\n");
    // The session's command runs: its workspace and its agent's memory are not read from under it.
    const install = await runCli(["--root", root, "skills", "install", join(ws, "sk")]);
    assert.equal(install.code, 1, install.stderr);
    assert.match(
      install.stderr,
      /skills install: cannot install ".*sk": a running penguin \(pid \d+\) lets its commands write/,
    );
    const snap = await runCli(["--root", root, "agent", "snapshot"]);
    assert.equal(snap.code, 1, snap.stderr);
    assert.match(snap.stderr, /Cannot snapshot agent default_agent: a running penguin \(pid \d+\)/);
    // Once it has ended, both work.
    await Deno.writeTextFile(join(ws, "go"), "go\n");
    release();
    const out = await child.output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const again = await runCli(["--root", root, "skills", "install", join(ws, "sk")]);
    assert.equal(again.code, 0, again.stderr);
    const snapAgain = await runCli(["--root", root, "agent", "snapshot"]);
    assert.equal(snapAgain.code, 0, snapAgain.stderr);
  } finally {
    release();
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
});
