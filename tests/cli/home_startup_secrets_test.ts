// Tokens in the user's shell startup files (issue 26 item 4, red team Z1): a real `penguin run`
// with a temp HOME and a workspace outside it. `~/.profile` exports HF_TOKEN and a toolchain
// PATH, `~/.bashrc` (sourced by it) GH_TOKEN, `~/.zshenv` another. The model's command reads the
// startup files and prints its environment, reversed: no token reaches the model, while the
// toolchain on the snapshot's PATH and a plain variable of the profile still work.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { addServerModel, visibleTempDir } from "../support/roots.ts";

const HF = "hf_Zq8Lw3Nx7Pv2Rt5Ky9Mb4Cd6";
const GH = "ghp_Ab3De5Fg7Hj9Kl2Mn4Pq6Rs8";
const ZT = "zt_Uv1Wx3Yz5Ab7Cd9Ef2Gh4Ij6";

const reverse = (s: string) => [...s].reverse().join("");

Deno.test("run: tokens in ~/.profile, ~/.bashrc and ~/.zshenv reach neither the commands' files nor their environment", async () => {
  const base = await visibleTempDir("penguin-startup-");
  const home = join(base, "home");
  const ws = join(base, "ws");
  const root = join(base, "data");
  await Deno.mkdir(join(home, ".local", "bin"), { recursive: true });
  await Deno.mkdir(ws);
  await Deno.writeTextFile(
    join(home, ".profile"),
    `export HF_TOKEN=${HF}\nexport MY_TOOL_HOME=/usr\n` +
      `export PATH="$HOME/.local/bin:$PATH"\n. "$HOME/.bashrc"\n`,
  );
  await Deno.writeTextFile(join(home, ".bashrc"), `export GH_TOKEN=${GH}\n`);
  await Deno.writeTextFile(join(home, ".zshenv"), `export Z_TOKEN=${ZT}\n`);
  await Deno.writeTextFile(join(home, ".local", "bin", "mytool"), "#!/bin/sh\necho tool-ran\n");
  await Deno.chmod(join(home, ".local", "bin", "mytool"), 0o755);
  const server = await startModelServer({
    turns: [
      turn.toolCall("exec_command", {
        cmd: "for f in ~/.profile ~/.bashrc ~/.zshenv; do cat $f 2>&1 | rev; done; env | rev; " +
          'mytool; echo "tool-home=$MY_TOOL_HOME"',
      }),
      turn.text("done"),
    ],
  });
  try {
    await addServerModel(root, server);
    const r = await runCli(["--root", root, "run", "--workspace", ws, "-m", "go"], {
      env: { HOME: home },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.length, 2);
    const body = JSON.stringify(server.requests[1]!.body);
    // The toolchain on the snapshot's PATH and a plain variable of the profile still work.
    assert.ok(body.includes("tool-ran"), body.slice(-2000));
    assert.ok(body.includes("tool-home=/usr"), body.slice(-2000));
    for (const token of [HF, GH, ZT]) {
      assert.ok(!body.includes(token), `${token.slice(0, 3)} reached the model`);
      assert.ok(!body.includes(reverse(token)), `${token.slice(0, 3)} reached the model reversed`);
    }
  } finally {
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
});
