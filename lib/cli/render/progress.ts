/**
 * A progress line for long work (`sessions import` of many files, `trace
 * stats` of a big root, `agent snapshot` of a big state): one line on
 * stderr, redrawn in place with `\r` + erase-line, erased when the work is
 * done. It is drawn only when stderr is a terminal and the command prints
 * no JSON, so it never reaches stdout, a log file or a `--json` consumer.
 *
 * @module
 */
import { escapeControls } from "../../display/terminal_text.ts";
import type { Io } from "../command.ts";

/** A progress line. */
export interface Progress {
  /** Show `text` (`importing 3/120 a.jsonl`): the first at once, later ones at most every interval. */
  show(text: string): void;
  /** Erase the line (nothing to do when nothing was drawn). Call before printing results. */
  done(): void;
}

/** Options of {@linkcode createProgress}. */
export interface ProgressOptions {
  /** Where the line goes. */
  write(text: string): void;
  /** Least time between two redraws (default 100 ms). */
  intervalMs?: number;
  /** Terminal width: the line is cut to one column less. */
  columns?: number;
  /** Clock (default `Date.now`). */
  now?: () => number;
}

/** A progress line drawn through `write`. */
export function createProgress(opts: ProgressOptions): Progress {
  const now = opts.now ?? Date.now;
  const interval = opts.intervalMs ?? 100;
  const width = Math.max(20, (opts.columns ?? 80) - 1);
  let last: number | undefined;
  let drawn = false;
  return {
    show(text) {
      const t = now();
      if (last !== undefined && t - last < interval) return;
      last = t;
      const line = [...escapeControls(text)];
      const cut = line.length > width ? line.slice(0, width - 1).join("") + "…" : line.join("");
      opts.write(`\r\x1b[K${cut}`);
      drawn = true;
    },
    done() {
      if (drawn) opts.write("\r\x1b[K");
      drawn = false;
      last = undefined;
    },
  };
}

/** A progress line that does nothing. */
const NONE: Progress = { show() {}, done() {} };

/**
 * The progress line of a command: on stderr when it is a terminal and
 * `json` is false, else one that draws nothing.
 */
export function stderrProgress(io: Io, json = false): Progress {
  if (json || !io.errIsTty) return NONE;
  let columns = 80;
  try {
    columns = Deno.consoleSize().columns || 80;
  } catch {
    // Not a console size we can read: keep 80.
  }
  return createProgress({ write: (t) => io.err(t), columns });
}
