// Editing a `.project_config.toml` written by PenguinHarness (add, remove, default) keeps every
// other value as read: value for value, and byte for byte outside the edited block or line.
import assert from "node:assert/strict";
import { join } from "node:path";
import { cfgPath, config, ORIGINAL, tomlOf, withFixture } from "./_penguinharness_config.ts";
import { withRoot } from "../support/roots.ts";

/** `config model add --provider <provider> --model-id <modelId> ...extra`; asserts it succeeded. */
async function addModelOk(root: string, provider: string, modelId: string, ...extra: string[]) {
  const r = await config(root, "add", "--provider", provider, "--model-id", modelId, ...extra);
  assert.equal(r.code, 0, r.stderr);
}

/** The text of the `[[models]]` block of (provider, model_id) in `text`, found independently of penguin. */
function blockOf(text: string, provider: string, modelId: string): string {
  const head = `[[models]]\nprovider = ${JSON.stringify(provider)}\nmodel_id = ${
    JSON.stringify(modelId)
  }\n`;
  const start = text.indexOf(head);
  assert.ok(start >= 0, `no block for (${provider}, ${modelId})`);
  const next = text.indexOf("[[models]]", start + head.length);
  return text.slice(start, next === -1 ? text.length : next);
}

Deno.test("config model add on a PenguinHarness project appends one block and changes nothing else", async () => {
  await withFixture(async (root) => {
    await addModelOk(
      root,
      "custom",
      "proxy-2",
      "--base-url",
      "http://127.0.0.1:3",
      "--client-type",
      "anthropic-messages",
    );
    const after = await Deno.readTextFile(cfgPath(root));
    assert.ok(after.startsWith(ORIGINAL), "the file as read is kept byte for byte");
    const expected = tomlOf(ORIGINAL);
    expected.models.push({
      provider: "custom",
      model_id: "proxy-2",
      client_type: "ant-messages",
      base_url: "http://127.0.0.1:3",
    });
    assert.deepEqual(
      tomlOf(after),
      expected,
      "value for value, new entry in PenguinHarness's spelling",
    );

    await addModelOk(root, "minimax", "MiniMax-M3-b");
    const m = tomlOf(await Deno.readTextFile(cfgPath(root))).models.at(-1)!;
    assert.equal(m.client_type, "minimax-m3");
  });
});

Deno.test("config model remove and default on a PenguinHarness project cut only that block and line", async () => {
  await withFixture(async (root) => {
    const rm = await config(root, "remove", "--provider", "moonshot", "--model-id", "kimi-k2.5");
    assert.equal(rm.code, 0, rm.stderr);
    const after = await Deno.readTextFile(cfgPath(root));
    assert.equal(after, ORIGINAL.replace(blockOf(ORIGINAL, "moonshot", "kimi-k2.5"), ""));
    const expected = tomlOf(ORIGINAL);
    expected.models = expected.models.filter((m) =>
      !(m.provider === "moonshot" && m.model_id === "kimi-k2.5")
    );
    assert.deepEqual(tomlOf(after), expected);

    const def = await config(root, "default", "--provider", "p", "--model-id", "my-kimi");
    assert.equal(def.code, 0, def.stderr);
    const next = await Deno.readTextFile(cfgPath(root));
    assert.equal(
      next,
      after.replace(
        'default_model = { provider = "deepseek", model_id = "deepseek-v4-flash" }',
        'default_model = { provider = "p", model_id = "my-kimi" }',
      ),
    );
  });
});

Deno.test("a file with every client type round-trips value for value through add and remove", async () => {
  await withRoot(async (root) => {
    const types = [
      "openai-chat",
      "openai-responses",
      "openai",
      "ant-messages",
      "anthropic-messages",
      "minimax-m3",
      "gemini",
      "kimi-k2.5",
      "glm-5",
      "deepseek-v4",
      "gpt-5.5",
      "claude-opus-4-8",
      "gemini-3",
      "Some-OpenAI-Proxy",
      "not-a-known-router",
    ];
    const text =
      `name = "all"\nfuture_key = 1979-05-27T07:32:00Z\n\n[default_chat]\nagent_id = "a"\nodd = "kept"\n\n` +
      types.map((t, i) =>
        `[[models]]\nprovider = "custom"\nmodel_id = "m${i}"\nclient_type = "${t}"\nfast_mode = false\n` +
        `base_url = "http://127.0.0.1:1"\n\n[models.pricing]\ncache_read = 1\nextra_bucket = 2\n`
      ).join("\n");
    await Deno.mkdir(join(root, "default_project"), { recursive: true });
    await Deno.writeTextFile(cfgPath(root), text);

    const list = await config(root, "list");
    assert.equal(list.code, 0, list.stderr);
    assert.match(
      list.stderr,
      /model \(provider=custom, model_id=m14\) has client_type "not-a-known-router"/,
    );
    assert.equal(list.stderr.trimEnd().split("\n").length, 1, "only the unroutable entry is noted");

    await addModelOk(root, "x", "y", "--base-url", "http://h");
    const added = await Deno.readTextFile(cfgPath(root));
    // The first model of a project without a default becomes it: one line in, one block appended.
    assert.ok(
      added.startsWith(
        'name = "all"\nfuture_key = 1979-05-27T07:32:00Z\n' +
          'default_model = { provider = "x", model_id = "y" }\n\n[default_chat]\n',
      ),
      added,
    );
    assert.equal(tomlOf(added).models.length, types.length + 1);
    assert.deepEqual(tomlOf(added).models.slice(0, -1), tomlOf(text).models);
    const rm = await config(root, "remove", "--provider", "x", "--model-id", "y");
    assert.equal(rm.code, 0, rm.stderr);
    // Removing it clears the default line and cuts the block: the file is back as it was.
    assert.equal(await Deno.readTextFile(cfgPath(root)), text);
    assert.deepEqual(tomlOf(await Deno.readTextFile(cfgPath(root))), tomlOf(text));
  });
});
