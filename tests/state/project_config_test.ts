import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../support/roots.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { FACTORY_COMMAND_POLICY_RULES } from "../../lib/state/command_policy_defaults.ts";
import {
  addModel,
  loadProjectConfig,
  parseProjectConfig,
  type ProjectConfig,
  removeModel,
  saveProjectConfig,
  setDefaultModel,
  setVisionModel,
} from "../../lib/state/project_config.ts";
import { renderProjectConfig } from "../../lib/state/_project_config_render.ts";

const withTemp = (fn: (dir: string) => Promise<void>) => withTempDir("penguin-pc-", fn);

function fullConfig(): ProjectConfig {
  return {
    name: 'My "project"',
    default_model: { provider: "deepseek", model_id: "deepseek-v4-flash" },
    vision_model: { provider: "openrouter", model_id: "openai/gpt-5.5" },
    default_chat: {
      agent_id: "coder",
      workspace: "/w",
      approval_mode: "read-only",
      thinking_level: "high",
    },
    command_policy: {
      enabled: false,
      rules: [
        { name: "no-curl", pattern: String.raw`\bcurl\b`, description: "no downloads" },
        { name: "off", pattern: "x", enabled: false },
      ],
    },
    models: [
      {
        provider: "deepseek",
        model_id: "deepseek-v4-flash",
        context_window: 1000000,
        max_tokens: 8000,
        vision: false,
        pricing: {
          unit: "usd_per_mtok",
          cache_read: 0.007143,
          cache_write: 0.214286,
          output: 0.642857,
        },
      },
      {
        provider: "openrouter",
        model_id: "openai/gpt-5.5",
        client_type: "openai-responses",
        display_name: "GPT 5.5",
        fast_mode: true,
        api_key: "sk-or-v1-abcdef",
        base_url: "https://example.test/v1",
        created_at: "2026-07-18T03:10:22.531Z",
      },
    ],
    extra: {},
  };
}

Deno.test("project config round-trips every field: write, read, equal", async () => {
  await withTemp(async (dir) => {
    const path = join(dir, "p", ".project_config.toml");
    const cfg = fullConfig();
    await saveProjectConfig(path, cfg);
    assert.deepEqual(await loadProjectConfig(path), cfg);
    const text = await Deno.readTextFile(path);
    assert.equal(renderProjectConfig(parseProjectConfig(text, path)), text);
  });
});

Deno.test("renderer writes top-level keys, then tables, then [[models]] last", () => {
  const text = renderProjectConfig(fullConfig());
  const lines = text.split("\n");
  assert.equal(lines[0], 'name = "My \\"project\\""');
  assert.equal(
    lines[1],
    'default_model = { provider = "deepseek", model_id = "deepseek-v4-flash" }',
  );
  assert.equal(lines[2], 'vision_model = { provider = "openrouter", model_id = "openai/gpt-5.5" }');
  const chat = text.indexOf("[default_chat]");
  const policy = text.indexOf("[command_policy]");
  const models = text.indexOf("[[models]]");
  assert.ok(chat > 0 && policy > chat && models > policy, text);
  assert.equal(text.lastIndexOf("[default_chat]"), chat);
  assert.ok(text.indexOf("[[command_policy.rules]]") < models);
});

Deno.test("unknown top-level keys and tables and unknown entry keys survive a load/save", async () => {
  await withTemp(async (dir) => {
    const path = join(dir, ".project_config.toml");
    const original = [
      'theme = "dark"',
      "",
      "[[models]]",
      'provider = "ollama"',
      'model_id = "qwen3"',
      'note = "kept"',
      "",
      "[plugins]",
      "enabled = true",
      "",
    ].join("\n");
    await Deno.writeTextFile(path, original);
    const cfg = await loadProjectConfig(path);
    assert.deepEqual(cfg.extra, { theme: "dark", plugins: { enabled: true } });
    assert.deepEqual(cfg.models[0]!.extra, { note: "kept" });
    await saveProjectConfig(path, cfg);
    const again = await loadProjectConfig(path);
    assert.deepEqual(again, cfg);
    assert.equal(await Deno.readTextFile(path), original, "an unchanged config is written as read");
    const text = renderProjectConfig(cfg);
    assert.ok(text.indexOf('theme = "dark"') < text.indexOf("[plugins]"));
    assert.ok(text.indexOf("[plugins]") < text.indexOf("[[models]]"));
  });
});

Deno.test("a missing file loads as the in-memory default and is not written", async () => {
  await withTemp(async (dir) => {
    const path = join(dir, "nope", ".project_config.toml");
    const cfg = await loadProjectConfig(path);
    assert.deepEqual(cfg.models, []);
    assert.equal(cfg.default_model, undefined);
    assert.equal(cfg.command_policy.enabled, true);
    assert.deepEqual(cfg.command_policy.rules, FACTORY_COMMAND_POLICY_RULES.map((r) => ({ ...r })));
    await assert.rejects(Deno.stat(path), Deno.errors.NotFound);
  });
});

Deno.test("command policy: absent rules stay absent, an empty list stays empty, bad rules are dropped", () => {
  const absent = parseProjectConfig("[command_policy]\nenabled = true\n", "f");
  assert.deepEqual(absent.command_policy, { enabled: true });
  const empty = parseProjectConfig("[command_policy]\nrules = []\n", "f");
  assert.deepEqual(empty.command_policy, { enabled: true, rules: [] });
  assert.match(renderProjectConfig(empty), /^\[command_policy\]\nrules = \[\]\n$/);
  const mixed = parseProjectConfig(
    '[[command_policy.rules]]\nname = "a"\npattern = "x"\n\n[[command_policy.rules]]\nname = 5\npattern = "y"\n',
    "f",
  );
  assert.deepEqual(mixed.command_policy.rules, [{ name: "a", pattern: "x" }]);
});

Deno.test("command policy: a rule whose pattern is not a valid regex is a config error naming the file, line, rule and regex error", () => {
  const text =
    '[command_policy]\nenabled = true\n\n[[command_policy.rules]]\nname = "ok"\npattern = "x"\n\n' +
    '[[command_policy.rules]]\nname = "no-curl"\npattern = "curl (-s"\n';
  assert.throws(
    () => parseProjectConfig(text, "/p/.project_config.toml"),
    (e) =>
      e instanceof PenguinError && e.kind === "config" &&
      e.message ===
        'Invalid "/p/.project_config.toml": line 10, column 1: command_policy.rules[1].pattern: ' +
          'rule "no-curl" has an invalid regular expression "curl (-s" (Unterminated group); ' +
          "fix the pattern or remove the rule",
  );
  // Disabled rules are checked too: enabling one later must not silently do nothing.
  assert.throws(
    () =>
      parseProjectConfig(
        '[[command_policy.rules]]\nname = "off"\npattern = "[z-a]"\nenabled = false\n',
        "f",
      ),
    /command_policy\.rules\[0\]\.pattern: rule "off" has an invalid regular expression "\[z-a\]"/,
  );
});

Deno.test("[default_chat] is parsed key by key: a bad value drops only that key", () => {
  const cfg = parseProjectConfig(
    '[default_chat]\nagent_id = "bad id"\nworkspace = "/w"\napproval_mode = "ALLOW-ALL"\nthinking_level = "none"\n',
    "f",
  );
  assert.deepEqual(cfg.default_chat, { workspace: "/w", approval_mode: "allow-all" });
});

Deno.test("client_type values are kept verbatim on read, known or not", () => {
  const cfg = parseProjectConfig(
    '[[models]]\nprovider = "a"\nmodel_id = "x"\nclient_type = "openai"\n\n' +
      '[[models]]\nprovider = "b"\nmodel_id = "y"\nclient_type = "ant-messages"\n\n' +
      '[[models]]\nprovider = "c"\nmodel_id = "z"\nclient_type = "kimi-k2.5"\n',
    "f",
  );
  assert.deepEqual(cfg.models.map((m) => m.client_type), ["openai", "ant-messages", "kimi-k2.5"]);
});

Deno.test("save re-applies mode 0600 after someone chmod-ed the file 0644", {
  ignore: Deno.build.os === "windows",
}, async () => {
  await withTemp(async (dir) => {
    const path = join(dir, ".project_config.toml");
    await saveProjectConfig(path, fullConfig());
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    await Deno.chmod(path, 0o644);
    await saveProjectConfig(path, fullConfig());
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    const names = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name);
    assert.deepEqual(names, [".project_config.toml"], "no temp file left behind");
  });
});

Deno.test("malformed TOML is reported with path, line and column, and never overwritten", async () => {
  await withTemp(async (dir) => {
    const path = join(dir, ".project_config.toml");
    const bad = 'name = "x"\n\n[[models]]\nprovider "deepseek"\nmodel_id = "m"\n';
    await Deno.writeTextFile(path, bad);
    const check = (err: unknown) => {
      assert.ok(err instanceof PenguinError);
      assert.equal(err.kind, "config");
      assert.match(
        err.message,
        new RegExp(`^Cannot parse "${path.replaceAll("/", "\\/")}": line 4, column \\d+: \\S`),
      );
      return true;
    };
    await assert.rejects(loadProjectConfig(path), check);
    await assert.rejects(
      addModel(path, { provider: "a", model_id: "b" }, { setDefault: true }),
      check,
    );
    await assert.rejects(removeModel(path, { provider: "deepseek", model_id: "m" }), check);
    await assert.rejects(setDefaultModel(path, { provider: "deepseek", model_id: "m" }), check);
    await assert.rejects(setVisionModel(path, { provider: "deepseek", model_id: "m" }), check);
    assert.equal(await Deno.readTextFile(path), bad);
  });
});

Deno.test("schema errors name the value path, what was expected, what was found and the line", async () => {
  await withTemp(async (dir) => {
    const path = join(dir, ".project_config.toml");
    const bad =
      '[[models]]\nprovider = "a"\nmodel_id = "x"\n\n[[models]]\nmodel_id = "y"\nprovider = 42\n';
    await Deno.writeTextFile(path, bad);
    await assert.rejects(loadProjectConfig(path), (err: unknown) => {
      assert.ok(err instanceof PenguinError);
      assert.equal(
        err.message,
        `Invalid "${path}": line 7, column 1: models[1].provider: expected a non-empty string, found 42`,
      );
      return true;
    });
    await assert.rejects(addModel(path, { provider: "a", model_id: "z" }), PenguinError);
    assert.equal(await Deno.readTextFile(path), bad);
  });
});

Deno.test("schema errors cover pair references, client types and duplicate pairs", () => {
  const cases: Array<[string, RegExp]> = [
    [
      'default_model = "deepseek-v4"\n',
      /line 1, column 1: default_model: expected an inline table/,
    ],
    [
      'default_model = { provider = "p" }\n',
      /default_model\.model_id: expected a non-empty string, found nothing/,
    ],
    [
      '[[models]]\nprovider = "p"\nmodel_id = "m"\nclient_type = 5\n',
      /line 4.*models\[0\]\.client_type: expected a string/,
    ],
    [
      '[[models]]\nprovider = "p"\nmodel_id = "m"\n[models.pricing]\noutput = -1\n',
      /line 5.*models\[0\]\.pricing\.output: expected a non-negative number, found -1/,
    ],
    [
      '[[models]]\nprovider = "p"\nmodel_id = "m"\n\n[[models]]\nprovider = "p"\nmodel_id = "m"\n',
      /line 5: models\[1\]: duplicate model \(p, m\); already defined at models\[0\]/,
    ],
  ];
  for (const [text, re] of cases) {
    assert.throws(() => parseProjectConfig(text, "/x/.project_config.toml"), (err: unknown) => {
      assert.ok(err instanceof PenguinError, text);
      assert.match(err.message, re, text);
      assert.match(err.message, /^Invalid "\/x\/\.project_config\.toml": /);
      return true;
    });
  }
});

Deno.test("addModel upserts by pair: unspecified fields keep their values, prices merge per bucket", async () => {
  await withTemp(async (dir) => {
    const path = join(dir, ".project_config.toml");
    const first = await addModel(path, {
      provider: "deepseek",
      model_id: "m",
      api_key: "sk-1",
      context_window: 64000,
      fast_mode: true,
      pricing: { output: 2 },
    });
    assert.equal(first.created, true);
    assert.match(first.entry.created_at!, /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual(first.entry.pricing, {
      unit: "usd_per_mtok",
      cache_read: 0,
      cache_write: 0,
      output: 2,
    });
    const second = await addModel(path, {
      provider: "deepseek",
      model_id: "m",
      pricing: { cache_read: 0.1 },
      fast_mode: false,
    }, {
      setDefault: true,
    });
    assert.equal(second.created, false);
    const cfg = await loadProjectConfig(path);
    assert.deepEqual(cfg.default_model, { provider: "deepseek", model_id: "m" });
    assert.equal(cfg.models.length, 1);
    const e = cfg.models[0]!;
    assert.equal(e.api_key, "sk-1");
    assert.equal(e.context_window, 64000);
    assert.equal(e.fast_mode, undefined);
    assert.deepEqual(e.pricing, {
      unit: "usd_per_mtok",
      cache_read: 0.1,
      cache_write: 0,
      output: 2,
    });
    await addModel(path, { provider: "deepseek", model_id: "m", api_key: "" });
    const cleared = (await loadProjectConfig(path)).models[0]!;
    assert.equal(cleared.api_key, undefined);
    assert.equal(cleared.created_at, undefined);
  });
});

Deno.test("removeModel is idempotent and clears default and vision pointers to the pair", async () => {
  await withTemp(async (dir) => {
    const path = join(dir, ".project_config.toml");
    assert.deepEqual(await removeModel(path, { provider: "a", model_id: "b" }), {
      removed: false,
      clearedDefault: false,
      clearedVision: false,
    });
    await assert.rejects(Deno.stat(path), Deno.errors.NotFound);
    await addModel(path, { provider: "a", model_id: "b" }, { setDefault: true });
    await addModel(path, { provider: "c", model_id: "d" });
    await setVisionModel(path, { provider: "a", model_id: "b" });
    assert.deepEqual(await removeModel(path, { provider: "a", model_id: "b" }), {
      removed: true,
      clearedDefault: true,
      clearedVision: true,
    });
    const cfg = await loadProjectConfig(path);
    assert.equal(cfg.default_model, undefined);
    assert.equal(cfg.vision_model, undefined);
    assert.deepEqual(cfg.models.map((m) => m.model_id), ["d"]);
    assert.equal((await removeModel(path, { provider: "a", model_id: "b" })).removed, false);
  });
});

Deno.test("default and vision pointers must name configured pairs; vision refuses vision = false", async () => {
  await withTemp(async (dir) => {
    const path = join(dir, ".project_config.toml");
    await addModel(path, { provider: "p", model_id: "text", vision: false });
    await assert.rejects(
      setDefaultModel(path, { provider: "q", model_id: "text" }),
      (err: unknown) => {
        assert.ok(err instanceof PenguinError);
        assert.match(err.message, /No model \(q, text\).*configured models: \(p, text\)/);
        assert.match(err.message, /penguin config model add --provider q --model-id text/);
        return true;
      },
    );
    await assert.rejects(
      setVisionModel(path, { provider: "p", model_id: "text" }),
      /vision = false/,
    );
    await setDefaultModel(path, { provider: "p", model_id: "text" });
    assert.deepEqual((await loadProjectConfig(path)).default_model, {
      provider: "p",
      model_id: "text",
    });
  });
});

Deno.test("an edit the text splice cannot make (inline models array) falls back to a full render, values intact", async () => {
  await withTemp(async (dir) => {
    const path = join(dir, ".project_config.toml");
    await Deno.writeTextFile(
      path,
      'models = [{ provider = "a", model_id = "b", client_type = "glm-5", odd = 1 }]\n',
    );
    await addModel(path, { provider: "c", model_id: "d", client_type: "ant-messages" });
    const cfg = await loadProjectConfig(path);
    assert.deepEqual(cfg.models, [
      { provider: "a", model_id: "b", client_type: "glm-5", extra: { odd: 1 } },
      { provider: "c", model_id: "d", client_type: "ant-messages" },
    ]);
    assert.match(await Deno.readTextFile(path), /^\[\[models\]\]$/m);
  });
});

Deno.test("a new model in a file without models goes after its tables; a line-only edit keeps comments", async () => {
  await withTemp(async (dir) => {
    const path = join(dir, ".project_config.toml");
    const original = '# mine\nname = "x" # keep\n\n[default_chat]\nagent_id = "a"\n';
    await Deno.writeTextFile(path, original);
    await addModel(path, { provider: "c", model_id: "d" }, { setDefault: true });
    const text = await Deno.readTextFile(path);
    assert.equal(
      text,
      '# mine\nname = "x" # keep\ndefault_model = { provider = "c", model_id = "d" }\n\n' +
        '[default_chat]\nagent_id = "a"\n\n[[models]]\nprovider = "c"\nmodel_id = "d"\n',
    );
  });
});
