/**
 * A full garbage collection on request, for the few places that read one
 * very large string after another (MCP answers, long lines of a foreign
 * session): V8 frees such strings only in a full collection, so without one
 * they pile up until the heap grows past its limit. A long streaming pass
 * (a file of many small lines read, converted and written) makes garbage
 * fast, and V8 lets such a heap grow far past what is alive before it
 * collects: {@linkcode collectorEvery} collects after each stretch of bytes
 * instead. The collector is V8's
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

/**
 * A pass's collector: call it with the bytes handled since the last call;
 * every `bytes` of them it runs a full collection (a few milliseconds on a
 * heap of tens of MB). Importing 40 MB of small lines peaked at 190 MB
 * without, 120 MB with one every 8 MiB.
 */
export function collectorEvery(bytes: number): (handled: number) => void {
  const collect = garbageCollector();
  let since = 0;
  return (handled) => {
    since += handled;
    if (since < bytes) return;
    since = 0;
    collect();
  };
}

/** The stretch of a streaming pass after which its collector runs. */
export const COLLECT_EVERY_BYTES = 8 * 1024 * 1024;
