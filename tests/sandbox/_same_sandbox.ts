/**
 * Telling a kept sandbox that could not go on from one left for a new plan: the plan of every
 * command hides the run directories other penguin processes of the machine note (a parallel test's
 * among them), so two commands of one session may get two sandboxes only because of them.
 *
 * @module
 */
import assert from "node:assert/strict";
import { sandboxKeyOf } from "../../lib/sandbox/_pool.ts";

/**
 * The second command ran in the first one's sandbox, or in a new one only because its plan
 * changed (another penguin process of the machine — a parallel test — noted a run directory or
 * data root that every plan then hides): never because the kept sandbox could not go on, and
 * never because of `notIn`, a path whose noting must leave the plan as it was.
 */
export function assertSameUnlessReplanned(first: number, second: number, notIn?: string): void {
  if (second === first) return;
  const [a, b] = [sandboxKeyOf(first), sandboxKeyOf(second)];
  assert.ok(a !== undefined && b !== undefined, "both sandboxes' keys are known");
  assert.notEqual(b, a, "a new sandbox for the same plan: the kept one could not go on");
  if (notIn !== undefined) assert.ok(!b.includes(notIn), `the plan changed for ${notIn}`);
}
