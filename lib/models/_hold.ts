/**
 * When the payloads of a response go to the consumer. A provider may send
 * every few characters as its own network write, so a read can be one tiny
 * event; handing each read's deltas on at once would run the whole consumer
 * (masking, the turn, the trace, the display) once per event. Partial deltas
 * are held instead, merged as they come (consecutive text, reasoning or one
 * call's argument deltas become one payload), and handed on:
 *
 * - at once when a complete message is among them (a call can run, a
 *   segment is recorded), when {@linkcode MAX_WAITING} distinct payloads
 *   are waiting, or {@linkcode MAX_HELD_CHARS} characters of deltas;
 * - else {@linkcode HOLD_MS} after the first of them was held, or when the
 *   stream ends — whichever comes first, so a pause in the stream never
 *   keeps a delta from the display for longer.
 *
 * Merging as they come, not when handed on, keeps one payload object per
 * run of deltas instead of one per event: objects that live for the whole
 * hold would outlive V8's young generation and pile up in the old one. A
 * run's text grows in a {@linkcode TextBuffer} (flat blocks, each character
 * copied once before the run is joined), not by joining the run so far anew
 * every few hundred deltas, which copied a 64 Ki-character run of one-character
 * deltas about 64 times.
 *
 * @module
 */
import type { ModelPayload } from "../protocol/types.ts";
import { TextBuffer } from "./_text_buffer.ts";

/** Longest time a partial delta waits for the consumer. */
export const HOLD_MS = 50;

/** Distinct payloads waiting that go to the consumer at once. */
const MAX_WAITING = 256;

/** Characters of held deltas that go to the consumer at once. */
const MAX_HELD_CHARS = 64 * 1024;

/** What {@linkcode Hold.wait} resolves to when the held payloads are due. */
export const WAKE: unique symbol = Symbol("hold over");

/** The field a partial delta streams. */
type Field = "text" | "thinking" | "arguments";

/** The field of `m` and its text, when `m` is a partial delta that can merge with `prev`. */
export function mergeable(
  prev: ModelPayload | undefined,
  m: ModelPayload,
): { field: Field; piece: string } | undefined {
  if (prev === undefined || prev.type !== m.type) return undefined;
  if (!("event_type" in m) || m.event_type !== "delta") return undefined;
  if (!("event_type" in prev) || prev.event_type !== "delta") return undefined;
  if (m.type === "partial_text") return { field: "text", piece: m.text };
  if (m.type === "partial_thinking") return { field: "thinking", piece: m.thinking };
  if (m.type === "partial_tool_call" && prev.type === "partial_tool_call") {
    return prev.tool_call_id === m.tool_call_id
      ? { field: "arguments", piece: m.arguments }
      : undefined;
  }
  return undefined;
}

/** Payloads appended to `out`, each run of mergeable deltas as one payload. */
interface Merger {
  /** Append `m` (to the last payload's run when it continues it); the characters it streams. */
  push(m: ModelPayload): number;
  /** Join the open run into the last payload of `out`. */
  close(): void;
}

function createMerger(out: ModelPayload[]): Merger {
  /**
   * The text of the last payload's field, while it is a run of deltas, and
   * how many deltas the run merged (one: the payload is its own text).
   */
  const run = new TextBuffer();
  let merged = 0;
  let field: Field | undefined;
  const close = () => {
    const last = out.at(-1);
    if (merged > 1 && last !== undefined && field !== undefined) {
      out[out.length - 1] = { ...last, [field]: run.text() } as ModelPayload;
    }
    run.clear();
    merged = 0;
    field = undefined;
  };
  return {
    push(m) {
      const more = mergeable(out.at(-1), m);
      if (more !== undefined && more.field === field) {
        run.append(more.piece);
        merged++;
        return more.piece.length;
      }
      close();
      out.push(m);
      const own = mergeable(m, m);
      if (own === undefined) return 0;
      run.append(own.piece);
      merged = 1;
      field = own.field;
      return own.piece.length;
    },
    close,
  };
}

/** `ms` with runs of consecutive partial deltas of one segment or call merged into one. */
export function coalesce(ms: ModelPayload[]): ModelPayload[] {
  const out: ModelPayload[] = [];
  const merger = createMerger(out);
  for (const m of ms) merger.push(m);
  merger.close();
  return out;
}

/** The hold of one response's payloads. */
export interface Hold {
  /** `read`, or (while payloads are held) whichever comes first of it and their time. */
  wait<T>(read: Promise<T>): Promise<T | typeof WAKE>;
  /** Add payloads to `pending` (merged into its last one when they continue it). */
  add(ms: ModelPayload[]): void;
  /** Whether the held payloads go to the consumer now. */
  due(): boolean;
  /** The held payloads, merged; `pending` is emptied. */
  take(): ModelPayload[];
  /** The response is over: `pending` holds the rest, merged. */
  dispose(): void;
}

/** A hold over `pending`. */
export function createHold(pending: ModelPayload[]): Hold {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let waiter: ((v: typeof WAKE) => void) | undefined;
  let fired = false;
  let complete = false;
  let chars = 0;
  const merger = createMerger(pending);
  const reset = () => {
    clearTimeout(timer);
    timer = undefined;
    waiter = undefined;
    fired = false;
    complete = false;
    chars = 0;
    merger.close();
  };
  return {
    wait(read) {
      if (timer === undefined) return read;
      return new Promise((resolve, reject) => {
        waiter = resolve;
        read.then(resolve, reject);
      });
    },
    add(ms) {
      for (const m of ms) {
        chars += merger.push(m);
        if (!m.type.startsWith("partial_")) complete = true;
      }
      if (pending.length === 0 || timer !== undefined || fired) return;
      timer = setTimeout(() => {
        timer = undefined;
        fired = true;
        waiter?.(WAKE);
        waiter = undefined;
      }, HOLD_MS);
    },
    due() {
      if (pending.length === 0) return false;
      return fired || complete || pending.length >= MAX_WAITING || chars >= MAX_HELD_CHARS;
    },
    take() {
      reset();
      return pending.splice(0);
    },
    dispose: reset,
  };
}
