// Credentials under allowlisted names of `~/.profile` (red team final4 A1–A6): a real `penguin run`
// with a temp HOME and a workspace outside it. The profile exports a UUID in CFLAGS, a conda
// `/t/<token>/` channel, a 19-character JAVA_HOME, a dotted token in a PATH entry and in CXXFLAGS,
// 31 hex digits in GOPATH and a quoted token in CC; the model's command prints its environment
// reversed. None of the tokens reaches the model, while the rest of PATH still works.
import assert from "node:assert/strict";
import { assertNoneReached, reverse, runWithProfile } from "../support/profile_run.ts";

const TOKENS = [
  "3f2a9c4e-8b1d-4e6f-9a7c-2d5e8f1b3c6a",
  "ab-7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f",
  "Jh7Kq2Mz9Xr4Tw1Pl8V",
  "Pa12Cd34.Ef56Gh78.Ij90Kl12",
  "Ab3dE.fG5hI.jK7lM.nO9pQ.rS1tU",
  "0a1b2c3d4e5f60718293a4b5c6d7e8f",
  "lowtok9x8y7w6v5u4t3s2r1q0p",
];

Deno.test("run: tokens under allowlisted names of ~/.profile (A1–A6) reach no command; PATH still works", async () => {
  const { body, home } = await runWithProfile(
    [
      `export CFLAGS="-O2 -DAPI_KEY=\\"${TOKENS[0]}\\""`,
      `export CONDA_CHANNELS=https://conda.anaconda.org/t/${TOKENS[1]}/private,defaults`,
      `export JAVA_HOME=/opt/${TOKENS[2]}`,
      `export PATH="/opt/${TOKENS[3]}/bin:$HOME/.local/bin:$PATH"`,
      `export CXXFLAGS="-DKEY=${TOKENS[4]}"`,
      `export GOPATH=/srv/go-${TOKENS[5]}`,
      `export CC="gcc -DTOKEN=\\"${TOKENS[6]}\\""`,
      `export CARGO_HOME=$HOME/.local`,
    ],
    'printenv | rev; mytool; echo "cargo=$CARGO_HOME"',
  );
  assert.ok(body.includes("tool-ran"), body.slice(-2000));
  assert.ok(body.includes(`cargo=${home}/.local`), body.slice(-2000));
  assert.ok(body.includes(reverse("PATH=")), "the printenv output is there");
  assertNoneReached(body, TOKENS);
});
