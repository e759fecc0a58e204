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
let collections = 0;

/** The process's full garbage collection (a no-op where the runtime has none). */
export function garbageCollector(): () => void {
  if (collector) return collector;
  collector = () => {};
  try {
    v8.setFlagsFromString("--expose-gc");
    const gc: unknown = vm.runInNewContext("gc");
    if (typeof gc === "function") {
      collector = () => {
        collections++;
        (gc as () => void)();
      };
    }
  } catch {
    // Not offered by this runtime: callers still work, with more memory.
  }
  return collector;
}

/** Whether the process's collector has been looked for yet (tests). */
export function collectorFound(): boolean {
  return collector !== undefined;
}

/** How many full collections the process's collector has run (tests). */
export function fullCollections(): number {
  return collections;
}

/**
 * A pass's collector: call it with the bytes handled since the last call;
 * every `bytes` of them it runs a full collection (a few milliseconds on a
 * heap of tens of MB). Importing 40 MB of small lines peaked at 190 MB
 * without, 120 MB with one every 8 MiB.
 */
export function collectorEvery(bytes: number): (handled: number) => void {
  let since = 0;
  return (handled) => {
    since += handled;
    if (since < bytes) return;
    since = 0;
    // Found at the first collection, not when made: finding it makes a V8 context, which a
    // process that never collects (most runs: no object of megabytes) does not pay for.
    garbageCollector()();
  };
}

/** The stretch of a streaming pass after which its collector runs. */
export const COLLECT_EVERY_BYTES = 8 * 1024 * 1024;

/** Objects of at least this many bytes (or characters) count toward {@linkcode largeGarbage}. */
export const LARGE_GARBAGE_MIN = 1024 * 1024;

/**
 * The process's collector of large objects just made garbage: one full
 * collection every 32 MiB of them. A server-sent event of megabytes (a
 * signature sent whole) leaves its bytes, its text and its parse behind once
 * parsed, and a trace record of megabytes its JSON text and bytes once
 * written; V8 frees such objects only in a full collection, which came only
 * once the heap had grown to several times what was alive (attack round 24
 * bounded R10: eight subagents answering a 15 MB signature at once, 389–514
 * MB, of which some 100 MB alive).
 */
const large = collectorEvery(4 * COLLECT_EVERY_BYTES);

/**
 * Count an object of `size` bytes or characters just made garbage (smaller
 * than `min`, by default {@linkcode LARGE_GARBAGE_MIN}: not counted). V8
 * keeps objects from about 128 KiB in its large-object space, freed only by
 * a full collection: a caller that knows its objects are that large (a
 * server-sent event's copies) gives a lower `min`.
 */
export function largeGarbage(size: number, min = LARGE_GARBAGE_MIN): void {
  if (size >= min) large(size);
}
