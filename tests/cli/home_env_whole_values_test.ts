// Credentials under allowlisted names of `~/.profile` shaped to slip a per-word rule (red team
// final5 N1–N5): a credential word glued into one word, a token cut by `/`, `:`, `+` or `~`, a
// PATH entry that does not exist. A real `penguin run` whose model prints its environment
// reversed: none of the tokens reaches it, while real compiler flags, an existing JAVA_HOME and
// the existing PATH entries do; a plain JAVA_HOME that does not exist is dropped.
import assert from "node:assert/strict";
import { assertNoneReached, reverse, runWithProfile } from "../support/profile_run.ts";

const TOKENS = [
  "Qz7WmXkRvTpLsNb",
  "HjGfDcYxVaLkMn4",
  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzqWmLoNsHv",
  "RtYuIoPa3sDfGh:JkLzXc4VbNmQw",
  "PlOkIjUhYgT5fRd+EsWaQzXc8VbNm",
  "MnBvCx4ZaSdF~GhJkL9PoIuY",
];

const CFLAGS =
  "-O2 -g -pipe -march=x86-64 -mtune=generic -fstack-protector-strong -D_FORTIFY_SOURCE=2";

Deno.test("run: tokens cut or glued to slip the per-word rule (N1–N5) reach no command; real values do", async () => {
  const { body, home } = await runWithProfile(
    [
      `export CPPFLAGS="-DSTRIPEKEY=\\"${TOKENS[0]}\\" -DLICENSEKEY=${TOKENS[1]}"`,
      `export LDFLAGS="-Wl,--build-id -DAWS_REGION=us-east-1 -DS3=${TOKENS[2]}"`,
      `export CXXFLAGS="-O2 -DSIG=${TOKENS[3]}"`,
      `export CXX="g++ -DK=${TOKENS[4]}"`,
      `export PATH="/opt/${TOKENS[5]}/bin:$HOME/.local/bin:$PATH"`,
      `export CFLAGS="${CFLAGS}"`,
      // `sh`: a program every host's PATH has (a compiler name must be one).
      `export CC="ccache sh"`,
      `export LC_ALL=en_US.UTF-8`,
      `export JAVA_HOME=$HOME/.local`,
      `export GOROOT=$HOME/go-missing`,
    ],
    'printenv | rev; mytool; echo "path=$PATH"',
  );
  assert.ok(body.includes("tool-ran"), body.slice(-2000));
  assert.ok(body.includes(reverse(`CFLAGS=${CFLAGS}`)), "the real CFLAGS pass");
  assert.ok(body.includes(reverse("CC=ccache sh")), "CC passes");
  assert.ok(body.includes(reverse(`JAVA_HOME=${home}/.local`)), "an existing JAVA_HOME passes");
  assert.ok(!body.includes(reverse("GOROOT=")), "a GOROOT that does not exist is dropped");
  assert.ok(!body.includes(reverse("CPPFLAGS=")), "CPPFLAGS is dropped whole");
  assertNoneReached(body, [...TOKENS, "MnBvCx4ZaSdF", "GhJkL9PoIuY"]);
});
