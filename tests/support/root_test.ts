/**
 * A test definition whose body runs in a new empty data root
 * ({@linkcode withRoot}), skipped where it cannot run.
 *
 * @module
 */
import { withRoot } from "./roots.ts";

/** `Deno.test(rootTest(name, ignore, fn))`: test `name`, skipped when `ignore`, running `fn` in a new data root. */
export function rootTest(
  name: string,
  ignore: boolean,
  fn: (root: string) => Promise<void>,
): Deno.TestDefinition {
  return { name, ignore, fn: () => withRoot(fn) };
}
