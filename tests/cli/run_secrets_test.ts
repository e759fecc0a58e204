// `penguin run` end to end: vault values and API keys never leave penguin in clear text
// (trace files, request bodies, stdout) even when a command prints them.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addModel } from "../../lib/state/project_config.ts";
import { turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { assertNoPieceOf, readAll, setVault } from "../support/secrets.ts";
import { withModelRoot } from "../support/roots.ts";

const VAULT_TOKEN = "vlt-7c3a91e2d4b85f60";
const ENV_KEY = "sk-proj-Env0a1b2c3d4e5f6g7h8i9";
const SESSION_KEY = "sess-key-5566778899qq";
const INLINE_KEY = "ds-9876543210zzyyxx";
const OTHER_KEY = "mis-Other4d5e6f7g8h9i0j";

/** Fail when any 6-char piece of `secret` occurs in `text`. */
function assertNoPiece(text: string, secret: string, where: string): void {
  assertNoPieceOf(text, [secret], where, 6);
}

Deno.test("run masks vault values and API keys that commands print: not in traces, request bodies or stdout", async () => {
  await withModelRoot({
    turns: [
      turn.toolCall("exec_command", { cmd: "echo token=$MY_TOKEN", description: "show" }),
      turn.toolCall("exec_command", { cmd: "cat keys.txt", description: "keys" }),
      turn.text("Seen both."),
    ],
  }, async (sb, server) => {
    const configPath = join(sb.root, "default_project", ".project_config.toml");
    await addModel(configPath, {
      provider: "custom",
      model_id: "m",
      base_url: server.baseUrl("openai-chat"),
      client_type: "openai-chat",
      api_key: SESSION_KEY,
    }, { setDefault: true });
    await addModel(configPath, { provider: "deepseek", model_id: "x", api_key: INLINE_KEY });
    await setVault(sb.root, "MY_TOKEN", VAULT_TOKEN);
    await Deno.writeTextFile(
      join(sb.workspace, "keys.txt"),
      `env=${ENV_KEY}\nsession=${SESSION_KEY}\ninline=${INLINE_KEY}\nother=${OTHER_KEY}\n`,
    );

    const r = await runCli(
      ["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "Show the token."],
      // A key the catalog does not name: penguin's permission set cannot read it by name.
      { env: { OPENAI_API_KEY: ENV_KEY, MISTRAL_API_KEY: OTHER_KEY } },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.length, 3);

    const bodies = JSON.stringify(server.requests.map((q) => q.body));
    assert.ok(
      bodies.includes("token=[redacted:vault:MY_TOKEN]"),
      "the vault marker reached the model",
    );
    assert.ok(
      bodies.includes(
        "env=[redacted:api_key:OPENAI_API_KEY]\\nsession=[redacted:api_key:custom]\\ninline=[redacted:api_key:deepseek]\\nother=[redacted:api_key:MISTRAL_API_KEY]",
      ),
      "the API key markers reached the model",
    );
    const traces = await readAll(
      join(sb.root, "default_project", "agents", "default_agent", "traces"),
    );
    assert.ok(traces.includes("token=[redacted:vault:MY_TOKEN]"));
    for (const secret of [VAULT_TOKEN, ENV_KEY, SESSION_KEY, INLINE_KEY, OTHER_KEY]) {
      assertNoPiece(bodies, secret, "a request body");
      assertNoPiece(traces, secret, "a trace file");
      assertNoPiece(r.stdout, secret, "stdout");
      assertNoPiece(r.stderr, secret, "stderr");
    }
  });
});
