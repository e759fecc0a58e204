/**
 * How a task ended, as data: the return value of `Engine.run` and
 * `Session.run`. Hosts branch on `kind` instead of reading the stream's
 * prose (the max-turns notice, the `abort` event's reason).
 *
 * @module
 */

/** The end of one task. */
export type RunOutcome =
  /** The model answered without calling a tool and nothing more was queued. */
  | { kind: "completed" }
  /** The task used its `max_turns` requests; `reason` is the notice the model's context got. */
  | { kind: "max_turns"; maxTurns: number; reason: string }
  /** The caller's signal stopped the task; `reason` is the `abort` event's reason. */
  | { kind: "aborted"; reason: string }
  /** The task stopped on an error (model request, retries exhausted, compaction); `reason` is the `abort` event's reason. */
  | { kind: "failed"; reason: string };

/** The kinds of {@linkcode RunOutcome}. */
export type RunOutcomeKind = RunOutcome["kind"];

/** A run to iterate with `for await` that keeps its outcome. */
export interface TrackedRun<T> extends AsyncIterable<T> {
  /** How the run ended; undefined until it returned (and when the loop stopped early). */
  readonly outcome: RunOutcome | undefined;
}

/**
 * `run` for a `for await` loop that also wants the outcome, read from
 * `outcome` after the loop. Stopping the loop early stops `run`, as
 * iterating it directly would.
 *
 * @example
 * ```ts ignore
 * const run = trackOutcome(session.run(prompt));
 * for await (const msg of run) render(msg);
 * if (run.outcome?.kind === "max_turns") console.log("stopped at max turns");
 * ```
 */
export function trackOutcome<T>(run: AsyncGenerator<T, RunOutcome>): TrackedRun<T> {
  let outcome: RunOutcome | undefined;
  return {
    get outcome() {
      return outcome;
    },
    async *[Symbol.asyncIterator]() {
      outcome = yield* run;
    },
  };
}
