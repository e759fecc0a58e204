/**
 * The command policy does bounded work on hostile command text: the factory
 * rules that could be made linear are (a long word, a run of `(`), and a
 * text longer than POLICY_TEXT_MAX is refused with a reason instead of being
 * matched. The long-input tests would run for minutes with the old
 * quadratic patterns; their completing is the proof.
 */
import assert from "node:assert/strict";
import {
  compileRule,
  matchCommand,
  POLICY_TEXT_MAX,
  policyVerdict,
  TOO_LONG_REASON,
  TOO_LONG_RULE,
} from "../../lib/tools/command_policy.ts";
import { toolCall } from "../../lib/protocol/builders.ts";
import { FACTORY_COMMAND_POLICY_RULES } from "../../lib/state/command_policy_defaults.ts";
import { withCommandPolicy } from "../../lib/agent/approval.ts";

const factory = FACTORY_COMMAND_POLICY_RULES;
/** Whether the factory rule `name` matches `text` (the regex alone, no length bound). */
const hits = (name: string, text: string) =>
  compileRule(factory.find((r) => r.name === name)!.pattern)!.test(text);

Deno.test("fork-bomb rule on a 400 000-character word does not match (linear pattern)", () => {
  const word = "A".repeat(400_000);
  assert.equal(hits("fork-bomb", word), false);
  assert.equal(hits("fork-bomb", `${word} :(){ :|:& };:`), true);
});

Deno.test("command-word rules on 400 000 opening parentheses do not match (linear prefix)", () => {
  const parens = "(".repeat(400_000);
  for (const name of ["rm-recursive-force", "mkfs", "dd-to-block-device"]) {
    assert.equal(hits(name, parens), false, name);
  }
  assert.equal(hits("rm-recursive-force", `${parens}rm -rf /`), true);
});

Deno.test("a text longer than POLICY_TEXT_MAX is refused with the too-long rule and its reason", () => {
  const long = "rm ".repeat(200_000);
  assert.equal(matchCommand(long, factory), TOO_LONG_RULE);
  const call = toolCall("exec_command", JSON.stringify({ cmd: long }), "c1");
  assert.deepEqual(policyVerdict(call, factory), {
    forbidden: true,
    rule: TOO_LONG_RULE,
    reason: TOO_LONG_REASON,
  });
  const input = toolCall("input_command", JSON.stringify({ process_id: "p", chars: long }), "c2");
  assert.equal(policyVerdict(input, factory).forbidden, true);
  const approve = withCommandPolicy(() => "allow", { rules: factory });
  assert.deepEqual(approve(call), { decision: "forbidden", reason: TOO_LONG_REASON });
});

Deno.test("the length bound counts collapsed text and applies only while a rule is enabled", () => {
  const atBound = "x".repeat(POLICY_TEXT_MAX);
  assert.equal(matchCommand(atBound, factory), undefined);
  assert.equal(matchCommand(`${atBound}${" ".repeat(100_000)}`, factory), undefined);
  assert.equal(matchCommand(`${atBound}y`, factory), TOO_LONG_RULE);
  const off = factory.map((r) => ({ ...r, enabled: false }));
  assert.equal(matchCommand(`${atBound}y`, off), undefined);
  assert.equal(matchCommand(`${atBound}y`, []), undefined);
  const call = toolCall("exec_command", JSON.stringify({ cmd: `${atBound}y` }), "c3");
  assert.deepEqual(policyVerdict(call, { enabled: false, rules: factory }), { forbidden: false });
});
