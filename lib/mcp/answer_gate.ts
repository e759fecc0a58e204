/**
 * One large MCP answer at a time, process-wide.
 *
 * Each answer a server sends is bounded (16 Mi characters a message, 24 Mi
 * an HTTP response), but the model may call MCP tools many times in one
 * response, and many servers answer `tools/list` at connect: held together,
 * eight answers of 16–24 Mi took penguin to 420–980 MB. So a transport that
 * is receiving a message past {@linkcode LARGE_ANSWER_CHARS} first takes
 * the gate's one slot, and stops reading (the server waits on its pipe or
 * socket) until it has it. The slot is held while the message is received,
 * decoded and parsed, and then offered to the call it answers
 * ({@linkcode AnswerDesk}), which holds it until its output has been cut to
 * the tool's `maxOutputLength` (and the rest archived). Small messages never
 * wait.
 *
 * Held one at a time is not enough on its own: each answer leaves tens of
 * MB of garbage (its chunks, the line, the parsed message, the rendered
 * text), which the runtime collects late, so eight answers in a row still
 * took penguin past 400 MB. The process's gate therefore runs a full
 * garbage collection when a slot is given back, before the next large
 * answer is read (tens of ms, once per large answer only).
 *
 * The slot's hand-over to the call is by order (the call whose answer was
 * just delivered takes it in the same turn of the event loop); a slot not
 * taken by then is given back at once, so a message that answers no call
 * (a notification, `tools/list`) never keeps it.
 *
 * @module
 */
import { garbageCollector } from "../state/_gc.ts";

/** A message under way past this many characters waits for the gate (256 Ki). */
export const LARGE_ANSWER_CHARS = 256 * 1024;

/** Gives the slot back; calling it again does nothing. */
export type Release = () => void;

/** A semaphore of large answers. */
export interface AnswerGate {
  /**
   * Take a slot: resolves with its release once held (first come, first
   * served), or undefined when `signal` aborted first (nothing is held then).
   */
  acquire(signal?: AbortSignal): Promise<Release | undefined>;
  /**
   * Collect garbage now (the process's gate; others do nothing): for a
   * holder whose answer is long, between two large messages of it.
   */
  collect(): void;
  /** Slots held now. */
  readonly held: number;
  /** Takers waiting now. */
  readonly waiting: number;
}

/**
 * A gate of `slots` slots; `collect` runs each time a slot is given back
 * (the process's gate collects garbage there).
 */
export function createAnswerGate(slots = 1, collect: () => void = () => {}): AnswerGate {
  let held = 0;
  const waiting: ((release: Release) => void)[] = [];
  const grant = (): Release => {
    held++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      held--;
      collect();
      const next = waiting.shift();
      if (next) next(grant());
    };
  };
  return {
    acquire(signal) {
      if (signal?.aborted) return Promise.resolve(undefined);
      if (held < slots && waiting.length === 0) return Promise.resolve(grant());
      return new Promise((resolve) => {
        const take = (release: Release) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(release);
        };
        const onAbort = () => {
          const at = waiting.indexOf(take);
          if (at >= 0) waiting.splice(at, 1);
          resolve(undefined);
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        waiting.push(take);
      });
    },
    collect,
    get held() {
      return held;
    },
    get waiting() {
      return waiting.length;
    },
  };
}

/** The gate of this process: every MCP transport shares it. */
export const MCP_ANSWER_GATE: AnswerGate = createAnswerGate(1, garbageCollector());

/**
 * Where a transport leaves the slot of a message it has delivered, for the
 * call that message answered to take.
 */
export interface AnswerDesk {
  /** Leave `release` here; given back on the next turn of the event loop unless taken first. */
  offer(release: Release): void;
  /** The slot left here, if any (the taker must call it). */
  take(): Release | undefined;
}

/** An empty desk. */
export function createAnswerDesk(): AnswerDesk {
  let left: Release | undefined;
  return {
    offer(release) {
      left?.();
      left = release;
      setTimeout(() => {
        if (left !== release) return;
        left = undefined;
        release();
      }, 0);
    },
    take() {
      const release = left;
      left = undefined;
      return release;
    },
  };
}
