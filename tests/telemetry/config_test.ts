import assert from "node:assert/strict";
import { parseSystemConfig } from "../../lib/state/system_config_parse.ts";
import { parseOtlpHeaders, resolveTelemetry, TELEMETRY_ENV } from "../../lib/telemetry/config.ts";

Deno.test("system_config.yaml's telemetry section is read and checked like the rest", () => {
  const cfg = parseSystemConfig(
    "system_prompt: x\ntelemetry:\n  otlp:\n    endpoint: http://c:4318\n    headers:\n      authorization: Bearer t\n  include_content: true\n",
    "/a/s.yaml",
  );
  assert.deepEqual(resolveTelemetry(() => undefined, cfg, () => {}), {
    url: "http://c:4318/v1/traces",
    headers: { authorization: "Bearer t" },
    includeContent: true,
    source: "telemetry.otlp.endpoint",
  });
  assert.throws(
    () =>
      parseSystemConfig(
        "system_prompt: x\ntelemetry:\n  otlp:\n    headers:\n      x-n: 5\n",
        "/a/s.yaml",
      ),
    /line 5, column 12: telemetry\.otlp\.headers\.x-n: expected a string/,
  );
  assert.throws(
    () =>
      parseSystemConfig(
        "system_prompt: x\ntelemetry:\n  include_content: yes please\n",
        "/a/s.yaml",
      ),
    /telemetry\.include_content: expected true or false/,
  );
});

Deno.test("telemetry config: the traces variable as is, the base one plus /v1/traces, then system_config", () => {
  const warn: string[] = [];
  const w = (l: string) => warn.push(l);
  const env = (vars: Record<string, string>) => (n: string) => vars[n];
  assert.equal(resolveTelemetry(env({}), undefined, w), null);
  const base = resolveTelemetry(
    env({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/",
      OTEL_EXPORTER_OTLP_HEADERS: "a=1, b = x%20y ,bad",
    }),
    {
      system_prompt: "",
      telemetry: { include_content: true, otlp: { headers: { a: "0", c: "3" } } },
    },
    w,
  );
  assert.deepEqual(base, {
    url: "http://c:4318/v1/traces",
    headers: { a: "1", b: "x y", c: "3" },
    includeContent: true,
    source: "OTEL_EXPORTER_OTLP_ENDPOINT",
  });
  assert.equal(warn.length, 1, "the malformed header entry is reported");
  assert.equal(
    resolveTelemetry(
      env({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://t/custom",
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c",
      }),
      undefined,
      w,
    )?.url,
    "https://t/custom",
  );
  const cfg = (otlp: Record<string, string>) =>
    resolveTelemetry(env({}), { system_prompt: "", telemetry: { otlp } }, w);
  assert.equal(cfg({ endpoint: "http://x:1" })?.url, "http://x:1/v1/traces");
  assert.equal(cfg({ endpoint: "http://x:1", traces_endpoint: "http://y/t" })?.url, "http://y/t");
  assert.equal(cfg({ endpoint: "x:1" }), null);
  assert.match(
    warn.at(-1)!,
    /telemetry is off: telemetry\.otlp\.endpoint \(x:\/\/1\) is not an http/,
  );
  assert.equal(cfg({ endpoint: "http://x" })?.includeContent, false);
  assert.deepEqual(parseOtlpHeaders("k=v=w", w), { k: "v=w" });
});

Deno.test("the binary's permission set lets penguin read every telemetry variable", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  const allow: string[] = config.permissions.penguin.env.allow;
  assert.deepEqual(TELEMETRY_ENV.filter((n) => !allow.includes(n)), []);
});

Deno.test("an endpoint that is no http(s) URL is named without its query (round 32 v11a)", () => {
  for (
    const endpoint of [
      "grpc://collector:4317/?token=tokQ9Hn4Bv7Ck2",
      "host:4318/v1?api_key=tokQ9Hn4Bv7Ck2",
    ]
  ) {
    const warned: string[] = [];
    const got = resolveTelemetry(
      (n) => (n === "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" ? endpoint : undefined),
      undefined,
      (l) => warned.push(l),
    );
    assert.equal(got, null);
    assert.equal(warned.length, 1);
    assert.match(warned[0]!, /is not an http\(s\) URL/);
    assert.ok(!warned[0]!.includes("tokQ9Hn4"), warned[0]);
  }
});
