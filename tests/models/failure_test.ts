// Failure classes: real Deno fetch errors classified by the streaming driver,
// the recorded headline read back, older raw texts, and which are permanent.
import assert from "node:assert/strict";
import { classifyException } from "../../lib/models/classify.ts";
import { failureCause, failureFix, failureLabel, readFailure } from "../../lib/models/failure.ts";
import { streamModel } from "../../lib/models/stream.ts";
import { shouldRetry } from "../../lib/models/retry.ts";
import { exhaustionReason } from "../../lib/agent/_retry.ts";
import type { ModelOutcome } from "../../lib/models/outcome.ts";
import { userText } from "../../lib/protocol/builders.ts";
import { startModelServer, turn } from "../support/model_server.ts";

async function outcomeFor(baseUrl: string): Promise<ModelOutcome> {
  let out: ModelOutcome | undefined;
  for await (
    const item of streamModel({
      endpoint: {
        protocol: "openai-chat",
        provider: "custom",
        model_id: "m",
        base_url: baseUrl,
        api_key: "k",
      },
      system_prompt: "",
      tools: [],
      history: [userText("hi")],
    }, { idleTimeoutMs: 20_000 })
  ) if (item.kind === "end") out = item.outcome;
  assert.ok(out, "an end item");
  return out;
}

function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

Deno.test("a refused connection is a retried timeout whose message names the host", async () => {
  const port = closedPort();
  const o = await outcomeFor(`http://127.0.0.1:${port}/v1`);
  assert.equal(o.status, "timeout");
  assert.equal(o.failure, "refused");
  assert.equal(o.host, `127.0.0.1:${port}`);
  assert.equal(o.permanent, undefined);
  assert.match(o.error_message!, new RegExp(`^connection refused by 127\\.0\\.0\\.1:${port}: `));
  assert.equal(shouldRetry(o, 1).retry, true);
  assert.equal(
    exhaustionReason(o, 5),
    `reconnect failed after 5 retries: connection refused by 127.0.0.1:${port}`,
  );
});

Deno.test("an ftp URL and a URL that does not parse are permanent bad URLs, never fetched", async () => {
  for (const url of ["ftp://example.com/v1", "http://[::1/v1"]) {
    const o = await outcomeFor(url);
    assert.equal(o.status, "failed", url);
    assert.equal(o.permanent, true, url);
    assert.equal(o.failure, "bad_url", url);
    assert.match(o.error_message!, /^bad endpoint URL /, url);
    assert.equal(shouldRetry(o, 1).retry, false);
  }
});

Deno.test("https against a plain-HTTP server is a permanent TLS failure", async () => {
  const server = await startModelServer({ turns: [turn.text("x")] });
  try {
    const port = new URL(server.baseUrl("openai-chat")).port;
    const o = await outcomeFor(`https://127.0.0.1:${port}/v1`);
    assert.equal(o.failure, "tls");
    assert.equal(o.permanent, true);
    assert.match(
      o.error_message!,
      new RegExp(`^TLS handshake failed with 127\\.0\\.0\\.1:${port} \\(`),
    );
    assert.equal(server.requests.length, 0);
  } finally {
    await server.close();
  }
});

Deno.test("a name that does not exist fails at once; a temporary resolver failure is retried", () => {
  // Deno's wording for both getaddrinfo outcomes.
  const dnsError = (why: string) =>
    new TypeError("fetch failed", {
      cause: new Error(
        `error sending request for url (https://api.example.test/v1/chat/completions): client error (Connect): dns error: failed to lookup address information: ${why}`,
      ),
    });
  const target = { url: "https://api.example.test/v1/chat/completions" };
  const gone = classifyException(dnsError("Name or service not known"), target);
  assert.deepEqual(
    [gone.status, gone.permanent, gone.failure, gone.host],
    ["failed", true, "dns", "api.example.test"],
  );
  assert.match(
    gone.error_message!,
    /^DNS lookup failed for api\.example\.test \(Name or service not known\): fetch failed: /,
  );
  const offline = classifyException(dnsError("Temporary failure in name resolution"), target);
  assert.deepEqual(
    [offline.status, offline.permanent, offline.failure],
    ["timeout", undefined, "dns"],
  );
});

Deno.test("recorded headlines read back to their class, host, status and provider message", () => {
  const cases: [string, string, string, string | undefined, number | undefined][] = [
    [
      "timeout",
      "connection refused by 127.0.0.1:4000: fetch failed",
      "refused",
      "127.0.0.1:4000",
      undefined,
    ],
    ["timeout", "HTTP 503 from api.x.com: Overloaded (overloaded)", "http", "api.x.com", 503],
    [
      "failed",
      "error in the stream from [::1]:8080: odd (weird)",
      "stream",
      "[::1]:8080",
      undefined,
    ],
    [
      "failed",
      "DNS lookup failed for a.invalid (Name or service not known): x",
      "dns",
      "a.invalid",
      undefined,
    ],
    ["timeout", "timed out waiting for h:1 (idle 5 ms): No data", "timeout", "h:1", undefined],
    ["failed", "TLS handshake failed with h (corrupt): y", "tls", "h", undefined],
    [
      "failed",
      'bad endpoint URL ftp://h/v1 (scheme "ftp" is not http or https): z',
      "bad_url",
      "h",
      undefined,
    ],
  ];
  for (const [status, text, cls, host, http] of cases) {
    const f = readFailure(status, text);
    assert.equal(f.class, cls, text);
    assert.equal(f.host, host, text);
    assert.equal(f.http_status, http, text);
  }
  assert.equal(
    failureCause(readFailure("timeout", "HTTP 503 from api.x.com: Overloaded (overloaded)")),
    "HTTP 503 from api.x.com: Overloaded (overloaded)",
  );
  assert.equal(
    failureCause(
      readFailure(undefined, "reconnect failed after 5 retries: connection refused by h:1"),
    ),
    "connection refused by h:1",
  );
});

Deno.test("older raw texts are classified too: refused, DNS, scheme, reset, HTTP status", () => {
  const raw: [string, string, string][] = [
    [
      "timeout",
      "fetch failed: error sending request for url (http://127.0.0.1:9/v1): client error (Connect): tcp connect error: Connection refused (os error 111)",
      "connection refused",
    ],
    [
      "timeout",
      "fetch failed: error sending request for url (http://x.invalid/v1): client error (Connect): dns error: failed to lookup address information: Name or service not known",
      "DNS failure",
    ],
    ["timeout", "Url scheme 'ftp' not supported", "bad URL"],
    ["timeout", "socket hang up", "connection failed"],
    ["timeout", "HTTP 429: slow down", "HTTP 429"],
    ["timeout", "No data from the provider for 100 ms (idle timeout)", "timeout"],
    ["failed", "something odd", "error"],
  ];
  for (const [status, text, label] of raw) {
    assert.equal(failureLabel(readFailure(status, text)), label, text);
  }
  assert.equal(readFailure("timeout", raw[0]![1]).host, "127.0.0.1:9");
});

Deno.test("every class has a one-line fix naming the host", () => {
  for (const cls of ["dns", "refused", "tls", "timeout", "connection", "stream"] as const) {
    const fix = failureFix({ class: cls, host: "h.example:1" });
    assert.ok(fix.includes("h.example:1"), `${cls}: ${fix}`);
    assert.ok(!fix.includes("\n"), cls);
  }
  for (const s of [400, 401, 403, 404, 429, 500]) {
    assert.ok(failureFix({ class: "http", http_status: s, host: "h" }).startsWith("h "), String(s));
  }
});

Deno.test("a credentials error inside the stream gets the credentials fix, not 'try again'", () => {
  const f = readFailure("auth", "error in the stream from h:1: bad key (invalid_api_key)");
  assert.equal(f.class, "stream");
  assert.match(failureFix(f), /^h:1 rejected the credentials/);
  assert.match(
    failureFix(readFailure("timeout", "error in the stream from h:1: Overloaded")),
    /try again later/,
  );
});
