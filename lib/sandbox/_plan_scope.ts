/**
 * The scope of one plan (`plan.ts`) or one walk after a command
 * (`git_nested.ts`): what it read once and what it derived from that, kept
 * for the calls made inside it (through `AsyncLocalStorage`, so concurrent
 * plans of one process each keep their own). Outside a scope nothing is
 * kept: every call looks again.
 *
 * @module
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** What one plan read once: the run directories, and what its callers made of them. */
export interface PlanScope {
  /** The run directories (`privateRunDirs`) when the plan began. */
  readonly runDirs: readonly string[];
  /** What the modules the plan calls found once for it, by key. */
  readonly memo: Map<string, unknown>;
}

const scope = new AsyncLocalStorage<PlanScope>();

/** The scope of the plan being made, if any. */
export function currentPlanScope(): PlanScope | undefined {
  return scope.getStore();
}

/** Run `fn` in a new plan scope whose run directories are `runDirs`. */
export function runInPlanScope<T>(runDirs: readonly string[], fn: () => Promise<T>): Promise<T> {
  return scope.run({ runDirs, memo: new Map() }, fn);
}

/**
 * `compute()`, found once per plan scope under `key` (and again on every
 * call outside one). A value that rejects is not kept.
 */
export function memoInPlan<T>(key: string, compute: () => T): T {
  const memo = scope.getStore()?.memo;
  if (memo === undefined) return compute();
  if (memo.has(key)) return memo.get(key) as T;
  const value = compute();
  memo.set(key, value);
  if (value instanceof Promise) value.catch(() => memo.delete(key));
  return value;
}

/** Drop what the current plan scope keeps under `key`: the next call finds it again. */
export function forgetInPlan(key: string): void {
  scope.getStore()?.memo.delete(key);
}

/**
 * The entries of the directory `path`, listed once per plan scope (outside one, at each call):
 * several looks of one plan read the same home directories (`~/.ssh` for its links into roots,
 * for files with other names, for the walk of home links). Throws as `Deno.readDirSync` does.
 */
export function listDirInPlan(path: string): Deno.DirEntry[] {
  return memoInPlan(`listDir:${path}`, () => [...Deno.readDirSync(path)]);
}
