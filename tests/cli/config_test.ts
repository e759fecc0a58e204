import assert from "node:assert/strict";
import { join } from "node:path";
import { modelAddArgs, runCli } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";

/** `penguin config <group> <command> --root <root> <args…>`. */
function config(root: string, group: string, command: string, ...args: string[]) {
  return runCli(["config", group, command, "--root", root, ...args]);
}

const cfgPath = (root: string, project = "default_project") =>
  join(root, project, ".project_config.toml");

Deno.test("config model add seeds a preset, marks the default, and config model list shows it masked", async () => {
  await withRoot(async (root) => {
    const add = await runCli(
      modelAddArgs(root, "deepseek", "deepseek-v4-flash", "--api-key", "sk-0123456789abcdef")
        .concat("--set-default"),
    );
    assert.equal(add.code, 0, add.stderr);
    assert.equal(
      add.stdout,
      "Added model (provider=deepseek, model_id=deepseek-v4-flash). " +
        "Default model: provider=deepseek, model_id=deepseek-v4-flash\n",
    );
    const second = await runCli(
      modelAddArgs(
        root,
        "ollama",
        "qwen3:8b",
        "--context-window",
        "32768",
        "--max-tokens",
        "4096",
        "--no-vision",
        "--price-output",
        "0",
      ),
    );
    assert.equal(second.code, 0, second.stderr);
    assert.match(
      second.stdout,
      /^Added model \(provider=ollama, model_id=qwen3:8b\)\. Default model: provider=deepseek/,
    );

    const list = await runCli(["config", "model", "list", "--root", root]);
    assert.equal(list.code, 0, list.stderr);
    const lines = list.stdout.trimEnd().split("\n");
    assert.equal(lines.length, 3);
    assert.match(
      lines[0]!,
      /^ {2}PROVIDER +MODEL_ID +CONTEXT +MAX_TOKENS +VISION +FAST +CLIENT_TYPE +BASE_URL +API_KEY$/,
    );
    assert.match(lines[1]!, /^\* deepseek +deepseek-v4-flash +1000000 +- +- +- +- +- +\*{4}cdef$/);
    assert.match(lines[2]!, /^ {2}ollama +qwen3:8b +32768 +4096 +- +- +- +- +-$/);
    const col = lines[0]!.indexOf("MODEL_ID");
    assert.equal(lines[1]!.indexOf("deepseek-v4-flash"), col);
    assert.equal(lines[2]!.indexOf("qwen3:8b"), col);
    assert.doesNotMatch(list.stdout, /0123456789/);

    const text = await Deno.readTextFile(cfgPath(root));
    assert.match(
      text,
      /^default_model = \{ provider = "deepseek", model_id = "deepseek-v4-flash" \}$/m,
    );
    assert.match(text, /^api_key = "sk-0123456789abcdef"$/m);
    if (Deno.build.os !== "windows") {
      assert.equal((await Deno.stat(cfgPath(root))).mode! & 0o777, 0o600);
    }
  });
});

Deno.test("config model add on an existing pair says Updated and keeps unspecified fields", async () => {
  await withRoot(async (root) => {
    const base = modelAddArgs(root, "custom", "m");
    const first = await runCli([
      ...base,
      "--base-url",
      "http://127.0.0.1:5000/v1/",
      "--api-key",
      "short",
    ]);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stderr, "");
    const again = await runCli([...base, "--context-window", "8192", "--client-type", "openai"]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(
      again.stdout,
      // The first model added became the default (there was none).
      /^Updated model \(provider=custom, model_id=m\)\. Default model: provider=custom, model_id=m\n$/,
    );
    const json = JSON.parse(
      (await runCli(["config", "model", "list", "--json", "--root", root])).stdout,
    );
    assert.equal(json.path, cfgPath(root));
    assert.deepEqual(json.default_model, { provider: "custom", model_id: "m" });
    assert.deepEqual(json.models, [{
      provider: "custom",
      model_id: "m",
      base_url: "http://127.0.0.1:5000/v1",
      api_key: "***",
      created_at: json.models[0].created_at,
      client_type: "openai-chat",
      context_window: 8192,
      default: true,
      vision_model: false,
    }]);
  });
});

Deno.test("config model add warns about a missing base URL and an unsupported fast tier", async () => {
  await withRoot(async (root) => {
    const custom = await config(root, "model", "add", "--provider", "custom", "--model-id", "x");
    assert.equal(custom.code, 0);
    assert.match(
      custom.stderr,
      /^warning: provider "custom" has no default base URL; set one with --base-url/,
    );
    const fast = await runCli(modelAddArgs(root, "deepseek", "deepseek-v4-pro", "--fast-mode"));
    assert.equal(fast.code, 0);
    assert.match(fast.stderr, /warning: provider "deepseek" has no fast tier/);
    assert.match(await Deno.readTextFile(cfgPath(root)), /fast_mode = true/);
  });
});

Deno.test("config model commands refuse half pairs and bad flag values with exit 2, writing nothing", async () => {
  await withRoot(async (root) => {
    const cases: Array<[string[], RegExp]> = [
      [
        ["config", "model", "add", "--provider", "deepseek"],
        /--model-id and --provider must be given together/,
      ],
      [
        ["config", "model", "add", "--model-id", "m"],
        /--model-id and --provider must be given together/,
      ],
      [["config", "model", "add"], /--provider and --model-id are required/],
      [["config", "model", "default", "--provider", "p"], /must be given together/],
      [["config", "model", "vision", "--model-id", "m"], /must be given together/],
      [["config", "model", "remove", "--provider", "p"], /must be given together/],
      [
        ["config", "model", "add", "--provider", "p", "--model-id", "m", "--max-tokens", "0"],
        /--max-tokens must be a positive integer/,
      ],
      [
        ["config", "model", "add", "--provider", "p", "--model-id", "m", "--client-type", "grpc"],
        /--client-type must be one of openai-chat, .* or a PenguinHarness routing key/,
      ],
      [
        ["config", "model", "add", "--provider", "p", "--model-id", "m", "--vision", "--no-vision"],
        /exclude each other/,
      ],
      [
        ["config", "model", "add", "--provider", "p", "--model-id", "m", "--price-output=-1"],
        /non-negative number/,
      ],
      [
        ["config", "model", "add", "--provider", "p", "--model-id", "m", "--project-id", "a/b"],
        /Invalid project id "a\/b"/,
      ],
      [["config", "model", "list", "--bogus"], /Unknown option '--bogus'/],
    ];
    for (const [args, re] of cases) {
      const r = await runCli([...args, "--root", root]);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, re, args.join(" "));
      assert.equal(r.stdout, "");
    }
    // (Its mark aside: penguin's, as the root is.)
    const left = (await Array.fromAsync(Deno.readDir(root))).filter((e) => e.name !== ".root_mark");
    assert.deepEqual(left, []);
  });
});

Deno.test("config model default and vision need configured pairs; vision refuses vision = false", async () => {
  await withRoot(async (root) => {
    /** `config model <command> --provider zhipu --model-id <m> …`. */
    const zhipu = (command: string, m: string, ...more: string[]) =>
      config(root, "model", command, "--provider", "zhipu", "--model-id", m, ...more);
    assert.equal((await zhipu("add", "glm-5.2")).code, 0); // preset: vision = false
    assert.equal((await zhipu("add", "glm-vision", "--vision")).code, 0);
    const missing = await zhipu("default", "nope");
    assert.equal(missing.code, 1);
    assert.match(
      missing.stderr,
      /No model \(zhipu, nope\).*configured models: \(zhipu, glm-5\.2\), \(zhipu, glm-vision\)/,
    );
    const def = await zhipu("default", "glm-5.2");
    assert.equal(def.code, 0, def.stderr);
    assert.equal(def.stdout, "Default model: provider=zhipu, model_id=glm-5.2\n");
    const textOnly = await zhipu("vision", "glm-5.2");
    assert.equal(textOnly.code, 2);
    assert.match(textOnly.stderr, /vision = false/);
    const vis = await zhipu("vision", "glm-vision");
    assert.equal(vis.code, 0, vis.stderr);
    assert.equal(vis.stdout, "Vision model: provider=zhipu, model_id=glm-vision\n");
    const list = await runCli(["config", "model", "list", "--root", root]);
    assert.match(list.stdout, /^\* zhipu +glm-5\.2 /m);
    assert.match(list.stdout, /^Vision model: provider=zhipu, model_id=glm-vision$/m);
  });
});

Deno.test("config model remove clears the default; a missing pair goes to stderr with exit 1", async () => {
  await withRoot(async (root) => {
    const pair = ["--provider", "moonshot", "--model-id", "kimi-k3"];
    assert.equal(
      (await config(root, "model", "add", ...pair, "--set-default")).code,
      0,
    );
    const rm = await config(root, "model", "remove", ...pair);
    assert.equal(rm.code, 0, rm.stderr);
    assert.equal(
      rm.stdout,
      "Removed model (provider=moonshot, model_id=kimi-k3). Default model cleared.\n",
    );
    const again = await config(root, "model", "remove", ...pair);
    assert.equal(again.code, 1);
    assert.equal(again.stdout, "");
    assert.match(
      again.stderr,
      /no model \(provider=moonshot, model_id=kimi-k3\) in ".*"; no models are configured/,
    );
    const empty = await runCli(["config", "model", "list", "--root", root]);
    assert.match(empty.stdout, /^No models configured in /);
  });
});

Deno.test("a malformed project config fails every config command with path and line, byte-identical", async () => {
  await withRoot(async (root) => {
    const path = cfgPath(root);
    await Deno.mkdir(join(root, "default_project"));
    const bad = '[[models]]\nprovider = "a"\nmodel_id = "b"\ncontext_window = \n';
    await Deno.writeTextFile(path, bad);
    for (
      const args of [
        ["config", "model", "add", "--provider", "a", "--model-id", "c"],
        ["config", "model", "remove", "--provider", "a", "--model-id", "b"],
        ["config", "model", "default", "--provider", "a", "--model-id", "b"],
        ["config", "model", "list"],
        ["models", "list"],
      ]
    ) {
      const r = await runCli([...args, "--root", root]);
      assert.equal(r.code, 2, args.join(" "));
      assert.ok(r.stderr.startsWith(`penguin: Cannot parse "${path}": line 4, column `), r.stderr);
    }
    assert.equal(await Deno.readTextFile(path), bad);
  });
});

Deno.test("config vault set, list (masked), remove; bad keys exit 2; missing keys exit 1", async () => {
  await withRoot(async (root) => {
    const token = "ghp_0123456789abcdef";
    const set = await config(root, "vault", "set", "--key", "GITHUB_TOKEN", "--value", token);
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout, "Saved vault key GITHUB_TOKEN for agent default_agent.\n");
    await config(root, "vault", "set", "--key", "PIN", "--value", "1234");
    const list = await runCli(["config", "vault", "list", "--root", root]);
    assert.equal(list.stdout, "KEY           VALUE\nGITHUB_TOKEN  ****cdef\nPIN           ***\n");
    const json = await runCli(["config", "vault", "list", "--json", "--root", root]);
    assert.deepEqual(JSON.parse(json.stdout), { GITHUB_TOKEN: "****cdef", PIN: "***" });
    const vault = join(
      root,
      "default_project",
      "agents",
      "default_agent",
      "agent_state",
      ".vault.toml",
    );
    if (Deno.build.os !== "windows") assert.equal((await Deno.stat(vault)).mode! & 0o777, 0o600);

    const badKey = await config(root, "vault", "set", "--key", "9X", "--value", "v");
    assert.equal(badKey.code, 2);
    assert.match(badKey.stderr, /Invalid vault key "9X"/);
    // No --value and nothing on standard input: nothing is stored.
    const noValue = await config(root, "vault", "set", "--key", "A");
    assert.equal(noValue.code, 2);
    assert.match(noValue.stderr, /The value of A read from standard input is empty/);

    const missing = await config(root, "vault", "remove", "--key", "NOPE");
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no vault key "NOPE" for agent default_agent/);
    for (const key of ["GITHUB_TOKEN", "PIN"]) {
      const rm = await config(root, "vault", "remove", "--key", key);
      assert.equal(rm.code, 0, rm.stderr);
      assert.equal(rm.stdout, `Removed vault key ${key} from agent default_agent.\n`);
    }
    await assert.rejects(Deno.stat(vault), Deno.errors.NotFound);
    const empty = await config(root, "vault", "list", "--agent-id", "other");
    assert.equal(empty.stdout, "No vault keys for agent other.\n");
  });
});

Deno.test("without --root the data root is PENGUIN_HOME", async () => {
  await withRoot(async (root) => {
    const r = await runCli([
      "config",
      "model",
      "add",
      "--provider",
      "vllm",
      "--model-id",
      "m",
      "--project-id",
      "lab",
    ], {
      env: { PENGUIN_HOME: root },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(await Deno.readTextFile(cfgPath(root, "lab")), /provider = "vllm"/);
  });
});
