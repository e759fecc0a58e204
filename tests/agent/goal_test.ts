// Goal mode's pieces as data: the objective, the round texts, the progress a
// trace records, the goal file, and the downgrade of an ended goal's round.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  budgetLine,
  DEFAULT_BUDGET,
  DEFAULT_MAX_ROUNDS,
  goalProgressOf,
  goalRoundOf,
  goalRoundText,
  goalTokenDelta,
  goalWrapUpText,
  objectiveOf,
  resolveGoalLimits,
} from "../../lib/agent/goal.ts";
import { goalFinishedLabel, goalStartLabel } from "../../lib/display/labels.ts";
import { buildCarryOver, downgradeGoalRound } from "../../lib/agent/mod.ts";
import { eventMsg, modelMsg, userText } from "../../lib/protocol/builders.ts";
import { parseGoalFile, readGoalFile, writeGoalFile } from "../../lib/state/goal_file.ts";
import { parseTokenBudget } from "../../lib/cli/commands/_goal_flags.ts";
import { withTempDir } from "../support/roots.ts";

const usage = (total: number, cacheRead: number) =>
  eventMsg({
    type: "token_usage",
    session: { cache_read: 0, cache_write: 0, output: 0, total: 0 },
    request: { cache_read: cacheRead, cache_write: total - cacheRead - 5, output: 5, total },
  });

Deno.test("the objective is the text without its leading marker blocks", () => {
  assert.equal(objectiveOf("Fix the tests"), "Fix the tests");
  assert.equal(
    objectiveOf("[use_skills]\nskills: a, b\n[/use_skills]\n\n  Fix the tests \n"),
    "Fix the tests",
  );
  assert.equal(
    objectiveOf(
      "[model_switch_from]\nsession: s\n[/model_switch_from]\n\n[use_skills]\nskills: a\n[/use_skills]\n\nGo",
    ),
    "Go",
  );
  // Only the known blocks are stripped, and only at the start.
  assert.equal(objectiveOf("[note]\nx\n[/note]\n\nGo"), "[note]\nx\n[/note]\n\nGo");
  assert.equal(objectiveOf("[use_skills]\nskills: a\n[/use_skills]\n"), "");
});

Deno.test("round texts carry the round, the goal file, the budget line and the body; the wrap-up says so", () => {
  const t = goalRoundText({
    round: 3,
    objective: "Ship: v2",
    path: "/s/GOAL.yaml",
    budget: 1000,
    used: 400,
    body: "Ship: v2",
  });
  assert.equal(goalRoundOf(t), 3);
  assert.ok(t.includes("\nGoal file: /s/GOAL.yaml\n"));
  // The objective is YAML-quoted in the file, as in the block.
  assert.ok(t.includes('```yaml\nobjective: "Ship: v2"\nstatus: active\n```'), t);
  assert.ok(t.includes("\nBudget: 400 / 1000 tokens used (remaining: 600).\n"));
  assert.ok(t.endsWith("\n[/goal]\n\nShip: v2"));
  const w = goalWrapUpText({ round: 4, objective: "o", path: "/g", budget: 10, used: 30 });
  assert.equal(goalRoundOf(w), 4);
  assert.ok(w.includes("wrap-up:"));
  assert.equal(budgetLine(undefined, 7), "Budget: none (unbounded). Tokens used so far: 7.");
  assert.equal(budgetLine(10, 30), "Budget: 30 / 10 tokens used (remaining: 0).");
  assert.equal(goalRoundOf("[goal]\nnot a round\n[/goal]"), null);
});

Deno.test("goal limits: bounded by default (10 rounds, 500k tokens); null or 0 is unbounded", () => {
  assert.equal(DEFAULT_MAX_ROUNDS, 10);
  assert.equal(DEFAULT_BUDGET, 500_000);
  assert.deepEqual(resolveGoalLimits({}), { budget: 500_000, maxRounds: 10 });
  assert.deepEqual(resolveGoalLimits({ budget: null, maxRounds: 0 }), {
    budget: undefined,
    maxRounds: 0,
  });
  assert.deepEqual(resolveGoalLimits({ budget: 0, maxRounds: 3 }), {
    budget: undefined,
    maxRounds: 3,
  });
  assert.equal(
    goalStartLabel({ maxRounds: 10, budget: 500_000, used: 0 }),
    "[goal] up to 10 rounds · budget 500k tokens",
  );
  assert.equal(
    goalStartLabel({ maxRounds: 0, budget: undefined, used: 1500, hint: "h" }),
    "[goal] no round cap · no token budget (1.5k used so far) · h",
  );
});

Deno.test("a round after a final answer with the status unchanged says so; the round cap line counts down", () => {
  const base = { round: 2, objective: "o", path: "/g", used: 0, body: "o" };
  const plain = goalRoundText({ ...base, roundsLeft: 8 });
  assert.ok(plain.includes("\nRound cap: 8 more round(s) in this run after this one.\n"), plain);
  assert.ok(!plain.includes("still active"), plain);
  const nudged = goalRoundText({ ...base, unchanged: true });
  assert.ok(nudged.includes("\nRound cap: none.\n"), nudged);
  assert.ok(
    nudged.includes(
      "the previous round ended with a final answer, but the goal file's status is still active",
    ),
    nudged,
  );
});

Deno.test("the goal's last line names why it ended", () => {
  const e = { rounds: 10, tokens_used: 1200 };
  const label = (o: Partial<Parameters<typeof goalFinishedLabel>[0]>) =>
    goalFinishedLabel({ ...e, outcome: "aborted", ...o });
  assert.equal(label({ outcome: "complete" }), "[goal] completed · 10 rounds · tokens 1.2k");
  assert.match(label({ outcome: "blocked" }), /^\[goal\] blocked /);
  assert.match(label({ outcome: "budget_limited" }), /^\[goal\] stopped: token budget exhausted /);
  assert.match(
    label({ reason: "round_cap", max_rounds: 10 }),
    /^\[goal\] stopped: round cap of 10 reached · 10 rounds/,
  );
  assert.match(label({ reason: "interrupted" }), /^\[goal\] aborted: interrupted /);
  assert.match(label({ reason: "max_turns" }), /^\[goal\] aborted: a round hit max turns /);
  assert.match(label({ reason: "round_failed" }), /^\[goal\] aborted: a round failed /);
  // A trace written before the reason was recorded.
  assert.match(label({}), /^\[goal\] interrupted /);
});

Deno.test("token use is the request total minus its cached input", () => {
  assert.equal(goalTokenDelta(usage(100, 30)), 70);
  assert.equal(goalTokenDelta(modelMsg(userText("x"))), 0);
});

Deno.test("goal progress from a trace: rounds, tokens while the goal runs, a goal_finished's totals win", () => {
  const round = (n: number) =>
    modelMsg(userText(goalRoundText({ round: n, objective: "o", path: "/g", used: 0, body: "o" })));
  assert.equal(goalProgressOf([modelMsg(userText("hi")), usage(50, 0)]), null);
  const first = [round(1), usage(100, 20), round(2), usage(100, 0)];
  assert.deepEqual(goalProgressOf(first), { rounds: 2, tokensUsed: 180 });
  const finished = [
    ...first,
    eventMsg({ type: "goal_finished", outcome: "aborted", rounds: 2, tokens_used: 500 }),
    // A plain task after the goal does not count.
    modelMsg(userText("unrelated")),
    usage(100, 0),
  ];
  assert.deepEqual(goalProgressOf(finished), { rounds: 2, tokensUsed: 500, finished: "aborted" });
  // A continued goal goes on from the finished totals; a round 1 starts over.
  assert.deepEqual(goalProgressOf([...finished, round(3), usage(10, 0)]), {
    rounds: 3,
    tokensUsed: 510,
  });
  assert.deepEqual(goalProgressOf([...finished, round(1), usage(10, 0)]), {
    rounds: 1,
    tokensUsed: 10,
  });
  // Subagents' usage (origin-tagged, merged in from their own traces) counts while the goal runs.
  const child = (n: number) => ({ ...usage(n, 0), origin: ["child"] });
  assert.deepEqual(goalProgressOf([child(5), round(1), child(10), usage(1, 0)]), {
    rounds: 1,
    tokensUsed: 11,
  });
  assert.deepEqual(goalProgressOf([...finished, child(7)]), {
    rounds: 2,
    tokensUsed: 500,
    finished: "aborted",
  });
});

Deno.test("the goal file: written with status active, read back, a bad status is a problem", async () => {
  await withTempDir("penguin-goal-", async (dir) => {
    const sp = join(dir, "scratch");
    assert.match((await readGoalFile(sp)).ok ? "" : "missing", /missing/);
    await writeGoalFile(sp, "Fix: all\nof it");
    assert.deepEqual(await readGoalFile(sp), {
      ok: true,
      objective: "Fix: all\nof it",
      status: "active",
    });
    await Deno.writeTextFile(join(sp, "GOAL.yaml"), "objective: x\nstatus: Complete\n");
    assert.deepEqual(await readGoalFile(sp), { ok: true, objective: "x", status: "complete" });
  });
  assert.equal(parseGoalFile("objective: x\nstatus: done\n").ok, false);
  assert.equal(parseGoalFile("status: complete\n").ok, false);
  assert.equal(parseGoalFile("objective: [x\n").ok, false);
  assert.equal(parseGoalFile("- a\n").ok, false);
});

Deno.test("token budgets: digits with k or m, rounded, above zero", () => {
  assert.equal(parseTokenBudget("50000"), 50000);
  assert.equal(parseTokenBudget("200k"), 200000);
  assert.equal(parseTokenBudget("1.5M"), 1500000);
  assert.equal(parseTokenBudget("0.0004k"), null);
  for (const bad of ["", "0", "-5", "1e3", "5 k", "k", "none"]) {
    assert.equal(parseTokenBudget(bad), null);
  }
});

Deno.test("an ended goal's round is downgraded: the text itself, and inside a transcribed carry-over", () => {
  const text = goalRoundText({ round: 2, objective: "o", path: "/g", used: 0, body: "Do it" });
  const down = "[goal round 2 of an ended goal run — protocol omitted; do not act on it]\nDo it";
  assert.equal(downgradeGoalRound(text), down);
  assert.equal(downgradeGoalRound("plain"), "plain");
  const carry = buildCarryOver([userText(text)], {
    toolOutputs: [],
    toolCalls: [],
    segments: [],
    outcome: { status: "aborted" },
  });
  const block = (carry[0] as { text: string }).text;
  assert.ok(block.includes(`  [user_input]${down}[/user_input]`), block);
  assert.ok(!block.includes("Goal file:"), block);
});

Deno.test("a GOAL.yaml the model replaced by a link is neither followed on read nor written through", async () => {
  await withTempDir("penguin-goal-link-", async (dir) => {
    const scratchpad = join(dir, "scratchpad");
    await Deno.mkdir(scratchpad);
    const secret = join(dir, "vault.toml");
    await Deno.writeTextFile(secret, "objective: the secret\nstatus: complete\n");
    await Deno.symlink(secret, join(scratchpad, "GOAL.yaml"));
    const read = await readGoalFile(scratchpad);
    assert.equal(read.ok, false);
    assert.match(!read.ok ? read.problem : "", /symbolic link/);
    assert.doesNotMatch(JSON.stringify(read), /the secret/);
    // Restarting the goal replaces the link and leaves its target alone.
    await writeGoalFile(scratchpad, "Fix the tests");
    assert.equal(await Deno.readTextFile(secret), "objective: the secret\nstatus: complete\n");
    assert.equal((await Deno.lstat(join(scratchpad, "GOAL.yaml"))).isSymlink, false);
    assert.deepEqual(await readGoalFile(scratchpad), {
      ok: true,
      objective: "Fix the tests",
      status: "active",
    });
    // A second name (a hard link to a secret) is refused too.
    await Deno.remove(join(scratchpad, "GOAL.yaml"));
    await Deno.link(secret, join(scratchpad, "GOAL.yaml"));
    assert.equal((await readGoalFile(scratchpad)).ok, false);
  });
});
