/**
 * A full garbage collection on request, for the few places that read one
 * very large string after another (MCP answers, long lines of a foreign
 * session): V8 frees such strings only in a full collection, so without one
 * they pile up until the heap grows past its limit. The collector is V8's
 * `gc`, exposed at run time through node:v8 and node:vm (this works under
 * penguin's permission set and in the compiled binary); where the runtime
 * does not offer it, a function that does nothing.
 *
 * @module
 */
import v8 from "node:v8";
import vm from "node:vm";

let collector: (() => void) | undefined;

/** The process's full garbage collection (a no-op where the runtime has none). */
export function garbageCollector(): () => void {
  if (collector) return collector;
  collector = () => {};
  try {
    v8.setFlagsFromString("--expose-gc");
    const gc: unknown = vm.runInNewContext("gc");
    if (typeof gc === "function") collector = gc as () => void;
  } catch {
    // Not offered by this runtime: callers still work, with more memory.
  }
  return collector;
}
