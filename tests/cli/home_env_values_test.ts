// Credentials in `~/.profile` under names the old filter missed (issue 26 item 4, red team Z18): a
// real `penguin run` with a temp HOME and a workspace outside it. The profile exports URLs with a
// password, `GH_PAT`, `SENTRY_DSN`, `CI_JOB_JWT`, `MY_PASS` and a GitHub token under a plain name;
// the model's command prints its environment reversed. None of the values reaches the model, while
// PATH, LANG and a toolchain variable of the profile still do.
import assert from "node:assert/strict";
import { assertNoneReached, runWithProfile } from "../support/profile_run.ts";

const SECRETS = [
  "S3cretDbPassw0rdZZ",
  "pypiTok3nValueZZZZ",
  "Pr0xyPassw0rdZZZZ",
  "s3ntryK3yValueZZZZ",
  "PatValue0123456789ZZ",
  "eyJJwtValue0123456789ZZ",
  "MyPassValue0123456789ZZ",
  "ghp_PlainNameTokenValue0123",
];

Deno.test("run: URLs with a password, *_PAT/*_DSN/*_JWT/*_PASS and token-shaped values of ~/.profile reach no command", async () => {
  const { body, home } = await runWithProfile(
    [
      `export DATABASE_URL=postgres://app:${SECRETS[0]}@db.example.com/app`,
      `export PIP_INDEX_URL=https://__token__:${SECRETS[1]}@pypi.example.com/simple`,
      `export HTTPS_PROXY=http://u:${SECRETS[2]}@proxy.example.com:3128`,
      `export SENTRY_DSN=https://${SECRETS[3]}@o1.ingest.sentry.io/1`,
      `export GH_PAT=${SECRETS[4]}`,
      `export CI_JOB_JWT=${SECRETS[5]}`,
      `export MY_PASS=${SECRETS[6]}`,
      `export DEPLOY_THING=${SECRETS[7]}`,
      `export CARGO_HOME=$HOME/.local`,
      `export LANG=de_DE.UTF-8`,
      `export PATH="$HOME/.local/bin:$PATH"`,
    ],
    'printenv | rev; mytool; echo "cargo=$CARGO_HOME lang=$LANG"',
  );
  assert.ok(body.includes("tool-ran"), body.slice(-2000));
  assert.ok(body.includes(`cargo=${home}/.local lang=de_DE.UTF-8`), body.slice(-2000));
  assertNoneReached(body, SECRETS);
});
