import assert from "node:assert/strict";
import {
  classifyException,
  classifyHttpError,
  classifyStreamError,
  describeError,
  MALFORMED_CODE,
  parseRetryAfter,
} from "../../lib/models/classify.ts";

Deno.test("HTTP 401 and 403 classify as auth", () => {
  assert.equal(classifyHttpError(401, { message: "Incorrect API key" }).status, "auth");
  assert.equal(classifyHttpError(403, { message: "forbidden" }).status, "auth");
});

Deno.test("an auth code on another status classifies as auth (Gemini API_KEY_INVALID on 400)", () => {
  assert.equal(
    classifyHttpError(400, { message: "API key not valid", code: "API_KEY_INVALID" }).status,
    "auth",
  );
  assert.equal(
    classifyHttpError(400, { message: "denied", code: "PERMISSION_DENIED" }).status,
    "auth",
  );
  assert.equal(
    classifyHttpError(400, { message: "x", code: "authentication_error" }).status,
    "auth",
  );
});

Deno.test("429, 408 and 5xx are transport-shaped timeouts", () => {
  for (const status of [408, 429, 500, 502, 503, 504, 529]) {
    const o = classifyHttpError(status, { message: "busy" });
    assert.equal(o.status, "timeout", `HTTP ${status}`);
    assert.equal(o.permanent, undefined);
    assert.equal(o.http_status, status);
  }
});

Deno.test("other 4xx are permanent failures with the provider message and code", () => {
  const o = classifyHttpError(400, { message: "Unsupported value", code: "unsupported_value" });
  assert.deepEqual(o, {
    status: "failed",
    permanent: true,
    http_status: 400,
    failure: "http",
    error_message: "HTTP 400: Unsupported value (unsupported_value)",
  });
});

Deno.test("Retry-After is read as seconds or as an HTTP date", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(parseRetryAfter("3", now), 3000);
  assert.equal(parseRetryAfter("1.5", now), 1500);
  assert.equal(parseRetryAfter("Thu, 01 Jan 2026 00:00:10 GMT", now), 10_000);
  assert.equal(parseRetryAfter("Wed, 31 Dec 2025 00:00:00 GMT", now), 0, "a past date waits 0");
  assert.equal(parseRetryAfter("soon", now), undefined);
  assert.equal(parseRetryAfter(null, now), undefined);
  assert.equal(classifyHttpError(429, { message: "slow" }, "2").retry_after_ms, 2000);
});

Deno.test("in-stream errors classify by code and type", () => {
  assert.equal(
    classifyStreamError({ message: "Overloaded", code: "overloaded_error" }).status,
    "timeout",
  );
  assert.equal(
    classifyStreamError({ message: "x", code: "rate_limit_exceeded" }).status,
    "timeout",
  );
  assert.equal(classifyStreamError({ message: "upstream", status: 502 }).status, "timeout");
  assert.equal(classifyStreamError({ message: "bad key", code: "invalid_api_key" }).status, "auth");
  assert.equal(
    classifyStreamError({ message: "quota", code: "insufficient_quota" }).status,
    "failed",
  );
  assert.equal(classifyStreamError({ message: "bad", code: MALFORMED_CODE }).status, "malformed");
});

Deno.test("thrown errors: parse errors are malformed, network errors are timeouts, others failed", () => {
  assert.equal(classifyException(new SyntaxError("Unexpected token")).status, "malformed");
  const named = new Error("args");
  named.name = "ToolCallArgumentParseError";
  assert.equal(classifyException(named).status, "malformed");
  assert.equal(
    classifyException(new Error("Streaming response yielded no events")).status,
    "malformed",
  );
  assert.equal(classifyException(new TypeError("error sending request for url")).status, "timeout");
  const reset = Object.assign(new Error("read failed"), { code: "ECONNRESET" });
  assert.equal(classifyException(new Error("outer", { cause: reset })).status, "timeout");
  assert.equal(classifyException(new Error("socket hang up")).status, "timeout");
  assert.equal(classifyException(new Error("terminated: other side closed")).status, "timeout");
  const auth = new Error("no");
  auth.name = "AuthenticationError";
  assert.equal(classifyException(auth).status, "auth");
  assert.equal(classifyException(new Error("something odd")).status, "failed");
});

Deno.test("error text joins the cause chain and appends codes", () => {
  const inner = Object.assign(new Error("connect refused"), { code: "ECONNREFUSED" });
  assert.equal(
    describeError(new Error("fetch failed", { cause: inner })),
    "fetch failed: connect refused (ECONNREFUSED)",
  );
});
