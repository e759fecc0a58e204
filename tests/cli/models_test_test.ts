import assert from "node:assert/strict";
import { runCli } from "../support/cli.ts";
import { type ModelServer, startModelServer, turn } from "../support/model_server.ts";
import { withRoot } from "../support/roots.ts";

async function add(root: string, args: string[]): Promise<void> {
  const r = await runCli(["--root", root, "config", "model", "add", ...args]);
  assert.equal(r.code, 0, r.stderr);
}

/** `--root <root> models test --provider <provider> --model-id <modelId> …`. */
function modelsTestArgs(root: string, provider: string, modelId: string, ...extra: string[]) {
  return [
    "--root",
    root,
    "models",
    "test",
    "--provider",
    provider,
    "--model-id",
    modelId,
    ...extra,
  ];
}

/** `--root <root> models test --provider ollama --model-id tiny …`. */
function testTiny(root: string, ...extra: string[]) {
  return runCli(modelsTestArgs(root, "ollama", "tiny", ...extra));
}

/** `body` with a root whose model (ollama, tiny) is `server`, started from `opts`. */
async function withTiny(
  opts: Parameters<typeof startModelServer>[0],
  body: (root: string, server: ModelServer) => Promise<void>,
): Promise<void> {
  const server = await startModelServer(opts);
  try {
    await withRoot(async (root) => {
      await addTiny(root, server.baseUrl("openai-chat"));
      await body(root, server);
    });
  } finally {
    await server.close();
  }
}

function addTiny(root: string, baseUrl: string): Promise<void> {
  return add(root, ["--provider", "ollama", "--model-id", "tiny", "--base-url", baseUrl]);
}

/** Every header value and the body of every request a server received, as one string. */
function everythingSent(
  server: { requests: { headers: Record<string, string>; body: unknown }[] },
): string {
  return server.requests.map((r) => JSON.stringify(r.headers) + JSON.stringify(r.body)).join("\n");
}

Deno.test("a key configured for one provider never reaches another provider's server, even for the same model id", async () => {
  const a = await startModelServer({ turns: [turn.text("pong"), turn.text("pong")] });
  const b = await startModelServer({ turns: [turn.text("pong"), turn.text("pong")] });
  try {
    await withRoot(async (root) => {
      await add(root, [
        "--provider",
        "deepseek",
        "--model-id",
        "same-model",
        "--base-url",
        a.baseUrl("openai-chat"),
        "--api-key",
        "sk-deepseek-entry-AAAA",
      ]);
      await add(root, [
        "--provider",
        "fireworks",
        "--model-id",
        "same-model",
        "--base-url",
        b.baseUrl("openai-chat"),
      ]);
      const env = {
        FIREWORKS_API_KEY: "fw-env-BBBB",
        DEEPSEEK_API_KEY: "sk-deepseek-env-unused",
        OPENAI_API_KEY: "sk-openai-must-never-travel",
      };
      const ra = await runCli(modelsTestArgs(root, "deepseek", "same-model"), { env });
      const rb = await runCli(modelsTestArgs(root, "fireworks", "same-model"), { env });
      assert.equal(ra.code, 0, ra.stderr + ra.stdout);
      assert.equal(rb.code, 0, rb.stderr + rb.stdout);
      assert.equal(a.requests.length, 1);
      assert.equal(b.requests.length, 1);
      assert.equal(a.requests[0]!.headers["authorization"], "Bearer sk-deepseek-entry-AAAA");
      assert.equal(b.requests[0]!.headers["authorization"], "Bearer fw-env-BBBB");
      const sentToA = everythingSent(a);
      const sentToB = everythingSent(b);
      for (
        const leaked of ["fw-env-BBBB", "sk-openai-must-never-travel", "sk-deepseek-env-unused"]
      ) {
        assert.ok(!sentToA.includes(leaked), `server A received ${leaked}`);
      }
      for (
        const leaked of [
          "sk-deepseek-entry-AAAA",
          "sk-openai-must-never-travel",
          "sk-deepseek-env-unused",
        ]
      ) {
        assert.ok(!sentToB.includes(leaked), `server B received ${leaked}`);
      }
    });
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("models test reports first-token and total latency for a configured model", async () => {
  await withTiny({ turns: [{ ...turn.text("pong"), delay_ms: 50 }] }, async (root, server) => {
    const r = await testTiny(root, "--json");
    assert.equal(r.code, 0, r.stderr);
    const [res] = JSON.parse(r.stdout);
    assert.equal(res.status, "completed");
    assert.equal(res.text, "pong");
    assert.ok(res.ttft_ms >= 50, `ttft ${res.ttft_ms} should include the 50 ms server delay`);
    assert.ok(res.total_ms >= res.ttft_ms);
    assert.equal(server.requests[0]!.model, "tiny");
  });
});

Deno.test("models test --all tests every configured model of the group in parallel and fails when one fails", async () => {
  const server = await startModelServer({
    handler: (req) =>
      req.model === "broken"
        ? turn.error(401, { error: { message: "bad key", code: "invalid_api_key" } })
        : turn.text("pong"),
  });
  try {
    await withRoot(async (root) => {
      for (const m of ["m1", "m2", "broken"]) {
        await add(root, [
          "--provider",
          "vllm",
          "--model-id",
          m,
          "--base-url",
          server.baseUrl("openai-chat"),
        ]);
      }
      const r = await runCli(["--root", root, "models", "test", "--provider", "vllm", "--all"]);
      assert.equal(r.code, 1);
      assert.match(r.stdout, /vllm\s+m1\s+ok/);
      assert.match(r.stdout, /vllm\s+m2\s+ok/);
      assert.match(r.stdout, /vllm\s+broken\s+FAIL \(HTTP 401\)/);
      assert.match(
        r.stderr,
        /^vllm\/broken: .* rejected the credentials: set the provider's API key/m,
      );
      assert.equal(server.requests.length, 3);
    });
  } finally {
    await server.close();
  }
});

Deno.test("models test refuses a half pair and an unconfigured pair before any request", async () => {
  await withRoot(async (root) => {
    const half = await runCli(["--root", root, "models", "test", "--model-id", "x"]);
    assert.equal(half.code, 2);
    assert.match(half.stderr, /--model-id and --provider must be given together/);
    const unknown = await runCli(modelsTestArgs(root, "deepseek", "nope"));
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /deepseek/);
    assert.match(unknown.stderr, /penguin config model add/);
  });
});

Deno.test("models test names a refused connection as such, with the host and the fix, not as a timeout", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  await withRoot(async (root) => {
    await addTiny(root, `http://127.0.0.1:${port}/v1`);
    const r = await testTiny(root);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /ollama\s+tiny\s+FAIL \(connection refused\)/);
    assert.doesNotMatch(r.stdout, /timeout/);
    assert.match(r.stdout, new RegExp(`connection refused by 127\\.0\\.0\\.1:${port}`));
    assert.match(
      r.stderr,
      new RegExp(
        `^ollama/tiny: nothing is listening at 127\\.0\\.0\\.1:${port}: start the server`,
        "m",
      ),
    );
    const j = await testTiny(root, "--json");
    const [res] = JSON.parse(j.stdout);
    assert.equal(res.status, "timeout", "the StopReason stays as recorded");
    assert.equal(res.failure, "refused");
    assert.equal(res.failure_label, "connection refused");
    assert.equal(res.host, `127.0.0.1:${port}`);
    assert.match(res.fix, /start the server/);
  });
});

Deno.test("models test shows an HTTP error's status and the provider's own message", async () => {
  const overloaded = { status: 503, message: "The engine is overloaded" };
  await withTiny({ turns: [{ items: [], http_error: overloaded }] }, async (root, server) => {
    const r = await testTiny(root);
    assert.equal(r.code, 1);
    const host = new URL(server.baseUrl("openai-chat")).host;
    assert.match(r.stdout, /ollama\s+tiny\s+FAIL \(HTTP 503\)/);
    assert.ok(r.stdout.includes(`HTTP 503 from ${host}: The engine is overloaded`), r.stdout);
    assert.match(r.stderr, /is failing or overloaded: try again later/);
  });
});

Deno.test("models test masks a provider's echo of the configured key, in the table and --json (round 24 secrets B6)", async () => {
  const key = "sk-Mt4Wm9Xe2Rt6Yu1Io8Pa3Sd7Fg5";
  const server = await startModelServer({
    handler: (req) =>
      turn.error(401, {
        error: { message: `Incorrect API key provided: ${req.headers["authorization"]}` },
      }),
  });
  try {
    await withRoot(async (root) => {
      await add(root, [
        ...["--provider", "ollama", "--model-id", "tiny"],
        ...["--base-url", server.baseUrl("openai-chat"), "--api-key", key],
      ]);
      for (const json of [[], ["--json"]]) {
        const r = await runCli(modelsTestArgs(root, "ollama", "tiny", ...json));
        assert.equal(r.code, 1, r.stderr);
        assert.ok(everythingSent(server).includes(key), "the key went to the provider");
        assert.ok(r.stdout.includes("[redacted:api_key:"), r.stdout);
        assert.ok(!(r.stdout + r.stderr).includes(key.slice(3, 11)), r.stdout + r.stderr);
      }
    });
  } finally {
    await server.close();
  }
});
