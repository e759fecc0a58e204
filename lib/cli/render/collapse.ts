/**
 * Display-only collapsing of long tool outputs: the first 4 lines stream
 * live, the rest is held back, and when the output ends either everything
 * held back is printed (outputs of up to 9 lines show whole) or an elision
 * marker plus the last 4 lines. The marker never hides fewer than 2 lines.
 * The model and the trace always get the full output.
 *
 * @module
 */

/** Lines that stream live before holding back starts. */
export const HEAD_LINES = 4;
/** Lines shown after the elision marker. */
export const TAIL_LINES = 4;

/** What to print when a collapsed stream ends. */
export interface CollapseTail {
  /** Lines elided (0 = nothing was; `lines` is all that was held back). */
  hidden: number;
  /** Held-back lines to print now. */
  lines: string[];
}

/** The state of one collapsed output stream. */
export interface Collapser {
  /** Feed a chunk; returns the prefix to write live (empty once holding back). */
  push(chunk: string): string;
  /** True once any text is being held back. */
  holding(): boolean;
  /** Settle the held-back remainder at the end of the stream. */
  finish(): CollapseTail;
}

/** A collapser keeping `head` live lines and `tail` trailing lines. */
export function createCollapser(head = HEAD_LINES, tail = TAIL_LINES): Collapser {
  let liveLeft = head;
  let hold = false;
  let partial = "";
  let kept: string[] = [];
  let dropped = 0;

  const keep = (line: string) => {
    kept.push(line);
    // One more than the tail: "fits whole" vs "must elide (≥ 2 lines)".
    if (kept.length > tail + 1) {
      kept.shift();
      dropped++;
    }
  };

  return {
    push(chunk) {
      let live = "";
      if (!hold) {
        let i = 0;
        while (i < chunk.length && liveLeft > 0) {
          const nl = chunk.indexOf("\n", i);
          if (nl === -1) {
            i = chunk.length;
            break;
          }
          i = nl + 1;
          liveLeft--;
        }
        live = chunk.slice(0, i);
        chunk = chunk.slice(i);
        if (chunk === "") return live;
        hold = true;
      }
      const parts = (partial + chunk).split("\n");
      partial = parts.pop()!;
      for (const l of parts) keep(l);
      return live;
    },
    holding: () => hold,
    finish() {
      if (partial !== "") keep(partial);
      partial = "";
      const result: CollapseTail = dropped === 0
        ? { hidden: 0, lines: kept }
        : { hidden: dropped + kept.length - tail, lines: kept.slice(-tail) };
      kept = [];
      dropped = 0;
      return result;
    },
  };
}

/** Head/tail split of a complete output (history rendering). */
export function collapseLines(
  lines: readonly string[],
  head = HEAD_LINES,
  tail = TAIL_LINES,
): { head: readonly string[]; hidden: number; tail: readonly string[] } {
  if (lines.length <= head + tail + 1) return { head: lines, hidden: 0, tail: [] };
  return {
    head: lines.slice(0, head),
    hidden: lines.length - head - tail,
    tail: lines.slice(-tail),
  };
}
