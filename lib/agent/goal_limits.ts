/**
 * A goal run's limits (token budget, round cap) and their defaults. Apart
 * from the goal loop (goal.ts) so that `penguin run` reads its flags'
 * defaults without loading the loop, which it loads only for `--goal`.
 *
 * @module
 */

/** Default round cap of a goal run. */
export const DEFAULT_MAX_ROUNDS = 10;

/** Default token budget of a goal (tokens used, earlier runs of a continued goal included). */
export const DEFAULT_BUDGET = 500_000;

/** Limits of a goal run. */
export interface GoalLimits {
  /** Token budget; absent = {@linkcode DEFAULT_BUDGET}; null or ≤ 0 = unbounded. */
  budget?: number | null;
  /** Round cap of this run; default {@linkcode DEFAULT_MAX_ROUNDS}, ≤ 0 disables. */
  maxRounds?: number;
}

/** The limits a goal run applies: the budget (undefined = unbounded) and the round cap (0 = none). */
export interface ResolvedGoalLimits {
  /** Token budget, or undefined when unbounded. */
  budget: number | undefined;
  /** Round cap of this run, 0 when disabled. */
  maxRounds: number;
}

/** `limits` with the defaults filled in. */
export function resolveGoalLimits(limits: GoalLimits): ResolvedGoalLimits {
  const budget = limits.budget === undefined ? DEFAULT_BUDGET : limits.budget;
  const maxRounds = limits.maxRounds ?? DEFAULT_MAX_ROUNDS;
  return {
    budget: budget !== null && budget > 0 ? budget : undefined,
    maxRounds: maxRounds > 0 ? maxRounds : 0,
  };
}
