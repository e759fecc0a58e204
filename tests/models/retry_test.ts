import assert from "node:assert/strict";
import {
  interruptibleSleep,
  MAX_RETRIES,
  retryDelayMs,
  shouldRetry,
} from "../../lib/models/retry.ts";

Deno.test("the retry ladder doubles from 2 s and caps at 30 s", () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6].map(retryDelayMs), [2000, 4000, 8000, 16000, 30000, 30000]);
});

Deno.test("failed, timeout and malformed are retried up to five times", () => {
  for (const status of ["failed", "timeout", "malformed"] as const) {
    for (let attempt = 1; attempt <= MAX_RETRIES; attempt++) {
      assert.deepEqual(shouldRetry({ status }, attempt), {
        retry: true,
        delay_ms: retryDelayMs(attempt),
      });
    }
    assert.deepEqual(
      shouldRetry({ status }, MAX_RETRIES + 1),
      { retry: false },
      "the sixth attempt is the last",
    );
  }
});

Deno.test("completed, aborted, auth and permanent failures are never retried", () => {
  assert.deepEqual(shouldRetry({ status: "completed" }, 1), { retry: false });
  assert.deepEqual(shouldRetry({ status: "aborted" }, 1), { retry: false });
  assert.deepEqual(shouldRetry({ status: "auth" }, 1), { retry: false });
  assert.deepEqual(shouldRetry({ status: "failed", permanent: true }, 1), { retry: false });
});

Deno.test("a server Retry-After replaces the ladder value, capped at 60 s", () => {
  assert.deepEqual(shouldRetry({ status: "timeout", retry_after_ms: 7000 }, 1), {
    retry: true,
    delay_ms: 7000,
  });
  assert.deepEqual(shouldRetry({ status: "timeout", retry_after_ms: 3_600_000 }, 1), {
    retry: true,
    delay_ms: 60_000,
  });
});

Deno.test("interruptibleSleep completes, or wakes early on abort", async () => {
  assert.equal(await interruptibleSleep(1), true);
  const ctl = new AbortController();
  const p = interruptibleSleep(60_000, ctl.signal);
  ctl.abort();
  assert.equal(await p, false);
  assert.equal(
    await interruptibleSleep(60_000, ctl.signal),
    false,
    "an aborted signal returns at once",
  );
});
