// A `.project_config.toml` written by PenguinHarness (its seeded catalog, a `kimi-k2.5` and an
// `ant-messages` entry) works in penguin: listed, and usable by `run`.
import assert from "node:assert/strict";
import { startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { cfgPath, config, ORIGINAL, tomlOf, withFixture } from "./_penguinharness_config.ts";

Deno.test("config model list shows a PenguinHarness project with its client types verbatim", async () => {
  await withFixture(async (root) => {
    const list = await config(root, "list");
    assert.equal(list.code, 0, list.stderr);
    assert.equal(list.stderr, "", "every client type of the fixture is routable");
    const row = (id: string) => list.stdout.split("\n").find((l) => l.includes(` ${id} `)) ?? "";
    assert.match(row("my-kimi"), / kimi-k2\.5 /);
    assert.match(row("claude-proxy"), / ant-messages /);
    assert.match(row("MiniMax-M3"), / minimax-m3 /);
    assert.equal(tomlOf(ORIGINAL).models.length, 98);
    assert.equal(list.stdout.trimEnd().split("\n").length, 99, "a header and 98 rows");
  });
});

Deno.test("run works on a PenguinHarness project's ant-messages and kimi-k2.5 entries; an unroutable one fails alone", async () => {
  const server = await startModelServer({
    turns: [turn.text("hello from claude"), turn.text("hello from kimi")],
  });
  try {
    await withFixture(async (root) => {
      const ws = await Deno.makeTempDir({ prefix: "penguin-ph-ws-" });
      try {
        for (
          const [provider, id, protocol] of [
            ["custom", "claude-proxy", "anthropic-messages"],
            ["p", "my-kimi", "openai-chat"],
          ] as const
        ) {
          const set = await config(
            root,
            "add",
            "--provider",
            provider,
            "--model-id",
            id,
            "--base-url",
            server.baseUrl(protocol),
          );
          assert.equal(set.code, 0, set.stderr);
        }
        const saved = tomlOf(await Deno.readTextFile(cfgPath(root)));
        const types = saved.models.filter((m) =>
          m.provider === "p" || m.model_id === "claude-proxy"
        )
          .map((m) => m.client_type);
        assert.deepEqual(types, ["kimi-k2.5", "ant-messages"], "spellings kept on update");

        const run = (provider: string, id: string) =>
          runCli([
            "--root",
            root,
            "run",
            "--workspace",
            ws,
            "--provider",
            provider,
            "--model-id",
            id,
            "-m",
            "hi",
          ]);
        const claude = await run("custom", "claude-proxy");
        assert.equal(claude.code, 0, claude.stderr);
        assert.match(claude.stdout, /hello from claude/);
        assert.equal(server.requests.at(-1)!.protocol, "anthropic-messages");
        const kimi = await run("p", "my-kimi");
        assert.equal(kimi.code, 0, kimi.stderr);
        assert.match(kimi.stdout, /hello from kimi/);
        assert.equal(server.requests.at(-1)!.protocol, "openai-chat");
        assert.equal(server.requests.at(-1)!.model, "my-kimi");

        const text = await Deno.readTextFile(cfgPath(root));
        await Deno.writeTextFile(
          cfgPath(root),
          text +
            `\n[[models]]\nprovider = "p"\nmodel_id = "odd"\nclient_type = "quantum-9"\nbase_url = "${
              server.baseUrl("openai-chat")
            }"\n`,
        );
        const before = server.requests.length;
        const odd = await run("p", "odd");
        assert.notEqual(odd.code, 0);
        assert.match(
          odd.stderr,
          /Model \(p, odd\) has client_type "quantum-9", which penguin cannot route/,
        );
        assert.equal(server.requests.length, before, "nothing was sent");
        const list = await config(root, "list");
        assert.equal(list.code, 0, list.stderr);
      } finally {
        await Deno.remove(ws, { recursive: true });
      }
    });
  } finally {
    await server.close();
  }
});
