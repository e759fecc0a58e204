import assert from "node:assert/strict";
import { resolveModel, resolveModelRef } from "../../lib/models/resolve.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { parseProjectConfig, type ProjectConfig } from "../../lib/state/project_config.ts";

function cfgOf(toml: string): ProjectConfig {
  return parseProjectConfig(toml, "/r/p/.project_config.toml");
}

const TWO_GATEWAYS = `
default_model = { provider = "openrouter", model_id = "deepseek/deepseek-v4-pro" }

[[models]]
provider = "openrouter"
model_id = "deepseek/deepseek-v4-pro"

[[models]]
provider = "fireworks"
model_id = "deepseek/deepseek-v4-pro"
`;

Deno.test("the same model id under two providers resolves to each group's own URL and key", () => {
  const cfg = cfgOf(TWO_GATEWAYS);
  const env = {
    OPENROUTER_API_KEY: "or-key",
    FIREWORKS_API_KEY: "fw-key",
    OPENAI_API_KEY: "openai-key",
  };
  const a = resolveModel(
    cfg,
    { provider: "openrouter", model_id: "deepseek/deepseek-v4-pro" },
    env,
  );
  const b = resolveModel(cfg, { provider: "fireworks", model_id: "deepseek/deepseek-v4-pro" }, env);
  assert.deepEqual(a.endpoint, {
    provider: "openrouter",
    model_id: "deepseek/deepseek-v4-pro",
    protocol: "openai-chat",
    base_url: "https://openrouter.ai/api/v1",
    api_key: "or-key",
  });
  assert.equal(b.endpoint.base_url, "https://api.fireworks.ai/inference/v1");
  assert.equal(b.endpoint.api_key, "fw-key");
  assert.equal(a.key_source, "env");
  assert.equal(a.key_env, "OPENROUTER_API_KEY");
});

Deno.test("one group's env var is never used for another group", () => {
  const cfg = cfgOf(TWO_GATEWAYS);
  const env = {
    OPENROUTER_API_KEY: "or-key",
    OPENAI_API_KEY: "openai-key",
    DEEPSEEK_API_KEY: "ds",
  };
  assert.throws(
    () => resolveModel(cfg, { provider: "fireworks", model_id: "deepseek/deepseek-v4-pro" }, env),
    (err: unknown) => {
      assert.ok(err instanceof PenguinError);
      assert.equal(err.kind, "config");
      assert.match(
        err.message,
        /No API key for model \(fireworks, deepseek\/deepseek-v4-pro\): set FIREWORKS_API_KEY/,
      );
      assert.doesNotMatch(err.message, /or-key|openai-key/);
      return true;
    },
  );
  const lenient = resolveModel(
    cfg,
    { provider: "fireworks", model_id: "deepseek/deepseek-v4-pro" },
    env,
    { requireKey: false },
  );
  assert.equal(lenient.endpoint.api_key, undefined);
  assert.equal(lenient.key_source, "none");
});

Deno.test("an entry's own api_key and base_url win over the group's env var and default URL", () => {
  const cfg = cfgOf(`
[[models]]
provider = "deepseek"
model_id = "deepseek-v4-flash"
api_key = "inline"
base_url = "http://127.0.0.1:9999/v1/"
context_window = 2048
max_tokens = 4000
vision = false
fast_mode = true
[models.pricing]
output = 1.5
`);
  const r = resolveModel(cfg, { provider: "deepseek", model_id: "deepseek-v4-flash" }, {
    DEEPSEEK_API_KEY: "env",
  });
  assert.equal(r.endpoint.api_key, "inline");
  assert.equal(r.key_source, "entry");
  assert.equal(r.endpoint.base_url, "http://127.0.0.1:9999/v1");
  assert.equal(r.context_window, undefined, "windows below 4096 count as unset");
  assert.equal(r.max_tokens, 4000);
  assert.equal(r.vision, false);
  assert.equal(r.fast_mode, true);
  assert.deepEqual(r.pricing, { unit: "usd_per_mtok", cache_read: 0, cache_write: 0, output: 1.5 });
});

Deno.test("protocol comes from client_type (legacy names accepted) or the group, never from the model id", () => {
  const cfg = cfgOf(`
[[models]]
provider = "openrouter"
model_id = "anthropic/claude-opus-5"

[[models]]
provider = "custom"
model_id = "claude-gemini-gpt-5.5"
base_url = "http://127.0.0.1:1/v1"
client_type = "ant-messages"

[[models]]
provider = "anthropic"
model_id = "gpt-5.5"

[[models]]
provider = "ollama"
model_id = "gemini-3-flash"
`);
  const env = { OPENROUTER_API_KEY: "k", ANTHROPIC_API_KEY: "k" };
  const p = (provider: string, model_id: string) =>
    resolveModel(cfg, { provider, model_id }, env).endpoint.protocol;
  assert.equal(p("openrouter", "anthropic/claude-opus-5"), "openai-chat");
  assert.equal(p("custom", "claude-gemini-gpt-5.5"), "anthropic-messages");
  assert.equal(p("anthropic", "gpt-5.5"), "anthropic-messages");
  assert.equal(p("ollama", "gemini-3-flash"), "openai-chat");
  const local = resolveModel(cfg, { provider: "ollama", model_id: "gemini-3-flash" }, {});
  assert.equal(local.endpoint.base_url, "http://127.0.0.1:11434/v1");
  assert.equal(local.endpoint.api_key, undefined);
});

Deno.test("half a pair is a usage error; neither uses the default; no default says how to set one", () => {
  const cfg = cfgOf(TWO_GATEWAYS);
  for (const sel of [{ provider: "openrouter" }, { model_id: "deepseek/deepseek-v4-pro" }]) {
    assert.throws(() => resolveModelRef(cfg, sel), (err: unknown) => {
      assert.ok(err instanceof PenguinError);
      assert.equal(err.kind, "usage");
      assert.match(err.message, /^--model-id and --provider must be given together/);
      return true;
    });
  }
  assert.deepEqual(resolveModelRef(cfg, {}), {
    provider: "openrouter",
    model_id: "deepseek/deepseek-v4-pro",
  });
  const noDefault = cfgOf(TWO_GATEWAYS.replace(/^default_model.*$/m, ""));
  assert.throws(
    () => resolveModelRef(noDefault, {}, { configPath: "/r/p/.project_config.toml" }),
    (err: unknown) => {
      assert.ok(err instanceof PenguinError);
      assert.equal(err.kind, "config");
      assert.match(err.message, /no default_model set in "\/r\/p\/\.project_config\.toml"/);
      assert.match(
        err.message,
        /penguin config model default --provider openrouter --model-id deepseek\/deepseek-v4-pro$/,
      );
      return true;
    },
  );
});

Deno.test("an unconfigured pair is an error listing the configured pairs, even if the catalog has it", () => {
  const cfg = cfgOf(TWO_GATEWAYS);
  assert.throws(
    () =>
      resolveModel(cfg, { provider: "deepseek", model_id: "deepseek-v4-pro" }, {
        DEEPSEEK_API_KEY: "k",
      }),
    (err: unknown) => {
      assert.ok(err instanceof PenguinError);
      assert.match(
        err.message,
        /configured models: \(openrouter, deepseek\/deepseek-v4-pro\), \(fireworks, deepseek\/deepseek-v4-pro\)/,
      );
      assert.match(
        err.message,
        /penguin config model add --provider deepseek --model-id deepseek-v4-pro/,
      );
      return true;
    },
  );
  // A default pointing at a removed entry is an error too, not a guess.
  const dangling = cfgOf('default_model = { provider = "x", model_id = "y" }\n');
  assert.throws(() => resolveModelRef(dangling, {}), /No model \(x, y\).*no models are configured/);
});

Deno.test("custom and unknown groups need an explicit base_url and use only an inline key", () => {
  const cfg = cfgOf(`
[[models]]
provider = "custom"
model_id = "m"

[[models]]
provider = "mygateway"
model_id = "m"
base_url = "https://gw.example/v1"
`);
  assert.throws(
    () => resolveModel(cfg, { provider: "custom", model_id: "m" }, { OPENAI_API_KEY: "x" }),
    /has no base_url.*--base-url <url>/,
  );
  const r = resolveModel(cfg, { provider: "mygateway", model_id: "m" }, { OPENAI_API_KEY: "x" });
  assert.equal(r.endpoint.protocol, "openai-chat");
  assert.equal(r.endpoint.api_key, undefined);
  assert.equal(r.key_env, undefined);
});
