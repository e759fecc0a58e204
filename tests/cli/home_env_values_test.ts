// Credentials in `~/.profile` under names the old filter missed (issue 26 item 4, red team Z18): a
// real `penguin run` with a temp HOME and a workspace outside it. The profile exports URLs with a
// password, `GH_PAT`, `SENTRY_DSN`, `CI_JOB_JWT`, `MY_PASS` and a GitHub token under a plain name;
// the model's command prints its environment reversed. None of the values reaches the model, while
// PATH, LANG and a toolchain variable of the profile still do.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addModel } from "../../lib/state/project_config.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { visibleTempDir } from "../support/roots.ts";

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

const reverse = (s: string) => [...s].reverse().join("");

Deno.test("run: URLs with a password, *_PAT/*_DSN/*_JWT/*_PASS and token-shaped values of ~/.profile reach no command", async () => {
  const base = await visibleTempDir("penguin-envvals-");
  const home = join(base, "home");
  const ws = join(base, "ws");
  const root = join(base, "data");
  await Deno.mkdir(join(home, ".local", "bin"), { recursive: true });
  await Deno.mkdir(ws);
  await Deno.writeTextFile(
    join(home, ".profile"),
    [
      `export DATABASE_URL=postgres://app:${SECRETS[0]}@db.example.com/app`,
      `export PIP_INDEX_URL=https://__token__:${SECRETS[1]}@pypi.example.com/simple`,
      `export HTTPS_PROXY=http://u:${SECRETS[2]}@proxy.example.com:3128`,
      `export SENTRY_DSN=https://${SECRETS[3]}@o1.ingest.sentry.io/1`,
      `export GH_PAT=${SECRETS[4]}`,
      `export CI_JOB_JWT=${SECRETS[5]}`,
      `export MY_PASS=${SECRETS[6]}`,
      `export DEPLOY_THING=${SECRETS[7]}`,
      `export CARGO_HOME=$HOME/.cargo`,
      `export LANG=de_DE.UTF-8`,
      `export PATH="$HOME/.local/bin:$PATH"`,
      "",
    ].join("\n"),
  );
  await Deno.writeTextFile(join(home, ".local", "bin", "mytool"), "#!/bin/sh\necho tool-ran\n");
  await Deno.chmod(join(home, ".local", "bin", "mytool"), 0o755);
  const server = await startModelServer({
    turns: [
      turn.toolCall("exec_command", {
        cmd: 'printenv | rev; mytool; echo "cargo=$CARGO_HOME lang=$LANG"',
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
    assert.ok(body.includes(`cargo=${home}/.cargo lang=de_DE.UTF-8`), body.slice(-2000));
    for (const secret of SECRETS) {
      assert.ok(!body.includes(secret), `${secret} reached the model`);
      assert.ok(!body.includes(reverse(secret)), `${secret} reached the model reversed`);
    }
  } finally {
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
});
