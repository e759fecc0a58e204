// The per-session command gate (lib/tools/command_gate.ts): slots are taken
// in order, a waiter aborted before its turn takes none, and gates are per owner.
import assert from "node:assert/strict";
import {
  commandGateOf,
  createCommandGate,
  enterCommandGates,
  MAX_PROCESS_COMMANDS,
  MAX_RUNNING_COMMANDS,
  processCommandGate,
} from "../../lib/tools/command_gate.ts";

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

Deno.test("sessions together hold at most MAX_PROCESS_COMMANDS slots of the process (round 23 B10)", async () => {
  const never = new AbortController().signal;
  // Three sessions (a parent and two subagents) each want their eight.
  const owners = [{}, {}, {}];
  const held: (() => void)[] = [];
  const waiting: Promise<(() => void) | undefined>[] = [];
  for (const owner of owners) {
    for (let i = 0; i < MAX_RUNNING_COMMANDS; i++) waiting.push(enterCommandGates(owner, never));
  }
  // The first MAX_PROCESS_COMMANDS get in, in order; the others wait for the process's slots.
  for (let i = 0; i < MAX_PROCESS_COMMANDS; i++) held.push((await waiting[i])!);
  assert.equal(processCommandGate.running, MAX_PROCESS_COMMANDS);
  let late = 0;
  for (const w of waiting.slice(MAX_PROCESS_COMMANDS)) void w.then(() => late++);
  await Promise.resolve();
  assert.equal(late, 0);
  // Each slot given back lets one more in; an aborted waiter gives its session's slot back.
  held.shift()!();
  held.push((await waiting[MAX_PROCESS_COMMANDS])!);
  const ctl = new AbortController();
  const aborted = enterCommandGates({}, ctl.signal);
  ctl.abort();
  assert.equal(await aborted, undefined);
  for (const leave of held) leave();
  for (const w of waiting.slice(MAX_PROCESS_COMMANDS + 1)) (await w)!();
  assert.equal(processCommandGate.running, 0);
  for (const owner of owners) assert.equal(commandGateOf(owner).running, 0);
});
