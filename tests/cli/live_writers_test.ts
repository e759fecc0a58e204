// Host-side work that reads a tree file by file is refused while a running penguin's commands may
// write that tree: a command swapping a file or directory for a link to a secret between penguin's
// look and its read had the user's SSH key copied into an installed skill (attack round 28 g12)
// and into an agent snapshot (g13). Once the session has ended, both work.
import assert from "node:assert/strict";
import { join } from "node:path";
import { visibleTempDir } from "../support/roots.ts";
import { runCli } from "../support/cli.ts";
import { heldRun } from "../support/run_session.ts";

Deno.test("skills install and agent snapshot wait for a running session's commands to end", async () => {
  const base = await visibleTempDir("penguin-live-writers-");
  const ws = join(base, "ws");
  const root = join(base, "data");
  await Deno.mkdir(join(ws, "sk"), { recursive: true });
  await Deno.writeTextFile(
    join(ws, "sk", "SKILL.md"),
    "---\nname: sk\ndescription: a skill the model wrote\n---\nDo things.\n",
  );
  const held = await heldRun(root, ws);
  try {
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
    const out = await held.end();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const again = await runCli(["--root", root, "skills", "install", join(ws, "sk")]);
    assert.equal(again.code, 0, again.stderr);
    const snapAgain = await runCli(["--root", root, "agent", "snapshot"]);
    assert.equal(snapAgain.code, 0, snapAgain.stderr);
  } finally {
    await held.close();
    await Deno.remove(base, { recursive: true });
  }
});
