// The shell snapshot passes only configuration names (issue 26 item 4, red team Y5/Y6): a real
// `penguin run` with a temp HOME and a workspace outside it. `~/.profile` exports credentials under
// names no denylist knew (MYSQL_PWD, SMTP_PW, AWS_CRED, a base64 REGISTRY_BASIC, GIT_CONFIG_VALUE_0,
// an Azure connection string, a Stripe key) and credential values under configuration names (a
// user-only URL token, `?password=`, a proxy with a token in its path); the model's command prints
// its environment reversed. None reaches the model; allowlisted configuration still does.
import assert from "node:assert/strict";
import { assertNoneReached, runWithProfile } from "../support/profile_run.ts";

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

Deno.test("run: only configuration names of ~/.profile reach commands, credential values under them do not (Y5, Y6)", async () => {
  const { body, home } = await runWithProfile(
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
      `export JAVA_HOME=/usr`,
      // An editor must be a program of the host's PATH or an existing path: `mytool` is in the home.
      `export EDITOR="$HOME/.local/bin/mytool --wait"`,
    ],
    'printenv | rev; echo "java=$JAVA_HOME editor=$EDITOR"',
  );
  assert.ok(body.includes(`java=/usr editor=${home}/.local/bin/mytool --wait`), body.slice(-2000));
  assertNoneReached(body, [...SECRETS, BASIC]);
});
