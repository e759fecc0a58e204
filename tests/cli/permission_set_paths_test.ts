// Where the user's machine differs from the test runner's, as penguin's permission set sees it
// (attack round 24 perms a04, a11).
import assert from "node:assert/strict";
import { join } from "node:path";
import { turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";

Deno.test("a session starts and runs commands with another sh first on the user's PATH", async () => {
  // Deno lets penguin run the `sh` first on PATH at startup; penguin ran /usr/bin/sh, was refused,
  // and took the workspace for one it cannot enter (NixOS, busybox, a ~/bin/sh).
  await withModelRoot({
    turns: [
      turn.toolCall("exec_command", { cmd: "echo from-the-sandbox", description: "echo" }),
      turn.text("done"),
    ],
  }, async (sb, server) => {
    const bin = join(sb.base, "bin");
    await Deno.mkdir(bin);
    await Deno.copyFile(await Deno.realPath("/bin/sh"), join(bin, "sh"));
    await Deno.chmod(join(bin, "sh"), 0o755);
    const r = await runCli(
      ["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "echo"],
      { env: { PATH: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}` } },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(JSON.stringify(server.requests.at(-1)?.body), /from-the-sandbox/);
  });
});

Deno.test({
  name: "a workspace under /dev/shm is refused with what penguin may not do, not as missing",
  ignore: !isDir("/dev/shm"),
  fn: async () => {
    const ws = await Deno.makeTempDir({ dir: "/dev/shm", prefix: "penguin-shm-ws-" });
    try {
      await withModelRoot({ turns: [turn.text("never")] }, async (sb, server) => {
        const r = await runCli(["--root", sb.root, "run", "--workspace", ws, "-m", "hi"]);
        assert.notEqual(r.code, 0);
        assert.match(
          r.stderr,
          /penguin may not look at the workspace \/dev\/shm\/.*: its permission set/,
        );
        assert.doesNotMatch(r.stderr, /does not exist/);
        assert.equal(server.requests.length, 0);
      });
    } finally {
      await Deno.remove(ws, { recursive: true });
    }
  },
});

function isDir(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}
