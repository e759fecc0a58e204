// The file memory budget of the tool worker pool (lib/tools/worker/_memory_budget.ts): shares are
// granted in order while they fit, a call's new share replaces its old one, an abort or a release
// stops the waiting, and a share larger than the budget is capped so a call alone always runs.
// Also the image claims of each model response (lib/tools/worker/_image_claims.ts).
import assert from "node:assert/strict";
import { createImageClaims } from "../../lib/tools/worker/_image_claims.ts";
import { createMemoryBudget } from "../../lib/tools/worker/_memory_budget.ts";

const never = new AbortController().signal;

Deno.test("a share that does not fit waits until another is given back", async () => {
  const b = createMemoryBudget(10);
  assert.equal(await b.hold(1, 6, never), true);
  let second: boolean | undefined;
  const p = b.hold(2, 6, never).then((ok) => (second = ok));
  await Promise.resolve();
  assert.equal(second, undefined, "6 + 6 is over 10: the second waits");
  assert.equal(b.used, 6);
  b.release(1);
  assert.equal(await p, true);
  assert.equal(b.used, 6);
});

Deno.test("shares are granted in order: a large one at the head is not overtaken", async () => {
  const b = createMemoryBudget(10);
  await b.hold(1, 5, never);
  const order: number[] = [];
  const big = b.hold(2, 10, never).then(() => order.push(2));
  const small = b.hold(3, 1, never).then(() => order.push(3));
  await Promise.resolve();
  assert.deepEqual(order, [], "1 would fit, but the 10 asked first");
  b.release(1);
  await big;
  b.release(2);
  await small;
  assert.deepEqual(order, [2, 3]);
});

Deno.test("a new share replaces the call's old one, so two growing calls do not wait on each other", async () => {
  const b = createMemoryBudget(10);
  await b.hold(1, 5, never);
  await b.hold(2, 5, never);
  const grow1 = b.hold(1, 8, never);
  const grow2 = b.hold(2, 8, never);
  // Both gave their 5 back: the one that fits first holds its 8, the other waits for it.
  assert.equal(await grow2, true);
  assert.equal(b.used, 8);
  b.release(2);
  assert.equal(await grow1, true);
  assert.equal(b.used, 8);
});

Deno.test("a share over the budget is capped: a call alone always gets it", async () => {
  const b = createMemoryBudget(10);
  assert.equal(await b.hold(1, 1000, never), true);
  assert.equal(b.used, 10);
});

Deno.test("an abort or a release ends the waiting with false and holds nothing", async () => {
  const b = createMemoryBudget(10);
  await b.hold(1, 10, never);
  const ctl = new AbortController();
  const aborted = b.hold(2, 5, ctl.signal);
  const released = b.hold(3, 5, never);
  ctl.abort();
  assert.equal(await aborted, false);
  b.release(3);
  assert.equal(await released, false);
  assert.equal(b.used, 10);
  b.release(1);
  assert.equal(b.used, 0);
  assert.equal(await b.hold(4, 3, ctl.signal), false, "already aborted: nothing held");
  assert.equal(b.used, 0);
});

Deno.test("a call growing its share goes first in line: it holds its file already", async () => {
  const b = createMemoryBudget(10);
  await b.hold(1, 6, never);
  const order: number[] = [];
  const other = b.hold(2, 6, never).then(() => order.push(2));
  const grow = b.hold(1, 8, never).then(() => order.push(1));
  await grow;
  assert.deepEqual(order, [1]);
  b.release(1);
  await other;
  assert.deepEqual(order, [1, 2]);
});

Deno.test("image claims: a response's images up to the bound, each response apart, none without one", () => {
  const claims = createImageClaims(10);
  assert.equal(claims.claim("r1", 6), true);
  assert.equal(claims.claim("r1", 5), false, "past the bound: nothing claimed");
  assert.equal(claims.claim("r1", 4), true);
  assert.equal(claims.claim("r1", 1), false);
  assert.equal(claims.claim("r2", 10), true);
  assert.equal(claims.claim(undefined, 1e9), true, "a call outside a response is not bounded here");
});
