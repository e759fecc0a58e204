/**
 * When the payloads of a response go to the consumer. A provider may send
 * every few characters as its own network write, so a read can be one tiny
 * event; handing each read's deltas on at once would run the whole consumer
 * (masking, the turn, the trace, the display) once per event. Partial deltas
 * are held instead and handed on merged (see `coalesce` in ./_pump.ts):
 *
 * - at once when a complete message is among them (a call can run, a
 *   segment is recorded), when many distinct payloads are waiting, or when
 *   {@linkcode MAX_HELD_CHARS} of deltas are;
 * - else {@linkcode HOLD_MS} after the first of them was held, or when the
 *   stream ends — whichever comes first, so a pause in the stream never
 *   keeps a delta from the display for longer.
 *
 * @module
 */
import type { ModelPayload } from "../protocol/types.ts";

/** Longest time a partial delta waits for the consumer. */
export const HOLD_MS = 50;

/** Payloads waiting past this many are merged; as many distinct ones go to the consumer at once. */
const MAX_WAITING = 256;

/** Characters of held deltas that go to the consumer at once (merging more would copy them again). */
const MAX_HELD_CHARS = 64 * 1024;

/** Characters a partial carries. */
function charsOf(m: ModelPayload): number {
  if (m.type === "partial_text") return m.text.length;
  if (m.type === "partial_thinking") return m.thinking.length;
  if (m.type === "partial_tool_call") return m.arguments.length;
  return 0;
}

/** What {@linkcode Hold.wake} resolves to. */
export const WAKE: unique symbol = Symbol("hold over");

/** The hold of one response's payloads. */
export interface Hold {
  /** Resolves when held payloads are due (undefined when nothing is held). */
  readonly wake: Promise<typeof WAKE> | undefined;
  /** Add payloads to `pending`. */
  add(ms: ModelPayload[]): void;
  /** Whether the held payloads go to the consumer now. */
  due(): boolean;
  /** The held payloads are taken: stop waiting. */
  taken(): void;
  /** The response is over. */
  dispose(): void;
}

/** A hold over `pending`, merged in place with `merge` when it grows. */
export function createHold(
  pending: ModelPayload[],
  merge: (ms: ModelPayload[]) => ModelPayload[],
): Hold {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: Promise<typeof WAKE> | undefined;
  let fired = false;
  let complete = false;
  let crowded = false;
  let chars = 0;
  const stop = () => {
    clearTimeout(timer);
    timer = undefined;
    wake = undefined;
    fired = false;
    complete = false;
    crowded = false;
    chars = 0;
  };
  return {
    get wake() {
      return wake;
    },
    add(ms) {
      for (const m of ms) {
        pending.push(m);
        if (!m.type.startsWith("partial_")) complete = true;
        else chars += charsOf(m);
      }
      if (pending.length > MAX_WAITING) {
        pending.splice(0, pending.length, ...merge(pending));
        crowded = pending.length > MAX_WAITING / 2;
      }
      if (pending.length === 0 || wake !== undefined) return;
      wake = new Promise((resolve) => {
        timer = setTimeout(() => {
          fired = true;
          resolve(WAKE);
        }, HOLD_MS);
      });
    },
    due() {
      if (pending.length === 0) return false;
      return fired || complete || crowded || chars >= MAX_HELD_CHARS;
    },
    taken: stop,
    dispose: stop,
  };
}
