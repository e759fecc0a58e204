// Tokens in the user's shell startup files (issue 26 item 4, red team Z1): a real `penguin run`
// with a temp HOME and a workspace outside it. `~/.profile` exports HF_TOKEN and a toolchain
// PATH, `~/.bashrc` (sourced by it) GH_TOKEN, `~/.zshenv` another. The model's command reads the
// startup files and prints its environment, reversed: no token reaches the model, while the
// toolchain on the snapshot's PATH and a plain variable of the profile still work.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addMyTool, assertNoneReached, runInHome } from "../support/profile_run.ts";

const HF = "hf_Zq8Lw3Nx7Pv2Rt5Ky9Mb4Cd6";
const GH = "ghp_Ab3De5Fg7Hj9Kl2Mn4Pq6Rs8";
const ZT = "zt_Uv1Wx3Yz5Ab7Cd9Ef2Gh4Ij6";

Deno.test("run: tokens in ~/.profile, ~/.bashrc and ~/.zshenv reach neither the commands' files nor their environment", async () => {
  const { body } = await runInHome(
    async (home) => {
      await addMyTool(home);
      await Deno.writeTextFile(
        join(home, ".profile"),
        `export HF_TOKEN=${HF}\nexport MY_TOOL_HOME=/usr\n` +
          `export PATH="$HOME/.local/bin:$PATH"\n. "$HOME/.bashrc"\n`,
      );
      await Deno.writeTextFile(join(home, ".bashrc"), `export GH_TOKEN=${GH}\n`);
      await Deno.writeTextFile(join(home, ".zshenv"), `export Z_TOKEN=${ZT}\n`);
    },
    "for f in ~/.profile ~/.bashrc ~/.zshenv; do cat $f 2>&1 | rev; done; env | rev; " +
      'mytool; echo "tool-home=$MY_TOOL_HOME"',
  );
  // The toolchain on the snapshot's PATH and a plain variable of the profile still work.
  assert.ok(body.includes("tool-ran"), body.slice(-2000));
  assert.ok(body.includes("tool-home=/usr"), body.slice(-2000));
  assertNoneReached(body, [HF, GH, ZT]);
});
