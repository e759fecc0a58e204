// The shell snapshot's word variables pass only by closed grammars (issue 26 item 5, red team X15:
// `LDFLAGS=-DBUILD=xozdp5cu-cwjmq6n0-dorjfgxo` slipped the randomness rule, as X11–X13 had):
// compiler flags of a fixed vocabulary, a program on the host's PATH with a few flags, locales,
// time zones, terminals, the host's own user name, conda's environment. Tables of values kept and
// dropped, and one real `penguin run` whose model prints its environment reversed.
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildChildEnv } from "../../lib/sandbox/mod.ts";
import { knownPaths, plainLoginValue } from "../../lib/sandbox/login_env_values.ts";
import { assertNoneReached, reverse, runWithProfile } from "../support/profile_run.ts";

const X15 = "xozdp5cu-cwjmq6n0-dorjfgxo";

const TREE = Deno.makeTempDirSync({ prefix: "penguin-login-grammar-" });
globalThis.addEventListener("unload", () => Deno.removeSync(TREE, { recursive: true }));
const BIN = join(TREE, "bin");
const INC = join(TREE, "include");
const LIB = join(TREE, "lib");
for (const d of [BIN, INC, LIB]) Deno.mkdirSync(d);
for (const prog of ["code", "less", "emacs", "gcc", "clang++"]) {
  Deno.writeTextFileSync(join(BIN, prog), "#!/bin/sh\n");
  Deno.chmodSync(join(BIN, prog), 0o755);
}
Deno.writeTextFileSync(join(LIB, "libplain.so"), "");
/** The host: the tree is its `TMPDIR` (checked only past it), programs in its `bin`, the user `u`. */
const HOST = {
  HOME: join(TREE, "home"),
  TMPDIR: TREE,
  PATH: `${BIN}:/usr/bin:/bin`,
  USER: "u",
  LOGNAME: "u",
};
const KNOWN = knownPaths(HOST);

/** Common real values: each must pass whole. */
const KEPT: [string, string][] = [
  ["CFLAGS", "-O2 -g -pipe -fstack-protector-strong -D_FORTIFY_SOURCE=2"],
  ["CFLAGS", "-Os -g3 -march=x86-64-v3 -mtune=generic -Wall -Wextra -Werror=format-security"],
  ["CXXFLAGS", "-std=gnu++17 -O3 -fPIC -fno-rtti -fvisibility=hidden -DNDEBUG"],
  ["CPPFLAGS", `-I${INC} -isystem ${INC} -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -U_FORTIFY_SOURCE`],
  ["CPPFLAGS", "-D_POSIX_C_SOURCE=200809L -D_XOPEN_SOURCE=700 -DDEBUG"],
  ["LDFLAGS", "-Wl,-O1 -Wl,--as-needed"],
  ["LDFLAGS", "-Wl,-O1,--sort-common,--as-needed,-z,relro,-z,now"],
  ["LDFLAGS", `-L${LIB} -lplain -Wl,-rpath,${LIB}`],
  ["LDFLAGS", "-lc -lm"],
  ["EDITOR", "code --wait"],
  ["VISUAL", "emacs -nw"],
  ["PAGER", "less -R"],
  ["PAGER", "less -FRX"],
  ["CC", "ccache gcc"],
  ["CC", "gcc -m32"],
  ["CXX", `${BIN}/clang++`],
  ["LANG", "en_US.UTF-8"],
  ["LANG", "C.UTF-8"],
  ["LC_ALL", "C"],
  ["LC_CTYPE", "POSIX"],
  ["LC_TIME", "de_DE.ISO-8859-15@euro"],
  ["LANGUAGE", "de_DE:de:en"],
  ["LANGUAGE", "pt_BR:pt_PT:pt:en"],
  ["LANG", "fil_PH.UTF-8"],
  ["LC_MESSAGES", "sr_RS@latin"],
  ["TZ", "UTC"],
  ["TZ", "GMT-05:30"],
  ["TERM", "xterm-256color"],
  ["USER", "u"],
  ["LOGNAME", "u"],
  ["CONDA_SHLVL", "1"],
  ["CONDA_DEFAULT_ENV", "base"],
  ["CONDA_PROMPT_MODIFIER", "(base) "],
  ["XDG_CURRENT_DESKTOP", "ubuntu:GNOME"],
  ["HTTPS_PROXY", "http://proxy.corp.example.com:3128"],
];

/** X15, the X11–X13 shapes and tokens in every place a grammar has a word: each dropped whole. */
const DROPPED: [string, string, string][] = [
  ["X15", "LDFLAGS", `-DBUILD=${X15}`],
  ["X15 beside real flags", "LDFLAGS", `-Wl,-O1 -DBUILD=${X15}`],
  ["X11", "CFLAGS", "-O2 -DX=plltxppssctq.ylzphlnkkzps"],
  ["X11 cut by dashes", "CFLAGS", "-DX=plltxppssctq-ylzphlnkkzps"],
  ["X12", "CONDA_CHANNELS", "https://conda.example.com/t/bcdfkxqwrtplmnvzhjgsyack/main"],
  ["X13", "CONDA_MIRROR", "https://nolchkwnfzck.fdtgdjxwwcbz.example.com/main"],
  ["word-like token", "CFLAGS", "-DX=correct-horse-battery-staple"],
  ["macro off the list", "CPPFLAGS", "-DCORRECTHORSE"],
  ["macro value off its shape", "CPPFLAGS", "-D_FORTIFY_SOURCE=xozdp"],
  ["-f of free letters", "CFLAGS", "-fcorrect-horse"],
  ["-W of free letters", "CFLAGS", "-Wcorrecthorse"],
  ["-m of free letters", "CFLAGS", "-mcorrecthorse"],
  ["-march off the list", "CFLAGS", "-march=plltxppssctq"],
  ["-march extension off the list", "CFLAGS", "-march=armv8-a+plltx"],
  ["-std of free letters", "CFLAGS", "-std=c++plltx"],
  ["-I of a missing path", "CFLAGS", `-I${TREE}/plltxppssctq`],
  ["-I relative", "CFLAGS", "-Iinclude"],
  ["-isystem of a missing path", "CFLAGS", `-isystem ${TREE}/plltxppssctq`],
  ["-l of a missing library", "LDFLAGS", `-L${LIB} -lplltxppssctq`],
  ["-Wl of free letters", "LDFLAGS", "-Wl,--plltxppssctq"],
  ["-Wl,-z of free letters", "LDFLAGS", "-Wl,-z,plltx"],
  ["-Wl,-rpath of a missing path", "LDFLAGS", `-Wl,-rpath,${TREE}/plltx`],
  ["a quoted word", "CFLAGS", '-O2 "-DX=1"'],
  ["not a program", "EDITOR", "plltxppssctq"],
  ["a program and a free word", "EDITOR", `less ${X15}`],
  ["a free long flag", "PAGER", "less --plltxppssctq"],
  ["three short clusters", "EDITOR", "emacs -abcd -efgh -ijkl"],
  ["a repeated letter", "PAGER", "less -RR"],
  ["more than six letters", "PAGER", "less -abcd -efg"],
  ["a flag for the compiler only", "EDITOR", "code -DNDEBUG"],
  ["a compiler and a free macro", "CC", `gcc -DBUILD=${X15}`],
  ["a wrapper and no program", "CC", "ccache plltxppssctq"],
  ["a missing absolute program", "CXX", `${BIN}/plltxppssctq`],
  ["a free locale", "LANG", "xozdp5cu"],
  ["a free codeset", "LANG", "en_US.xozdp5cu"],
  ["a free modifier", "LC_ALL", "en_US.UTF-8@xozdp"],
  ["a free language", "LANGUAGE", "en:xozdpcu"],
  ["P29: a long list of free ll_CC", "LANGUAGE", "qzx_KV:bnm_WR:tpl_HJ:gfd_SY:czz_KQ:xvb_NM"],
  ["five listed locales", "LANGUAGE", "de_DE:de:en_GB:en:fr"],
  ["P30: a language off the list", "LC_MESSAGES", "zqk_XW"],
  ["a two-letter language off the list", "LANG", "qz_DE.UTF-8"],
  ["a territory off the list", "LANG", "en_QQ.UTF-8"],
  ["a listed language with a free territory", "LANGUAGE", "en_XQ:de"],
  ["a free time zone", "TZ", "Xozdpcu/Cwjmqn"],
  ["a zone outside zoneinfo", "TZ", "../../../etc/passwd"],
  ["a zone directory", "TZ", "America"],
  ["a free offset", "TZ", "UTC+xozd"],
  ["a free terminal", "TERM", X15],
  ["another user", "USER", "xozdp5cu"],
  ["another login", "LOGNAME", "root2"],
  ["a free conda environment", "CONDA_DEFAULT_ENV", "xozdp5cu"],
  ["a free conda prompt", "CONDA_PROMPT_MODIFIER", "(xozdp5cu) "],
  ["a free conda level", "CONDA_SHLVL", "123"],
  ["other conda words", "CONDA_CHANNELS", "conda-forge,defaults"],
  ["a free desktop", "XDG_CURRENT_DESKTOP", "GNOME:xozdpcu"],
  ["other XDG words", "XDG_MENU_PREFIX", "gnome-"],
];

Deno.test("login grammars: common real values pass whole", () => {
  for (const [name, value] of KEPT) {
    assert.equal(plainLoginValue(name, value, KNOWN), value, `${name}=${value}`);
  }
});

Deno.test("login grammars: a value with any word off its grammar is dropped whole (X15, X11–X13)", () => {
  for (const [row, name, value] of DROPPED) {
    assert.equal(plainLoginValue(name, value, KNOWN), undefined, `${row}: ${name}=${value}`);
  }
});

Deno.test("login grammars: a zoneinfo name passes only when its file exists on the host", () => {
  const exists = (() => {
    try {
      return Deno.statSync("/usr/share/zoneinfo/Europe/Berlin").isFile;
    } catch {
      return false;
    }
  })();
  const want = exists ? "Europe/Berlin" : undefined;
  assert.equal(plainLoginValue("TZ", "Europe/Berlin", KNOWN), want);
  assert.equal(plainLoginValue("TZ", ":Europe/Plltxppssctq", KNOWN), undefined);
});

Deno.test("login grammars: conda's environment is base or the one of a CONDA_PREFIX that passes", () => {
  const prefix = join(HOST.HOME, "miniconda3", "envs", "ml");
  Deno.mkdirSync(prefix, { recursive: true });
  const login = {
    CONDA_PREFIX: prefix,
    CONDA_DEFAULT_ENV: "ml",
    CONDA_PROMPT_MODIFIER: "(ml) ",
    CONDA_SHLVL: "2",
  };
  assert.deepEqual(
    Object.fromEntries(Object.keys(login).map((k) => [k, buildChildEnv({ host: HOST, login })[k]])),
    login,
  );
  // Without the prefix (or with one that does not exist) the name is free letters: dropped.
  for (const prefix of [undefined, join(HOST.HOME, "missing", "ml")]) {
    const env = buildChildEnv({ host: HOST, login: { ...login, CONDA_PREFIX: prefix ?? "" } });
    assert.equal(env["CONDA_DEFAULT_ENV"], undefined, String(prefix));
    assert.equal(env["CONDA_PROMPT_MODIFIER"], undefined, String(prefix));
    assert.equal(env["CONDA_SHLVL"], "2");
  }
});

Deno.test("run: X15 in LDFLAGS and free words under other word variables reach no command", async () => {
  const { body } = await runWithProfile(
    [
      `export LDFLAGS="-Wl,-O1 -DBUILD=${X15}"`,
      `export CFLAGS="-O2 -g -pipe -fstack-protector-strong -D_FORTIFY_SOURCE=2"`,
      `export EDITOR="vi -plltxppssctq"`,
      `export LC_MEASUREMENT=de_DE.UTF-8`,
      `export LC_PAPER=en_US.plltxppssctq`,
      `export CONDA_DEFAULT_ENV=nolchkwnfzck`,
    ],
    "printenv | rev",
  );
  assert.ok(body.includes(reverse("CFLAGS=-O2 -g -pipe -fstack-protector-strong")), "real flags");
  assert.ok(body.includes(reverse("LC_MEASUREMENT=de_DE.UTF-8")), "a real locale passes");
  // (EDITOR's token is checked below: `GIT_EDITOR=true` is always there.)
  for (const name of ["LDFLAGS", "LC_PAPER", "CONDA_DEFAULT_ENV"]) {
    assert.ok(!body.includes(reverse(`${name}=`)), `${name} is dropped whole`);
  }
  assertNoneReached(body, [X15, "xozdp5cu", "plltxppssctq", "nolchkwnfzck"]);
});
