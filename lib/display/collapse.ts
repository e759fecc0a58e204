/**
 * Display-only collapsing of long tool outputs, one rule for the live
 * renderer and the offline views: the first 4 lines, then (when at least 2
 * lines would be hidden) the marker `… N more lines (<hint> for full
 * output)`, then the last 4 lines; outputs of up to 9 lines show whole.
 * Live, the first 4 lines stream and the rest is held back until the output
 * ends. The model and the trace always get the full output.
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

/** The elision marker of a collapsed output; `hint` says how to see everything. */
export function elidedLabel(hidden: number, hint = "/verbose"): string {
  return `… ${hidden} more lines (${hint} for full output)`;
}

/**
 * The lines to print of a complete `text` (a trailing newline ends the last
 * line, it does not start an empty one): all of them when `full`, else
 * collapsed by {@linkcode collapseLines} with the {@linkcode elidedLabel}
 * marker in the middle.
 */
export function collapseText(text: string, full: boolean, hint: string): string[] {
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  if (full) return lines;
  const c = collapseLines(lines);
  return c.hidden === 0 ? lines : [...c.head, elidedLabel(c.hidden, hint), ...c.tail];
}
