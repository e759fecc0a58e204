// Credential files planted inside the toolchain directories a hidden home shows (issue 26 item
// 4, red team N6), found by name in each one's top three levels: a real `penguin run` with a
// temp HOME and the workspace outside it. A `.netrc`
// in `~/.cache/pip`, a `settings-security.xml` deep in `~/.m2/repository`, a `.credentials` in
// `~/.deno` and a `credentials.toml` in `~/.cargo/registry` are hidden from the model's commands
// (read reversed, so masking plays no part); the toolchains' other files still read.
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { reverse, runInHome } from "../support/profile_run.ts";

const PLANTED: Record<string, string> = {
  ".cache/pip/.netrc": "machine pypi login u password NetrcPw7Kq2Zx9",
  ".m2/repository/org/acme/settings-security.xml": "<master>M2Mast3rKeyQw8Er</master>",
  ".deno/.credentials": "DenoCredTok5Yh6Uj",
  ".cargo/registry/cfg/credentials.toml": 'token = "CargoRegTok1Aa2Bb"',
  // Other letter cases and names that say what they hold (red team Z21).
  ".cache/pip/NETRC": "machine x password UpperNetrc3Hj7Kl",
  ".m2/repository/Credentials.json": '{"t":"M2CapCred4Gh8Jk"}',
  ".cargo/registry/a/credentials.yaml": "token: CargoYaml5Df9Gh",
  ".local/share/uv/application_default_credentials.json": '{"k":"AppDefCred6Sd2Fg"}',
};

Deno.test("run: credential files in the top levels of shown toolchain directories are hidden", async () => {
  const reads = Object.keys(PLANTED).map((rel) => `cat ~/${rel} 2>/dev/null | rev`).join("; ");
  const { body } = await runInHome(async (home) => {
    for (const [rel, text] of Object.entries(PLANTED)) {
      await Deno.mkdir(dirname(join(home, rel)), { recursive: true });
      await Deno.writeTextFile(join(home, rel), text + "\n");
    }
    await Deno.writeTextFile(join(home, ".cache/pip/wheel-ok.txt"), "wheel-cache-ok\n");
  }, `${reads}; cat ~/.cache/pip/wheel-ok.txt`);
  assert.ok(body.includes("wheel-cache-ok"), body.slice(-2000));
  for (const [rel, text] of Object.entries(PLANTED)) {
    const secret = /[A-Za-z0-9]{14,}/.exec(text)![0];
    assert.ok(!body.includes(reverse(secret)), `~/${rel} was read`);
  }
});
