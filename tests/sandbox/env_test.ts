import assert from "node:assert/strict";
import {
  buildChildEnv,
  DEFAULT_PATH,
  FORCED_ENV,
  isCredentialEnvName,
  isCredentialEnvValue,
  isForbiddenEnvName,
  isLoginEnvAllowed,
  loginEnvValue,
} from "../../lib/sandbox/mod.ts";
import { isPlainPath, knownPaths } from "../../lib/sandbox/login_env_values.ts";

const HOST = {
  PATH: "/usr/local/bin:/usr/bin:.::relative/bin",
  HOME: "/home/u",
  USER: "u",
  LANG: "en_US.UTF-8",
  LC_ALL: "C.UTF-8",
  TZ: "UTC",
  TERM: "xterm-256color",
  OPENAI_API_KEY: "sk-1",
  OPENAI_BASE_URL: "https://example.test",
  ANTHROPIC_BASE_URL: "https://example.test",
  FOO_API_KEY: "foo",
  PENGUIN_HOME: "/data",
  PENGUIN_X: "x",
  CLIENT_TYPE: "openai-chat",
  LD_PRELOAD: "/evil.so",
  AWS_SECRET_ACCESS_KEY: "aws",
  HTTP_PROXY: "http://proxy:3128",
  SSH_AUTH_SOCK: "/tmp/agent.sock",
};

/**
 * The shell snapshot keeps only paths that exist on the host, so its tests
 * use a host tree in a temporary directory: `H` is the host's home and the
 * tree is its `TMPDIR` (paths under both are checked only past them).
 */
const TREE = Deno.makeTempDirSync({ prefix: "penguin-env-" });
globalThis.addEventListener("unload", () => Deno.removeSync(TREE, { recursive: true }));
const H = `${TREE}/home/u`;
/** The host's `PATH` holds the tree's `bin`, where the programs word values name are installed. */
const TREE_HOST = { ...HOST, HOME: H, TMPDIR: TREE, PATH: `${TREE}/bin:/usr/bin` };
Deno.mkdirSync(`${TREE}/bin`);
for (const prog of ["x86_64-w64-mingw32-gcc", "code", "cc"]) {
  Deno.writeTextFileSync(`${TREE}/bin/${prog}`, "#!/bin/sh\n");
  Deno.chmodSync(`${TREE}/bin/${prog}`, 0o755);
}
const KNOWN = knownPaths(TREE_HOST);

/** Creates every absolute path under the tree in `values` (`:`-separated; a file when it ends in `.pem`). */
function made<T extends Record<string, string>>(values: T): T {
  for (const v of Object.values(values)) {
    for (const p of v.split(":").filter((p) => p.startsWith(TREE + "/"))) {
      if (!p.endsWith(".pem")) Deno.mkdirSync(p, { recursive: true });
      else {
        Deno.mkdirSync(p.slice(0, p.lastIndexOf("/")), { recursive: true });
        Deno.writeTextFileSync(p, "");
      }
    }
  }
  return values;
}

Deno.test("the child environment keeps only allowlisted host variables", () => {
  const env = buildChildEnv({ host: HOST });
  assert.equal(env["HOME"], "/home/u");
  assert.equal(env["USER"], "u");
  assert.equal(env["LANG"], "en_US.UTF-8");
  assert.equal(env["LC_ALL"], "C.UTF-8");
  assert.equal(env["TZ"], "UTC");
  for (
    const k of [
      "OPENAI_API_KEY",
      "OPENAI_BASE_URL",
      "ANTHROPIC_BASE_URL",
      "FOO_API_KEY",
      "PENGUIN_HOME",
      "PENGUIN_X",
      "CLIENT_TYPE",
      "LD_PRELOAD",
      "AWS_SECRET_ACCESS_KEY",
      "HTTP_PROXY",
      "SSH_AUTH_SOCK",
    ]
  ) assert.equal(env[k], undefined, k);
});

Deno.test("explicitly allowed names pass, forbidden ones never do", () => {
  const env = buildChildEnv({
    host: HOST,
    allow: ["AWS_SECRET_ACCESS_KEY", "FOO_API_KEY", "PENGUIN_X", "OPENAI_BASE_URL"],
  });
  assert.equal(env["AWS_SECRET_ACCESS_KEY"], "aws");
  assert.equal(env["FOO_API_KEY"], undefined);
  assert.equal(env["PENGUIN_X"], undefined);
  assert.equal(env["OPENAI_BASE_URL"], undefined);
});

Deno.test("proxy variables pass only when the network is on", () => {
  assert.equal(buildChildEnv({ host: HOST, network: false })["HTTP_PROXY"], undefined);
  assert.equal(buildChildEnv({ host: HOST, network: true })["HTTP_PROXY"], "http://proxy:3128");
});

Deno.test("vault values come after the allowlist and before the forced values", () => {
  const env = buildChildEnv({
    host: HOST,
    vault: {
      HOME: "/vault-home",
      GITHUB_TOKEN: "ghp",
      TERM: "vt100",
      PAGER: "less",
      "bad-name": "x",
      LD_LIBRARY_PATH: "/x",
    },
  });
  assert.equal(env["HOME"], "/vault-home");
  assert.equal(env["GITHUB_TOKEN"], "ghp");
  assert.equal(env["TERM"], "dumb");
  assert.equal(env["PAGER"], "cat");
  assert.equal(env["bad-name"], undefined);
  assert.equal(env["LD_LIBRARY_PATH"], undefined);
});

Deno.test("the forced values are always present", () => {
  const env = buildChildEnv({ host: {} });
  for (const [k, v] of Object.entries(FORCED_ENV)) assert.equal(env[k], v, k);
  assert.deepEqual(FORCED_ENV, {
    GIT_EDITOR: "true",
    GIT_TERMINAL_PROMPT: "0",
    TERM: "dumb",
    NO_COLOR: "1",
    PAGER: "cat",
    GIT_PAGER: "cat",
  });
});

Deno.test("PATH loses relative and empty entries and falls back to a default", () => {
  assert.equal(buildChildEnv({ host: HOST })["PATH"], "/usr/local/bin:/usr/bin");
  assert.equal(buildChildEnv({ host: {} })["PATH"], DEFAULT_PATH);
  assert.equal(buildChildEnv({ host: { PATH: ".:" } })["PATH"], DEFAULT_PATH);
});

Deno.test("isForbiddenEnvName is case-insensitive", () => {
  for (
    const n of [
      "openai_api_key",
      "Penguin_Home",
      "ld_preload",
      "DYLD_INSERT_LIBRARIES",
      "minimax_base_url",
      "ZAI_API_KEY",
    ]
  ) {
    assert.ok(isForbiddenEnvName(n), n);
  }
  for (const n of ["PATH", "HOME", "GITHUB_TOKEN", "MY_BASE"]) assert.ok(!isForbiddenEnvName(n), n);
});

Deno.test("credential-like names of the shell snapshot pass only when allowed by name", () => {
  const login = {
    HF_TOKEN: "hf_x",
    GITHUB_TOKEN: "ghp_x",
    AWS_SECRET_ACCESS_KEY: "aws",
    PGPASSWORD: "pw",
    NPM_AUTH: "a",
    GOOGLE_APPLICATION_CREDENTIALS: "/c.json",
    SIGNING_KEY: "k",
    MY_APIKEY: "k",
    NVM_DIR: `${H}/.nvm`,
    KEYMAP: "us",
    AUTHOR_NAME: "Ann",
    PATH: `${H}/.local/bin:/usr/bin`,
  };
  made(login);
  const env = buildChildEnv({ host: TREE_HOST, login, allow: ["GITHUB_TOKEN"] });
  for (
    const k of [
      "HF_TOKEN",
      "AWS_SECRET_ACCESS_KEY",
      "PGPASSWORD",
      "NPM_AUTH",
      "GOOGLE_APPLICATION_CREDENTIALS",
      "SIGNING_KEY",
      "MY_APIKEY",
    ]
  ) {
    assert.ok(isCredentialEnvName(k), k);
    assert.equal(env[k], undefined, `${k} must not pass`);
  }
  assert.equal(env["GITHUB_TOKEN"], "ghp_x", "passed by name");
  assert.equal(env["NVM_DIR"], `${H}/.nvm`);
  // Names off the snapshot's allowlist are dropped too, however harmless they look.
  assert.equal(env["KEYMAP"], undefined);
  assert.equal(env["AUTHOR_NAME"], undefined);
  assert.equal(env["PATH"], `${H}/.local/bin:/usr/bin`);
  // A vault entry is the user's own choice, whatever its name.
  assert.equal(buildChildEnv({ host: HOST, login, vault: { HF_TOKEN: "v" } })["HF_TOKEN"], "v");
});

Deno.test("the shell snapshot drops credential names, URLs with a password and token formats (Z18)", () => {
  const dropped = {
    DATABASE_URL: "postgres://app:S3cret@db.example.com/app",
    PIP_INDEX_URL: "https://__token__:pypiTok@pypi.example.com/simple",
    HTTPS_PROXY: "http://u:pw@proxy.example.com:3128",
    GOPROXY: "https://proxy.golang.org,https://u:pw@goproxy.example.com,direct",
    SENTRY_DSN: "https://key@o1.ingest.sentry.io/1",
    GH_PAT: "abc",
    CI_JOB_JWT: "abc",
    MY_PASS: "abc",
    DOCKER_PASS: "abc",
    BROWSER_COOKIE: "abc",
    APP_SESSION: "abc",
    CLIENT_CERT: "-----BEGIN CERTIFICATE-----",
    SOME_VALUE: "ghp_Ab3De5Fg7Hj9Kl2Mn4Pq6Rs8",
    OTHER: "x github_pat_11ABCDEFG0123456789_abcdefghij",
    SLACK: "xoxb-1234567890-abcdef",
    KEYLESS: "sk-proj-0123456789abcdefABCDEF",
    AWS_ID: "AKIAIOSFODNN7EXAMPLE",
    JW: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
    PEM: "-----BEGIN OPENSSH PRIVATE KEY-----\nabc",
  };
  const kept = made({
    PATH: `${H}/.local/bin:${H}/.cargo/bin:/usr/bin`,
    LANG: "de_DE.UTF-8",
    NVM_DIR: `${H}/.nvm`,
    CARGO_HOME: `${H}/.cargo`,
    GOPATH: `${H}/go`,
    PYENV_ROOT: `${H}/.pyenv`,
    JAVA_HOME: `${TREE}/usr/lib/jvm/java-17`,
    NODE_EXTRA_CA_CERTS: `${TREE}/etc/ssl/corp.pem`,
    SSL_CERT_FILE: `${TREE}/etc/ssl/certs/ca.pem`,
  });
  const env = buildChildEnv({
    host: TREE_HOST,
    login: { ...dropped, ...kept },
    allow: ["MY_PASS"],
  });
  for (const [k, v] of Object.entries(dropped)) {
    if (k === "MY_PASS") continue;
    assert.notEqual(env[k], v, `${k} must not pass`);
  }
  assert.equal(env["HTTPS_PROXY"], undefined, "no host proxy either: network off");
  assert.equal(env["MY_PASS"], "abc", "passed by name");
  for (const [k, v] of Object.entries(kept)) assert.equal(env[k], v, `${k} must pass`);
  assert.ok(isCredentialEnvValue("postgres://a:b@h/db"));
  assert.ok(!isCredentialEnvValue("/usr/bin:/bin"));
  // A credential URL in the host's own proxy variable is the user's setting and still passes.
  const host = { ...HOST, HTTPS_PROXY: "http://u:pw@corp:3128" };
  const net = buildChildEnv({
    host,
    network: true,
    login: { HTTPS_PROXY: "http://u:pw@corp:3128" },
  });
  assert.equal(net["HTTPS_PROXY"], "http://u:pw@corp:3128");
});

Deno.test("the shell snapshot passes only allowlisted configuration names, and not credential values under them (Y5, Y6)", () => {
  const dropped = {
    MYSQL_PWD: "Zq9mysqlpw",
    SMTP_PW: "smtp-pw",
    AWS_CRED: "aws-cred",
    REGISTRY_BASIC: "dXNlcjpwYXNzd29yZA==",
    GIT_CONFIG_VALUE_0: "Authorization: Bearer abc123",
    STRIPE: "sk_live_abc",
    AZURE_STORAGE: "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=Zm9v",
    // Allowlisted names holding a credential value.
    GOPATH: "https://Tok3nUserOnly@github.com/x",
    NODE_PATH: "postgres://app@db/app?password=pw",
    JAVA_HOME: "/opt/jdk-Ab3De5Fg7Hj9Kl2Mn4Pq6Rs8",
    CFLAGS: "-DKEY=0123456789abcdef0123456789abcdef",
    ALL_PROXY: "http://proxy.example.com:3128/Tok3nInPath",
  };
  const kept = made({
    PATH: `${TREE}/usr/local/bin:/usr/bin`,
    MANPATH: `${TREE}/usr/share/man`,
    LC_ALL: "C.UTF-8",
    XDG_DATA_HOME: `${H}/.local/share`,
    CONDA_PREFIX: `${H}/miniconda3`,
    RUSTUP_HOME: `${H}/.rustup`,
    VIRTUAL_ENV: `${H}/venv`,
    CC: "cc",
    HTTPS_PROXY: "http://proxy.example.com:3128/",
  });
  const env = buildChildEnv({ host: TREE_HOST, network: true, login: { ...dropped, ...kept } });
  for (const k of Object.keys(dropped)) assert.equal(env[k], undefined, `${k} must not pass`);
  for (const [k, v] of Object.entries(kept)) assert.equal(env[k], v, `${k} must pass`);
  assert.equal(
    buildChildEnv({ host: HOST, login: dropped, allow: ["MYSQL_PWD"] })["MYSQL_PWD"],
    "Zq9mysqlpw",
    "passed by name",
  );
  assert.ok(isLoginEnvAllowed("LANG", "en_US.UTF-8"));
  assert.ok(!isLoginEnvAllowed("HTTPS_PROXY", "http://p:3128", false), "proxies only with network");
});

/** Red team final4 A1–A6: credentials under allowlisted names, in the shapes that slipped through. */
const A_ROWS: Record<string, [string, string]> = {
  A1: ["CFLAGS", '-O2 -DAPI_KEY="3f2a9c4e-8b1d-4e6f-9a7c-2d5e8f1b3c6a"'],
  A2: [
    "CONDA_CHANNELS",
    "https://conda.anaconda.org/t/ab-7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f/private,defaults",
  ],
  A3: ["JAVA_HOME", "/opt/Jh7Kq2Mz9Xr4Tw1Pl8V"],
  A4: ["CXXFLAGS", "-DKEY=Ab3dE.fG5hI.jK7lM.nO9pQ.rS1tU"],
  A5: ["GOPATH", "/srv/go-0a1b2c3d4e5f60718293a4b5c6d7e8f"],
  A6: ["CC", 'gcc -DTOKEN="lowtok9x8y7w6v5u4t3s2r1q0p"'],
};

Deno.test("allowlisted names of the shell snapshot drop values that are not plain (red team A1–A6)", () => {
  for (const [row, [name, value]] of Object.entries(A_ROWS)) {
    assert.equal(loginEnvValue(name, value), undefined, `${row}: ${name}=${value} must not pass`);
  }
  // The same shapes without the credential word or run are dropped too.
  assert.equal(loginEnvValue("CC", "gcc -DSERVICE_X=lowtok9x8y7w6v5u4t3s2r1q0p"), undefined);
  assert.equal(loginEnvValue("CXXFLAGS", "-DX=Ab3dE.fG5hI.jK7lM.nO9pQ.rS1tU"), undefined);
  assert.equal(loginEnvValue("CFLAGS", "-DAPI_KEY=plain"), undefined, "a credential word");
  assert.equal(loginEnvValue("CFLAGS", "-DX=3f2a9c4e-8b1d-4e6f-9a7c-2d5e8f1b3c6a"), undefined);
  // A4's PATH entry: the entry is dropped, the rest of PATH kept.
  assert.equal(loginEnvValue("PATH", "/opt/Pa12Cd34.Ef56Gh78.Ij90Kl12/bin:/usr/bin"), "/usr/bin");
  const env = buildChildEnv({
    host: HOST,
    login: {
      ...Object.fromEntries(Object.values(A_ROWS)),
      PATH: "/opt/Pa12Cd34.Ef56Gh78.Ij90Kl12/bin:/usr/bin",
    },
  });
  for (const [name, value] of Object.values(A_ROWS)) assert.notEqual(env[name], value, name);
  assert.equal(env["PATH"], "/usr/bin");
});

Deno.test("normal toolchain values of the shell snapshot stay plain and pass whole", () => {
  const path = [
    `${H}/.cargo/bin`,
    `${H}/.nvm/versions/node/v20.11.1/bin`,
    `${TREE}/opt/homebrew/bin`,
    `${TREE}/opt/homebrew/opt/python@3.12/libexec/bin`,
    `${H}/.local/bin`,
    `${H}/.pyenv/shims`,
    `${H}/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin`,
    `${TREE}/run/current-system/sw/bin`,
    `${H}/Library/Application Support/JetBrains/Toolbox/scripts`,
    `${TREE}/usr/lib/jvm/java-21-openjdk-amd64/bin`,
    "/usr/bin",
  ].join(":");
  made({ dirs: `${TREE}/usr/local/include:${TREE}/opt/openssl@3/lib:${TREE}/opt/lib` });
  const kept: Record<string, string> = made({
    PATH: path,
    MANPATH: `:${TREE}/opt/man`,
    CFLAGS: `-O2 -g -march=native -I${TREE}/usr/local/include -DNDEBUG -std=c11`,
    LDFLAGS: `-L${TREE}/opt/openssl@3/lib -Wl,-rpath,${TREE}/opt/lib`,
    CC: "x86_64-w64-mingw32-gcc",
    JAVA_HOME: `${TREE}/usr/lib/jvm/java-17-openjdk-amd64`,
    GOPATH: `${H}/go`,
    TZ: "UTC",
    EDITOR: "code --wait",
    NVM_INC: `${H}/.nvm/versions/node/v20.11.1/include/node`,
  });
  for (const [k, v] of Object.entries(kept)) assert.equal(loginEnvValue(k, v, false, KNOWN), v, k);
  // Only directly under /nix/store does a 32-character hash pass (as a shape; the path must exist too).
  const nix = "/nix/store/0123456789abcdfghijklmnpqrsvwxyz-bash-interactive-5.2p26/bin";
  assert.ok(isPlainPath(nix));
  assert.ok(!isPlainPath("/opt/0123456789abcdfghijklmnpqrsvwxyz-bash/bin"));
});

Deno.test("paths under the host's HOME and TMPDIR are checked only past them; the host's PATH entries pass", () => {
  const home = `${TREE}/var/tmp/penguin-home-9ba68c612d869e1d`;
  const tmp = `${TREE}/var/folders/3c/k1r8_9bs1bx8b5y0_8ydl5bm0000gn/T`;
  made({ a: `${home}/.local/bin:${home}/Jh7Kq2Mz9Xr4Tw1Pl8V/bin:${home}/.cargo:${tmp}` });
  made({ b: `${home}/jdk-0a1b2c3d4e5f60718293` });
  const host = {
    PATH: "/opt/vscode/bin/0123456789abcdef0123456789abcdef01234567/bin:/usr/bin",
    HOME: home,
    TMPDIR: tmp + "/",
  };
  const env = buildChildEnv({
    host,
    login: {
      PATH: `${home}/.local/bin:${home}/Jh7Kq2Mz9Xr4Tw1Pl8V/bin:${host.PATH}`,
      CARGO_HOME: `${home}/.cargo`,
      TMPDIR: tmp + "/",
      JAVA_HOME: `${home}/jdk-0a1b2c3d4e5f60718293`,
    },
  });
  assert.equal(env["PATH"], `${home}/.local/bin:${host.PATH}`);
  assert.equal(env["CARGO_HOME"], `${home}/.cargo`);
  assert.equal(env["TMPDIR"], tmp + "/");
  assert.equal(env["JAVA_HOME"], undefined, "past the home, components are still checked");
  // Without those host values, the same random-looking paths are not plain.
  assert.equal(loginEnvValue("CARGO_HOME", `${home}/.cargo`), undefined);
  assert.equal(loginEnvValue("TMPDIR", tmp), undefined);
});
