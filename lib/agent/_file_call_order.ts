/**
 * The order of one turn's file-tool calls. A response may hold several
 * calls on the same file (two `edit_file`s of one file, an edit then a
 * `read_file` of it); run at once they race, and the later write wins over
 * an edit made meanwhile. So a call that writes files waits for every file
 * call before it, and a call that reads waits for the writes before it;
 * reads still run side by side, and commands are not ordered.
 *
 * @module
 */
import type { ToolCallMessage } from "../protocol/messages.ts";

/** Built-in tools that change files. */
const WRITES: ReadonlySet<string> = new Set(["write_file", "edit_file"]);
/** Built-in tools that read files. */
const READS: ReadonlySet<string> = new Set(["read_file", "read_image", "describe_image"]);

/** Orders file-tool calls in the order they were taken. */
export interface FileCallOrder {
  /** Resolves when `call` may start; call `done` when it has finished. */
  turn(call: ToolCallMessage): { ready: Promise<void>; done: () => void };
}

/** A new order for one turn. */
export function createFileCallOrder(): FileCallOrder {
  let lastWrite: Promise<void> = Promise.resolve();
  let readsSince: Promise<void>[] = [];
  return {
    turn(call) {
      const writes = WRITES.has(call.name);
      if (!writes && !READS.has(call.name)) return { ready: Promise.resolve(), done: () => {} };
      let done!: () => void;
      const finished = new Promise<void>((resolve) => done = resolve);
      let ready: Promise<void>;
      if (writes) {
        ready = Promise.all([lastWrite, ...readsSince]).then(() => {});
        lastWrite = finished;
        readsSince = [];
      } else {
        ready = lastWrite;
        readsSince.push(finished);
      }
      return { ready, done };
    },
  };
}
