/**
 * A one-cell terminal spinner shown while waiting for the model's first
 * token. It draws with `\r` only (no escape codes beyond the optional dim),
 * and erases itself completely before anything else is written.
 *
 * @module
 */

/** Braille frames, drawn in turn. */
export const SPINNER_FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** A spinner. `stop` is idempotent and leaves the cursor where `start` found it. */
export interface Spinner {
  /** Begin drawing (no-op when already spinning). */
  start(): void;
  /** Erase and stop (no-op when not spinning). */
  stop(): void;
  /** True while drawing. */
  spinning(): boolean;
}

/** Options of {@linkcode createSpinner}. */
export interface SpinnerOptions {
  /** Where frames go. */
  write(text: string): void;
  /** Frame period (default 80 ms). */
  intervalMs?: number;
  /** Dim code and reset, or empty strings for none. */
  dim?: string;
  /** Reset code matching `dim`. */
  reset?: string;
}

/**
 * A spinner writing through `write`. It assumes the cursor sits at the start
 * of an empty line when started (the renderer guarantees this).
 */
export function createSpinner(opts: SpinnerOptions): Spinner {
  const dim = opts.dim ?? "";
  const reset = opts.reset ?? "";
  let timer: ReturnType<typeof setInterval> | undefined;
  let frame = 0;
  const draw = () => {
    opts.write(`\r${dim}${SPINNER_FRAMES[frame % SPINNER_FRAMES.length]}${reset}`);
    frame++;
  };
  return {
    start() {
      if (timer !== undefined) return;
      frame = 0;
      draw();
      timer = setInterval(draw, opts.intervalMs ?? 80);
    },
    stop() {
      if (timer === undefined) return;
      clearInterval(timer);
      timer = undefined;
      opts.write("\r \r");
    },
    spinning: () => timer !== undefined,
  };
}
