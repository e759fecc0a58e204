// Credentials under allowlisted names of `~/.profile` (red team final4 A1–A6): a real `penguin run`
// with a temp HOME and a workspace outside it. The profile exports a UUID in CFLAGS, a conda
// `/t/<token>/` channel, a 19-character JAVA_HOME, a dotted token in a PATH entry and in CXXFLAGS,
// 31 hex digits in GOPATH and a quoted token in CC; the model's command prints its environment
// reversed. None of the tokens reaches the model, while the rest of PATH still works.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addModel } from "../../lib/state/project_config.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { visibleTempDir } from "../support/roots.ts";

const TOKENS = [
  "3f2a9c4e-8b1d-4e6f-9a7c-2d5e8f1b3c6a",
  "ab-7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f",
  "Jh7Kq2Mz9Xr4Tw1Pl8V",
  "Pa12Cd34.Ef56Gh78.Ij90Kl12",
  "Ab3dE.fG5hI.jK7lM.nO9pQ.rS1tU",
  "0a1b2c3d4e5f60718293a4b5c6d7e8f",
  "lowtok9x8y7w6v5u4t3s2r1q0p",
];

const reverse = (s: string) => [...s].reverse().join("");

Deno.test("run: tokens under allowlisted names of ~/.profile (A1–A6) reach no command; PATH still works", async () => {
  const base = await visibleTempDir("penguin-envplain-");
  const home = join(base, "home");
  const ws = join(base, "ws");
  const root = join(base, "data");
  await Deno.mkdir(join(home, ".local", "bin"), { recursive: true });
  await Deno.mkdir(ws);
  await Deno.writeTextFile(
    join(home, ".profile"),
    [
      `export CFLAGS="-O2 -DAPI_KEY=\\"${TOKENS[0]}\\""`,
      `export CONDA_CHANNELS=https://conda.anaconda.org/t/${TOKENS[1]}/private,defaults`,
      `export JAVA_HOME=/opt/${TOKENS[2]}`,
      `export PATH="/opt/${TOKENS[3]}/bin:$HOME/.local/bin:$PATH"`,
      `export CXXFLAGS="-DKEY=${TOKENS[4]}"`,
      `export GOPATH=/srv/go-${TOKENS[5]}`,
      `export CC="gcc -DTOKEN=\\"${TOKENS[6]}\\""`,
      `export CARGO_HOME=$HOME/.cargo`,
      "",
    ].join("\n"),
  );
  await Deno.writeTextFile(join(home, ".local", "bin", "mytool"), "#!/bin/sh\necho tool-ran\n");
  await Deno.chmod(join(home, ".local", "bin", "mytool"), 0o755);
  const server = await startModelServer({
    turns: [
      turn.toolCall("exec_command", {
        cmd: 'printenv | rev; mytool; echo "cargo=$CARGO_HOME"',
      }),
      turn.text("done"),
    ],
  });
  try {
    await addModel(join(root, "default_project", ".project_config.toml"), {
      provider: "custom",
      model_id: "m",
      base_url: server.baseUrl("openai-chat"),
      client_type: "openai-chat",
    }, { setDefault: true });
    const r = await runCli(["--root", root, "run", "--workspace", ws, "-m", "go"], {
      env: { HOME: home },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.length, 2);
    const body = JSON.stringify(server.requests[1]!.body);
    assert.ok(body.includes("tool-ran"), body.slice(-2000));
    assert.ok(body.includes(`cargo=${home}/.cargo`), body.slice(-2000));
    assert.ok(body.includes(reverse("PATH=")), "the printenv output is there");
    for (const token of TOKENS) {
      assert.ok(!body.includes(token), `${token} reached the model`);
      assert.ok(!body.includes(reverse(token)), `${token} reached the model reversed`);
    }
  } finally {
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
});
