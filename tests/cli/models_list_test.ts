import assert from "node:assert/strict";
import { runCli } from "../support/cli.ts";
import { MODEL_PRESETS, PROVIDER_GROUPS } from "../../lib/models/catalog.ts";
import { withRoot } from "../support/roots.ts";

Deno.test("models list shows every catalog preset with context, vision and prices", async () => {
  await withRoot(async (root) => {
    const r = await runCli(["models", "list", "--root", root]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split("\n");
    assert.match(
      lines[0]!,
      /^ {2}PROVIDER +MODEL_ID +CONTEXT +VISION +CACHE_READ +CACHE_WRITE +OUTPUT +CONFIGURED +KEY$/,
    );
    assert.equal(lines.length, 1 + MODEL_PRESETS.length + 1);
    assert.match(lines.at(-1)!, /^Prices: USD per 1M tokens/);
    const p = MODEL_PRESETS.find((m) => m.provider === "anthropic")!;
    const row = lines.find((l) => l.includes(` ${p.model_id} `))!;
    const cells = row.trim().split(/ +/);
    assert.deepEqual(cells, [
      "anthropic",
      p.model_id,
      String(p.context_window),
      p.vision ? "Y" : "-",
      String(p.pricing.cache_read),
      String(p.pricing.cache_write),
      String(p.pricing.output),
      "-",
      "-",
    ]);
    await assert.rejects(
      Deno.stat(`${root}/default_project`),
      Deno.errors.NotFound,
      "listing writes nothing",
    );
  });
});

Deno.test("models list marks configured and default models, adds configured non-presets, masks keys", async () => {
  await withRoot(async (root) => {
    const add = (...args: string[]) => runCli(["config", "model", "add", "--root", root, ...args]);
    assert.equal(
      (await add("--provider", "deepseek", "--model-id", "deepseek-v4-pro", "--set-default")).code,
      0,
    );
    assert.equal(
      (await add(
        "--provider",
        "deepseek",
        "--model-id",
        "my-finetune",
        "--api-key",
        "sk-abcdefghijklmnop",
      )).code,
      0,
    );
    const r = await runCli(["models", "list", "--root", root, "--provider", "deepseek"], {
      env: { DEEPSEEK_API_KEY: "sk-from-env-123456" },
    });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split("\n");
    const presets = MODEL_PRESETS.filter((m) => m.provider === "deepseek");
    assert.equal(lines.length, 1 + presets.length + 1 + 1);
    assert.match(
      lines.find((l) => l.includes(" deepseek-v4-pro "))!,
      /^\* deepseek +deepseek-v4-pro +.* yes +\$DEEPSEEK_API_KEY$/,
    );
    assert.match(
      lines.find((l) => l.includes(" my-finetune "))!,
      /^ {2}deepseek +my-finetune +- +Y +- +- +- +yes +\*{4}mnop$/,
    );
    assert.doesNotMatch(r.stdout, /sk-from-env|abcdefgh/);
    for (const l of lines.slice(1, -1)) assert.match(l, /^[* ] deepseek /);

    const json = JSON.parse(
      (await runCli(["models", "list", "--json", "--root", root, "--provider", "deepseek"])).stdout,
    );
    const mine = json.find((row: { model_id: string }) => row.model_id === "my-finetune");
    assert.equal(mine.configured, true);
    assert.equal(mine.in_catalog, false);
    assert.equal(mine.api_key, "****mnop");
    const pro = json.find((row: { model_id: string }) => row.model_id === "deepseek-v4-pro");
    assert.equal(pro.default, true);
    assert.equal(pro.key_env, "DEEPSEEK_API_KEY");
  });
});

Deno.test("models list --provider filters, shows local groups as needing no key, and rejects unknown groups", async () => {
  await withRoot(async (root) => {
    await runCli([
      "config",
      "model",
      "add",
      "--root",
      root,
      "--provider",
      "lmstudio",
      "--model-id",
      "qwen3",
    ]);
    const local = await runCli(["models", "list", "--root", root, "--provider", "lmstudio"]);
    assert.equal(local.code, 0, local.stderr);
    // The only model, so the default ("* ").
    assert.match(local.stdout, /^\* lmstudio +qwen3 +.* yes +not needed$/m);
    const bad = await runCli(["models", "list", "--root", root, "--provider", "nope"]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /unknown provider group "nope"; known groups: deepseek, openrouter/);
    const typo = await runCli(["--root", root, "models", "list", "--provider", "deepsek"]);
    assert.match(
      typo.stderr,
      /unknown provider group "deepsek"; known groups: .*; did you mean "deepseek"\?/,
    );
    assert.ok(PROVIDER_GROUPS.every((g) => bad.stderr.includes(g.id)));
  });
});
