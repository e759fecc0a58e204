import assert from "node:assert/strict";
import { diskClientType, routeClientType } from "../../lib/models/client_type.ts";
import { resolveModel } from "../../lib/models/resolve.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { parseProjectConfig } from "../../lib/state/project_config.ts";

Deno.test("client types route like PenguinHarness's gateway: protocol ids, then routing keys by substring", () => {
  const cases: Array<[string, string | undefined]> = [
    ["openai-chat", "openai-chat"],
    ["openai-responses", "openai-responses"],
    ["openai", "openai-chat"],
    ["ant-messages", "anthropic-messages"],
    ["anthropic-messages", "anthropic-messages"],
    ["minimax-m3", "openai-chat"],
    ["gemini", "gemini"],
    ["Gemini-3-Pro", "gemini"],
    ["gemini-embedding-001", "gemini"],
    ["claude-opus-4-8", "anthropic-messages"],
    ["claude-sonnet-5", "anthropic-messages"],
    ["gpt-5.5", "openai-responses"],
    ["glm-5", "openai-chat"],
    ["kimi-k2.5", "openai-chat"],
    ["kimi-k3", "openai-chat"],
    ["deepseek-v4", "openai-chat"],
    ["my-ant-messages-proxy", "anthropic-messages"],
    ["azure-openai", "openai-chat"],
    ["claude-3", undefined],
    ["minimax-m3-x", undefined],
    ["kimi-k2", undefined],
    ["grpc", undefined],
    ["", undefined],
  ];
  for (const [value, protocol] of cases) assert.equal(routeClientType(value), protocol, value);
});

Deno.test("new entries store PenguinHarness's spelling", () => {
  assert.equal(diskClientType("anthropic-messages"), "ant-messages");
  assert.equal(diskClientType("openai"), "openai-chat");
  assert.equal(diskClientType(" kimi-k2.5 "), "kimi-k2.5");
  assert.equal(diskClientType("openai-responses"), "openai-responses");
});

Deno.test("an unroutable client type fails only the model that has it, naming it", () => {
  const cfg = parseProjectConfig(
    '[[models]]\nprovider = "p"\nmodel_id = "k"\nclient_type = "kimi-k2.5"\nbase_url = "http://h/v1"\napi_key = "x"\n\n' +
      '[[models]]\nprovider = "p"\nmodel_id = "q"\nclient_type = "quantum-9"\nbase_url = "http://h/v1"\napi_key = "x"\n',
    "f",
  );
  assert.equal(
    resolveModel(cfg, { provider: "p", model_id: "k" }, () => undefined).endpoint.protocol,
    "openai-chat",
  );
  assert.throws(
    () => resolveModel(cfg, { provider: "p", model_id: "q" }, () => undefined),
    (err: unknown) =>
      err instanceof PenguinError &&
      /Model \(p, q\) has client_type "quantum-9", which penguin cannot route/.test(err.message),
  );
});
