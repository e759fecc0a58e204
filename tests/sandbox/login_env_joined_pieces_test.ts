// The login environment judges a token's pieces joined (issue 26 item 5, red team final6 X11–X13):
// random letters cut by `.` into runs under 16, a 24-letter few-vowel URL path segment, a URL host
// made of two random 12-letter labels. Unit tables of attack values (dropped) and real values
// (kept), and one real `penguin run` whose model prints its environment reversed.
import assert from "node:assert/strict";
import { plainLoginValue } from "../../lib/sandbox/login_env_values.ts";
import { assertNoneReached, reverse, runWithProfile } from "../support/profile_run.ts";

const DOTTED = "plltxppssctq.ylzphlnkkzps";
const PATH_SEG = "bcdfkxqwrtplmnvzhjgsyack";
const LABELS = "nolchkwnfzck.fdtgdjxwwcbz";

/** Red team final6 X11–X13 (new/n15_env_url_letters_dots.sh) and variants. */
const ATTACKS: [string, string, string][] = [
  ["X11", "CFLAGS", `-O2 -DX=${DOTTED}`],
  ["X11 cut by dashes", "CFLAGS", "-DX=plltxppssctq-ylzphlnkkzps"],
  ["X11 in three parts", "CXXFLAGS", "-DX=plltxpps.sctqylzp.hlnkkzps"],
  ["X12", "CONDA_CHANNELS", `https://conda.example.com/t/${PATH_SEG}/main`],
  ["X12 as a query value", "PIP_INDEX_URL", `https://pypi.example.com/simple?t=${PATH_SEG}`],
  ["X13", "CONDA_MIRROR", `https://${LABELS}.example.com/main`],
  ["X13 under co.uk", "CONDA_MIRROR", `https://${LABELS}.example.co.uk/main`],
  [
    "a token cut by `/` in a URL path",
    "CONDA_CHANNELS",
    "https://x.example.com/wr7vwb/ngwgyp/yniwt2",
  ],
];

/** Values of real machines that must keep passing whole. */
const REAL: [string, string][] = [
  ["HTTPS_PROXY", "https://my-company-prod.example.com:8443/"],
  ["HTTP_PROXY", "http://proxy-eu-west-1.corp.example.com:3128"],
  ["NO_PROXY", "localhost,127.0.0.1,.corp.example.com"],
  ["CFLAGS", "-DNDEBUG -march=x86-64"],
  ["LANG", "en_US.UTF-8"],
];

Deno.test("login values: tokens cut into pieces judged joined are dropped (X11–X13)", () => {
  for (const [row, name, value] of ATTACKS) {
    assert.equal(plainLoginValue(name, value), undefined, `${row}: ${name}=${value}`);
  }
});

Deno.test("login values: real proxies with dotted, dashed and multi-segment parts pass", () => {
  for (const [name, value] of REAL) assert.equal(plainLoginValue(name, value), value, name);
});

Deno.test("run: a login-profile token cut by dots, in a URL path or across host labels reaches no command", async () => {
  const { body } = await runWithProfile(
    [
      `export CFLAGS="-O2 -DX=${DOTTED}"`,
      `export CONDA_CHANNELS="https://conda.example.com/t/${PATH_SEG}/main"`,
      `export CONDA_MIRROR="https://${LABELS}.example.com/main"`,
      `export CXXFLAGS="-DNDEBUG -march=x86-64"`,
    ],
    "printenv | rev",
  );
  assert.ok(body.includes(reverse("CXXFLAGS=-DNDEBUG -march=x86-64")), "real flags pass");
  assertNoneReached(body, [DOTTED, PATH_SEG, "nolchkwnfzck", "fdtgdjxwwcbz", "ylzphlnkkzps"]);
});
