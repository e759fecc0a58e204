// A command whose sandbox failed to set up has the machine probed again (under a remembered probe
// answer) only when the failure may come from the machine: penguin's own refusal of a workspace
// replaced since the plan says nothing of it, and a probe then run under load could refuse every
// later command (the workspace_swap CI failures). Real supervisor runs give the messages.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startSupervised } from "../../lib/sandbox/_process.ts";
import { WORKSPACE_FD } from "../../lib/sandbox/_supervisor.ts";
import { mayBeTheMachine } from "../../lib/sandbox/_setup_failure.ts";
import { findBash } from "../../lib/sandbox/_probe.ts";
import { withWorkspace } from "../support/roots.ts";

/** The error of a supervised `job` started with the workspace `ws` pinned at inode `ino`. */
async function setupError(ws: string, ino: number, job: string[]): Promise<string> {
  const bash = (await findBash())!;
  try {
    const child = await startSupervised({
      bash,
      kind: "group",
      job,
      roots: [{ fd: WORKSPACE_FD, path: ws, ino }],
      env: { PATH: "/usr/bin:/bin" },
      cwd: ws,
      stdin: "null",
      stdio: "merged",
      killGraceMs: 200,
      sandbox: "bwrap",
      describe: "the test command",
    });
    await child.kill();
    return "started";
  } catch (err) {
    return (err as Error).message;
  }
}

Deno.test("penguin's own refusal of a replaced workspace is not taken for a changed machine", async () => {
  await withWorkspace(async (ws) => {
    const ino = (await Deno.stat(ws)).ino!;
    const said = await setupError(ws, ino + 1, ["/bin/true"]);
    assert.match(said, /failed to set up: penguin: the workspace .* is no longer the directory/);
    assert.equal(mayBeTheMachine(said), false);
  });
});

Deno.test("a bubblewrap that failed to set up may have met a changed machine", async () => {
  await withWorkspace(async (ws) => {
    const fake = join(ws, "bwrap");
    await Deno.writeTextFile(
      fake,
      "#!/bin/sh\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\nexit 1\n",
    );
    await Deno.chmod(fake, 0o755);
    const ino = (await Deno.stat(ws)).ino!;
    const said = await setupError(ws, ino, [fake]);
    assert.match(said, /failed to set up: bwrap: Creating new namespace failed/);
    assert.equal(mayBeTheMachine(said), true);
  });
});
