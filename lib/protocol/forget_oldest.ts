/**
 * Bounded memories of ids, names and keys: a Map or Set remembers its
 * entries in insertion order, so past a bound the oldest are forgotten.
 *
 * @module
 */

/** Forget the oldest entries of `kept` (in insertion order) past `max`. */
export function forgetOldest<K>(kept: Map<K, unknown> | Set<K>, max: number): void {
  while (kept.size > max) kept.delete(kept.keys().next().value!);
}
