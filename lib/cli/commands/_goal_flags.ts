/**
 * The goal-mode flags of `penguin run` (`--goal`, `--budget`,
 * `--max-rounds`) and the token budget syntax they share with chat's
 * `/goal:<budget>`.
 *
 * @module
 */
import { PenguinError } from "../../protocol/errors.ts";
import { DEFAULT_BUDGET, DEFAULT_MAX_ROUNDS } from "../../agent/goal_limits.ts";
import { formatTokens } from "../../display/numbers.ts";
import { type Flag, positiveInteger } from "../args.ts";

/**
 * A token budget: digits with an optional fraction and an optional `k`
 * (thousand) or `m` (million) suffix, rounded to whole tokens and above
 * zero (`50000`, `200k`, `1.5m`). Null when `text` is not one.
 */
export function parseTokenBudget(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text.trim());
  if (!m) return null;
  const scale = m[2]!.toLowerCase() === "k" ? 1e3 : m[2]!.toLowerCase() === "m" ? 1e6 : 1;
  const n = Math.round(Number(m[1]) * scale);
  return n > 0 ? n : null;
}

/** A budget value: a token count, or null for `none` (unbounded). */
function budgetOf(raw: string, label: string): number | null {
  if (raw.trim().toLowerCase() === "none") return null;
  const n = parseTokenBudget(raw);
  if (n === null) {
    throw new PenguinError(
      "usage",
      `${label} must be a number of tokens above 0 such as 50000, 200k or 1.5m, or none, got ${
        JSON.stringify(raw)
      }`,
    );
  }
  return n;
}

/** `--goal [budget]`: the value is "" when left out (PenguinHarness's `--goal <budget>` form). */
export const GOAL: Flag<number | null | ""> = {
  name: "goal",
  type: "string",
  value: "[budget]",
  optionalValue: true,
  help: "goal mode: work in rounds until the objective (-m) is met, the model\n" +
    "reports it blocked, the budget is spent or the round cap is hit;\n" +
    "with --resume and no -m, continue the session's unfinished goal;\n" +
    "a value is the budget (--goal 200k is --goal --budget 200k)",
  parse: (raw, label) => (raw === "" ? "" : budgetOf(raw, label)),
};
/** `--budget <tokens>|none`. */
export const BUDGET: Flag<number | null> = {
  name: "budget",
  type: "string",
  value: "<tokens>",
  help: "token budget of the goal (50000, 200k, 1.5m; none for unbounded);\n" +
    `when it is spent, one wrap-up round ends the goal (default ${formatTokens(DEFAULT_BUDGET)})`,
  parse: budgetOf,
};
/** `--max-rounds <n>`. */
export const MAX_ROUNDS: Flag<number> = {
  name: "max-rounds",
  type: "string",
  value: "<n>",
  help: `stop the goal after n rounds of this run (default ${DEFAULT_MAX_ROUNDS})`,
  parse: (raw, label) => positiveInteger(raw, label),
};
