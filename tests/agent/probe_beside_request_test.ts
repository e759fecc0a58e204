// The sandbox probe runs beside the session's first model request, not before it: the request
// does not wait for it, every command does, and a failed probe still stops every command.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createAgent, type Session } from "../../lib/agent/mod.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { _pinDefaultBwrap, detectSandbox } from "../../lib/sandbox/detect.ts";
import { type ModelServer, turn, type TurnHandler } from "../support/model_server.ts";
import { visibleTempDir, withModelRoot } from "../support/roots.ts";
import { useTestRunDir } from "../support/run_dir.ts";
import { BWRAP_USABLE } from "../sandbox/_bwrap.ts";
import { collect } from "./_support.ts";

useTestRunDir();

/**
 * A bubblewrap in a directory of its own (outside every workspace) that runs the shell text
 * `probe(dir)` before the probe's sandbox, then the real one.
 */
async function fakeBwrap(probe: (dir: string) => string): Promise<{ dir: string; path: string }> {
  const dir = await visibleTempDir("penguin-fake-bwrap-");
  const path = join(dir, "bwrap");
  // The probe's sandbox is the only one with a workspace named penguin-sandbox-probe-*.
  await Deno.writeTextFile(
    path,
    `#!/bin/bash\ncase "$*" in *penguin-sandbox-probe-*) ${
      probe(dir)
    } ;; esac\nexec /usr/bin/bwrap "$@"\n`,
  );
  await Deno.chmod(path, 0o755);
  return { dir, path };
}

/** Run `body` in a session whose default bubblewrap is `bwrap`, answered by `handler`. */
async function withBwrapSession(
  bwrap: string,
  handler: TurnHandler,
  body: (session: Session, server: ModelServer) => Promise<void>,
): Promise<void> {
  _pinDefaultBwrap(bwrap);
  try {
    await withModelRoot({ handler }, async (sb, server) => {
      const agent = await createAgent({ root: sb.root });
      const session = await agent.createSession({ workspaceDir: sb.workspace });
      try {
        await body(session, server);
      } finally {
        await session.dispose();
      }
    });
  } finally {
    _pinDefaultBwrap(undefined);
  }
}

function outputsOf(stream: OmniMessage[]): string[] {
  return stream.filter((m) => m.payload.type === "tool_call_output")
    .map((m) => String((m.payload as { output?: unknown }).output));
}

Deno.test({
  name: "the first request goes out while the sandbox probe is held; the command waits for it",
  ignore: !BWRAP_USABLE,
  fn: async () => {
    const fake = await fakeBwrap((dir) => `[ -e ${dir}/released ] || read -r _ <${dir}/gate`);
    const gate = join(fake.dir, "gate");
    await new Deno.Command("mkfifo", { args: [gate] }).output();
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await Deno.writeTextFile(join(fake.dir, "released"), "");
      // Opening the gate for writing unblocks a probe waiting on it; one that is not waiting
      // (any more) is not waited for.
      const w = await Deno.open(gate, { write: true, read: true });
      await w.write(new TextEncoder().encode("go\n"));
      w.close();
    };
    // A failsafe for the failing case only (a probe the session waits for, which only the first
    // request would release): it ends the test instead of hanging it.
    const failsafe = setTimeout(release, 30_000);
    let heldAtFirstRequest: boolean | undefined;
    try {
      await withBwrapSession(fake.path, async (_req, i) => {
        if (i === 0) {
          heldAtFirstRequest = !released;
          await release();
          return turn.toolCall("exec_command", { cmd: "echo ran-after-probe", description: "x" });
        }
        return turn.text("done");
      }, async (session, server) => {
        const stream = await collect(session.run("go", { approve: "allow-all" }));
        assert.equal(heldAtFirstRequest, true, "the first request came while the probe was held");
        assert.equal(server.requests.length, 2);
        assert.match(outputsOf(stream)[0] ?? "", /ran-after-probe/);
      });
    } finally {
      clearTimeout(failsafe);
      await release();
      await Deno.remove(fake.dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "a failed sandbox probe stops every command of the session with its error",
  ignore: !BWRAP_USABLE,
  fn: async () => {
    const fake = await fakeBwrap(() =>
      "echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1"
    );
    try {
      // What the probe concludes, as `penguin sandbox check` shows it.
      const failure = (await detectSandbox({ bwrapPath: fake.path })).failure;
      assert.match(failure ?? "", /setting up uid map/);
      await withBwrapSession(fake.path, (_req, i) => {
        if (i < 2) {
          return turn.toolCall("exec_command", { cmd: `touch ran${i}`, description: "x" });
        }
        return turn.text("done");
      }, async (session, server) => {
        const stream = await collect(session.run("go", { approve: "allow-all" }));
        assert.equal(server.requests.length, 3);
        const outputs = outputsOf(stream);
        assert.equal(outputs.length, 2);
        for (const [i, out] of outputs.entries()) {
          assert.ok(
            out.includes(`Cannot run "touch ran${i}" (sandbox workspace-write): ${failure}`),
            `${out}\n(the probe said: ${failure})`,
          );
          assert.match(out, /Run "penguin sandbox check" for details and fixes/);
          const ran = await Deno.lstat(join(session.workspaceDir, `ran${i}`)).then(
            () => true,
            () => false,
          );
          assert.equal(ran, false, `touch ran${i} did not run`);
        }
      });
    } finally {
      await Deno.remove(fake.dir, { recursive: true });
    }
  },
});
