import assert from "node:assert/strict";
import { onAbort } from "../../lib/protocol/abort.ts";
import { defaultWarn } from "../../lib/protocol/errors.ts";

Deno.test("onAbort runs its function once when the signal aborts", () => {
  const ctl = new AbortController();
  let calls = 0;
  onAbort(ctl.signal, () => calls++);
  assert.equal(calls, 0);
  ctl.abort();
  ctl.abort();
  assert.equal(calls, 1);
});

Deno.test("onAbort runs its function at once on a signal that already aborted", () => {
  let calls = 0;
  onAbort(AbortSignal.abort(), () => calls++);
  assert.equal(calls, 1);
});

Deno.test("onAbort's unsubscribe stops the function, and no signal means never", () => {
  const ctl = new AbortController();
  let calls = 0;
  const off = onAbort(ctl.signal, () => calls++);
  off();
  ctl.abort();
  onAbort(undefined, () => calls++)();
  assert.equal(calls, 0);
});

Deno.test("the default warn writes the line to stderr", () => {
  const original = console.error;
  const lines: unknown[][] = [];
  console.error = (...args: unknown[]) => lines.push(args);
  try {
    defaultWarn("[penguin] something to know");
  } finally {
    console.error = original;
  }
  assert.deepEqual(lines, [["[penguin] something to know"]]);
});
