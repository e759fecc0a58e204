// A first run that just works (issue 27): the recommended model of the provider whose key is
// set is suggested (and on a terminal offered), the first model added becomes the default,
// and a model id the catalog does not know is added with a "did you mean …?" warning.
import assert from "node:assert/strict";
import { join } from "node:path";
import { presetsOf } from "../../lib/models/catalog.ts";
import { denoDir, penguinArgv, REPO, runCli } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";
import { hasTmux, shellQuote, startPane } from "../support/tmux.ts";

function addArgs(root: string, provider: string, modelId: string, ...extra: string[]): string[] {
  return ["--root", root, "config", "model", "add", "--provider", provider, "--model-id", modelId]
    .concat(extra);
}

async function listJson(root: string): Promise<{
  default_model: { provider: string; model_id: string } | null;
  models: { provider: string; model_id: string }[];
}> {
  const r = await runCli(["--root", root, "config", "model", "list", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

Deno.test("with only ANTHROPIC_API_KEY set, a first run suggests Anthropic's recommended model", async () => {
  await withRoot(async (root) => {
    const r = await runCli(["--root", root, "run", "-m", "hi"], {
      cwd: root,
      clearEnv: true,
      env: { ANTHROPIC_API_KEY: "sk-ant-test" },
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /Add Anthropic's recommended model and make it the default:/);
    const line = r.stderr.split("\n").map((l) => l.trim()).find((l) =>
      l.startsWith("penguin config model add ")
    );
    assert.equal(
      line,
      `penguin config model add --provider anthropic --model-id claude-sonnet-5 --set-default --root ${root}`,
    );
    // Not the most expensive of the provider's presets (the hint used to name that one).
    const prices = presetsOf("anthropic").map((p) => p.pricing.output);
    const suggested = presetsOf("anthropic").find((p) => p.model_id === "claude-sonnet-5")!;
    assert.ok(suggested.pricing.output < Math.max(...prices));
  });
});

Deno.test("the first model added becomes the default; later ones do not replace it", async () => {
  await withRoot(async (root) => {
    const first = await runCli(addArgs(root, "deepseek", "deepseek-v4-flash"));
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stdout,
      /^Added model \(provider=deepseek, model_id=deepseek-v4-flash\)\. Default model: provider=deepseek, model_id=deepseek-v4-flash \(there was none, so this model became the default\)$/m,
    );
    assert.deepEqual((await listJson(root)).default_model, {
      provider: "deepseek",
      model_id: "deepseek-v4-flash",
    });
    const second = await runCli(addArgs(root, "anthropic", "claude-sonnet-5"));
    assert.equal(second.code, 0, second.stderr);
    assert.doesNotMatch(second.stdout, /became the default/);
    assert.deepEqual((await listJson(root)).default_model, {
      provider: "deepseek",
      model_id: "deepseek-v4-flash",
    });
    // The next run gets past model selection: only the key is missing now.
    const run = await runCli(["--root", root, "run", "-m", "hi"], { cwd: root, clearEnv: true });
    assert.equal(run.code, 2);
    assert.doesNotMatch(run.stderr, /no default_model set|No model is configured/);
    assert.match(run.stderr, /No API key for model \(deepseek, deepseek-v4-flash\)/);
  });
});

Deno.test("a model id not in the catalog is added with a warning naming the closest ids", async () => {
  await withRoot(async (root) => {
    const typo = await runCli(addArgs(root, "anthropic", "claude-sonet-5"));
    assert.equal(typo.code, 0, typo.stderr);
    const lines = typo.stderr.split("\n").filter((l) => l !== "");
    assert.equal(lines.length, 1, typo.stderr);
    assert.match(
      lines[0]!,
      /^warning: model id "claude-sonet-5" is not in the catalog for provider "anthropic"; did you mean claude-sonnet-5(, [\w.-]+)*\? It is added as given/,
    );
    const far = await runCli(addArgs(root, "anthropic", "my-own-deployment"));
    assert.equal(far.code, 0, far.stderr);
    assert.match(far.stderr, /not in the catalog .*"penguin models list"\. It is added as given/);
    assert.deepEqual((await listJson(root)).models.map((m) => m.model_id), [
      "claude-sonet-5",
      "my-own-deployment",
    ]);
    // A catalog id, and any id of a provider without presets, add without a warning.
    const known = await runCli(addArgs(root, "anthropic", "claude-sonnet-5"));
    assert.equal(known.stderr, "");
    const custom = await runCli(
      addArgs(root, "custom", "anything", "--base-url", "http://127.0.0.1:9/v1"),
    );
    assert.equal(custom.stderr, "");
  });
});

Deno.test({
  name: "on a terminal, a first run offers the recommended model and adds it as the default",
  ignore: !hasTmux,
  async fn() {
    await withRoot(async (root) => {
      const ws = join(root, "ws");
      await Deno.mkdir(ws);
      const home = join(root, "home");
      await Deno.mkdir(home);
      const script = join(root, "first.sh");
      const env = {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: home,
        DENO_DIR: denoDir(),
        TERM: "xterm",
        NO_COLOR: "1",
        ANTHROPIC_API_KEY: "sk-ant-test",
      };
      const argv = [Deno.execPath(), ...penguinArgv(), "--root", join(root, "data"), "run"];
      argv.push("--workspace", ws, "--sandbox", "off", "-m", "hi");
      const envWords = Object.entries(env).map(([k, v]) => shellQuote(`${k}=${v}`));
      await Deno.writeTextFile(
        script,
        // `trap : INT`: the script outlives a Ctrl-C that ends penguin, and says how it ended.
        `trap : INT\ncd ${shellQuote(REPO)}\nenv -i ${envWords.join(" ")} ${
          argv.map(shellQuote).join(" ")
        }\n` +
          `echo "[exited $?]"\nsleep 600\n`,
      );
      const pane = await startPane(`bash ${shellQuote(script)}`);
      try {
        await pane.waitFor(
          /ANTHROPIC_API_KEY is set\. Add Anthropic's recommended model \(anthropic, claude-sonnet-5\) as the default\? \[y\/N\]/,
          "the offer",
        );
        await pane.type("y");
        await pane.keys("Enter");
        await pane.waitFor(/Added model \(provider=anthropic, model_id=claude-sonnet-5\)/, "added");
        // The run goes on to the real endpoint with the fake key: stop it, and wait until penguin
        // has exited (closed its trace), or the root's removal races its last writes.
        await pane.keys("C-c");
        await pane.waitFor(/\[exited \d+\]/, "penguin exited");
      } finally {
        await pane.close();
      }
      const cfg = await Deno.readTextFile(
        join(root, "data", "default_project", ".project_config.toml"),
      );
      assert.match(
        cfg,
        /default_model = \{ provider = "anthropic", model_id = "claude-sonnet-5" \}/,
      );
    });
  },
});
