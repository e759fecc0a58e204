// The value rule of the shell snapshot judges whole values (issue 26 item 5, red team final5
// N1–N5): a token cut once by `:`, `/`, `+` or `~`, kept under 16 characters or glued to a
// credential word is dropped; paths pass only when they exist on the host; the values real
// machines have keep passing.
import assert from "node:assert/strict";
import { join } from "node:path";
import { knownPaths, plainLoginValue } from "../../lib/sandbox/login_env_values.ts";

/** Red team final5 N1–N5, the values of new/n01_env_values_more.sh. */
const ATTACKS: [string, string, string][] = [
  ["N1", "CPPFLAGS", '-DSTRIPEKEY="Qz7WmXkRvTpLsNb" -DLICENSEKEY=HjGfDcYxVaLkMn4'],
  ["N1 without the credential word", "CPPFLAGS", '-DSTRIPE="Qz7WmXkRvTpLsNb"'],
  ["N1 without the credential word", "CPPFLAGS", "-DLICENSE=HjGfDcYxVaLkMn4"],
  ["N1 credential word only", "CPPFLAGS", "-DSTRIPEKEY=1"],
  ["glued credential word as a prefix", "CFLAGS", "-DKEYSTRIPE=1"],
  [
    "N2",
    "LDFLAGS",
    "-Wl,--build-id -DAWS_REGION=us-east-1 -DS3=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzqWmLoNsHv",
  ],
  ["N3", "CFLAGS", "-O2 -DSIG=RtYuIoPa3sDfGh:JkLzXc4VbNmQw"],
  ["N4", "CXX", "g++ -DK=PlOkIjUhYgT5fRd+EsWaQzXc8VbNm"],
  ["N5 as a single path", "JAVA_HOME", "/opt/MnBvCx4ZaSdF~GhJkL9PoIuY"],
  ["a token cut by blanks into short words", "CFLAGS", "RtYuIoPa sDfGhJkL zXc4VbNm QwErTy4U"],
  ["a lowercase token cut by dashes", "CFLAGS", "-DX=k9tq-2lm7-rv4w-p8zn"],
  ["22 random letters", "CFLAGS", "-DX=qzxkvbnmwrtplhjgfdsayc"],
  ["a token as a URL host label", "CONDA_CHANNELS", "https://k9tq-2lm7-rv4w.example.com/main"],
  ["random letters as a URL host label", "CONDA_CHANNELS", "https://qzxkvbnmwrtplhjgfdsayc.x.org/"],
];

/** Values of real machines that must keep passing whole (the mingw compilers are on the test host's `PATH`). */
const REAL: [string, string][] = [
  [
    "CFLAGS",
    "-O2 -g -pipe -march=x86-64 -mtune=generic -fstack-protector-strong -D_FORTIFY_SOURCE=2",
  ],
  ["CFLAGS", "-O2 -g -march=native -DNDEBUG -std=c11"],
  ["CFLAGS", "-march=armv8.2-a+crypto+fp16 -mcpu=cortex-a53 -Wno-unused-parameter"],
  ["CXXFLAGS", "-O2 -fno-omit-frame-pointer -fno-strict-aliasing"],
  ["LDFLAGS", "-Wl,-O1,--sort-common,--as-needed,-z,relro,-z,now"],
  ["CC", "ccache gcc"],
  ["CC", "x86_64-w64-mingw32-gcc"],
  ["CXX", "i686-w64-mingw32-g++"],
  ["LANG", "en_US.UTF-8"],
  ["LC_ALL", "zh_CN.GB18030"],
  ["HTTPS_PROXY", "http://proxy.corp.example.com:3128"],
];

/** Real values the closed grammars drop on purpose: macros off the list, conda's free words. */
const REAL_DROPPED: [string, string][] = [
  ["CXXFLAGS", "-O2 -DHAVE_CONFIG_H"],
  ["CONDA_CHANNELS", "conda-forge,defaults"],
  ["CONDA_CHANNELS", "https://conda.anaconda.org/conda-forge,https://repo.anaconda.com/pkgs/main"],
];

const TREE = Deno.makeTempDirSync({ prefix: "penguin-login-values-" });
globalThis.addEventListener("unload", () => Deno.removeSync(TREE, { recursive: true }));
/** The host: its home and TMPDIR in the temp tree (paths under them are checked past them). */
const HOST = { HOME: join(TREE, "home"), TMPDIR: TREE, PATH: `${TREE}/bin:/usr/bin:/bin` };
Deno.mkdirSync(join(TREE, "bin"));
for (const prog of ["gcc", "x86_64-w64-mingw32-gcc", "i686-w64-mingw32-g++"]) {
  Deno.writeTextFileSync(join(TREE, "bin", prog), "#!/bin/sh\n");
  Deno.chmodSync(join(TREE, "bin", prog), 0o755);
}
const KNOWN = knownPaths(HOST);

Deno.test("values shaped to slip the per-word rule are dropped whole (red team final5 N1–N5)", () => {
  for (const [row, name, value] of ATTACKS) {
    assert.equal(plainLoginValue(name, value, KNOWN), undefined, `${row}: ${name}=${value}`);
  }
});

Deno.test("values of real machines pass whole", () => {
  for (const [name, value] of REAL) assert.equal(plainLoginValue(name, value, KNOWN), value, name);
  for (const [name, value] of REAL_DROPPED) {
    assert.equal(plainLoginValue(name, value, KNOWN), undefined, `${name}=${value}`);
  }
});

Deno.test("paths pass only when they exist on the host; a search path keeps its directories", () => {
  const jdk = join(TREE, "usr", "lib", "jvm", "java-17-openjdk-amd64");
  const bin = join(HOST.HOME, ".local", "bin");
  const cert = join(TREE, "ca.pem");
  Deno.mkdirSync(jdk, { recursive: true });
  Deno.mkdirSync(bin, { recursive: true });
  Deno.writeTextFileSync(cert, "");
  assert.equal(plainLoginValue("JAVA_HOME", jdk, KNOWN), jdk);
  assert.equal(plainLoginValue("JAVA_HOME", "/usr/lib/jvm/java-99-missing", KNOWN), undefined);
  assert.equal(plainLoginValue("SSL_CERT_FILE", cert, KNOWN), cert);
  assert.equal(plainLoginValue("SSL_CERT_FILE", cert + ".missing", KNOWN), undefined);
  assert.equal(plainLoginValue("CARGO_HOME", "~/.local/bin", KNOWN), "~/.local/bin");
  assert.equal(plainLoginValue("CARGO_HOME", "~/.cargo", KNOWN), undefined, "no ~/.cargo");
  // N5: the token's entry does not exist and is dropped; a file is no search-path entry.
  const path = `/opt/MnBvCx4ZaSdF~GhJkL9PoIuY/bin:${bin}:${cert}:/usr/bin::/bin`;
  assert.equal(plainLoginValue("PATH", path, KNOWN), `${bin}:/usr/bin::/bin`);
  assert.equal(plainLoginValue("GOPATH", "/srv/go-missing", KNOWN), undefined);
  // An existing directory in the hidden home is still judged by its shape.
  const odd = join(HOST.HOME, "Jh7Kq2Mz9Xr4Tw1Pl8V");
  Deno.mkdirSync(odd);
  assert.equal(plainLoginValue("PATH", `${odd}:/usr/bin`, KNOWN), "/usr/bin");
});

Deno.test("word values: existing paths and programs are verified, the rest is judged", () => {
  const inc = join(TREE, "opt", "x86_64-linux-gnu", "include");
  Deno.mkdirSync(inc, { recursive: true });
  assert.equal(plainLoginValue("CFLAGS", `-I${inc} -O2`, KNOWN), `-I${inc} -O2`);
  // An existing path whose names look random is not verified.
  const odd = join(HOST.HOME, "Qz7WmXkRvTpLsNbHj");
  Deno.mkdirSync(odd);
  assert.equal(plainLoginValue("CFLAGS", `-I${odd}`, KNOWN), undefined);
  // `sh` is on the host's PATH; a token is not a program.
  assert.equal(plainLoginValue("CC", "sh -c", KNOWN), "sh -c");
  assert.equal(plainLoginValue("CC", "Qz7WmXkRvTpLsNb", KNOWN), undefined);
});
