// The shell snapshot passes only configuration names (issue 26 item 4, red team Y5/Y6): a real
// `penguin run` with a temp HOME and a workspace outside it. `~/.profile` exports credentials under
// names no denylist knew (MYSQL_PWD, SMTP_PW, AWS_CRED, a base64 REGISTRY_BASIC, GIT_CONFIG_VALUE_0,
// an Azure connection string, a Stripe key) and credential values under configuration names (a
// user-only URL token, `?password=`, a proxy with a token in its path); the model's command prints
// its environment reversed. None reaches the model; allowlisted configuration still does.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addModel } from "../../lib/state/project_config.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { visibleTempDir } from "../support/roots.ts";

const SECRETS = [
  "MysqlPwdValueZZ01",
  "SmtpPwValueZZ02",
  "AwsCredValueZZ03",
  "UserOnlyTokValueZZ05",
  "QueryPwValueZZ06",
  "ProxyPathValueZZ07",
  "AzureAcctKeyValueZZ08",
  "GitCfgValueZZ09",
  "StripeValueZZ10",
];
const BASIC = btoa("u:RegBasicValueZZ04");

const reverse = (s: string) => [...s].reverse().join("");

Deno.test("run: only configuration names of ~/.profile reach commands, credential values under them do not (Y5, Y6)", async () => {
  const base = await visibleTempDir("penguin-envallow-");
  const home = join(base, "home");
  const ws = join(base, "ws");
  const root = join(base, "data");
  await Deno.mkdir(home, { recursive: true });
  await Deno.mkdir(ws);
  await Deno.writeTextFile(
    join(home, ".profile"),
    [
      `export MYSQL_PWD=${SECRETS[0]}`,
      `export SMTP_PW=${SECRETS[1]}`,
      `export AWS_CRED=${SECRETS[2]}`,
      `export REGISTRY_BASIC=${BASIC}`,
      `export GOPATH=https://${SECRETS[3]}@github.com/o/r.git`,
      `export NODE_PATH="postgres://app@db.example.com/app?password=${SECRETS[4]}"`,
      `export HTTPS_PROXY=http://proxy.example.com:3128/${SECRETS[5]}`,
      `export AZURE_STORAGE_CONNECTION_STRING="AccountName=a;AccountKey=${SECRETS[6]}"`,
      `export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=http.extraHeader`,
      `export GIT_CONFIG_VALUE_0="Authorization: Bearer ${SECRETS[7]}"`,
      `export STRIPE_SK=sk_live_${SECRETS[8]}`,
      `export JAVA_HOME=/opt/jdk`,
      `export EDITOR=nano`,
      "",
    ].join("\n"),
  );
  const server = await startModelServer({
    turns: [
      turn.toolCall("exec_command", {
        cmd: 'printenv | rev; echo "java=$JAVA_HOME editor=$EDITOR"',
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
    assert.ok(body.includes("java=/opt/jdk editor=nano"), body.slice(-2000));
    for (const secret of [...SECRETS, BASIC]) {
      assert.ok(!body.includes(secret), `${secret} reached the model`);
      assert.ok(!body.includes(reverse(secret)), `${secret} reached the model reversed`);
    }
  } finally {
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
});
