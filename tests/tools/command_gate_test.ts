// The per-session command gate (lib/tools/command_gate.ts): slots are taken
// in order, a waiter aborted before its turn takes none, and gates are per owner.
import assert from "node:assert/strict";
import { commandGateOf, createCommandGate } from "../../lib/tools/command_gate.ts";

Deno.test("a command gate lets `max` in, the rest in order as slots come back", async () => {
  const gate = createCommandGate(2);
  const never = new AbortController().signal;
  const a = await gate.enter(never);
  const b = await gate.enter(never);
  assert.ok(a && b);
  assert.equal(gate.running, 2);
  const order: string[] = [];
  const c = gate.enter(never).then((leave) => (order.push("c"), leave));
  const d = gate.enter(never).then((leave) => (order.push("d"), leave));
  a();
  a(); // a second call gives nothing back twice
  const leaveC = await c;
  assert.equal(gate.running, 2);
  assert.deepEqual(order, ["c"]);
  b();
  const leaveD = await d;
  assert.deepEqual(order, ["c", "d"]);
  leaveC!();
  leaveD!();
  assert.equal(gate.running, 0);
});

Deno.test("a call aborted while it waits takes no slot and lets the next one in", async () => {
  const gate = createCommandGate(1);
  const never = new AbortController().signal;
  const first = await gate.enter(never);
  const ctl = new AbortController();
  const aborted = gate.enter(ctl.signal);
  const next = gate.enter(never);
  ctl.abort();
  assert.equal(await aborted, undefined);
  first!();
  const leave = await next;
  assert.ok(leave);
  assert.equal(gate.running, 1);
  leave();
  assert.equal(await gate.enter(AbortSignal.abort()), undefined, "already aborted: no slot");
  assert.equal(gate.running, 0);
});

Deno.test("each owner has its own gate", () => {
  const a = {}, b = {};
  assert.equal(commandGateOf(a), commandGateOf(a));
  assert.notEqual(commandGateOf(a), commandGateOf(b));
  assert.equal(commandGateOf(undefined), commandGateOf(undefined));
});
