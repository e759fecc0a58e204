/**
 * A terminal spinner shown while waiting for the model's first token: one
 * cell, or with a label a progress line `⠋ waiting for <provider>/<model>… 3s`
 * whose seconds count up. It draws with `\r` (the label form erases with
 * `\r` + erase-line), and erases itself completely before anything else is
 * written.
 *
 * @module
 */

import { escapeControls } from "../../display/terminal_text.ts";

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
  /** Text after the frame (e.g. `waiting for p/m…`); the elapsed seconds follow it. */
  label?: string;
  /** Clock for the elapsed seconds (default `Date.now`). */
  now?: () => number;
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
  let started = 0;
  const now = opts.now ?? Date.now;
  const label = opts.label === undefined ? "" : ` ${escapeControls(opts.label)}`;
  const draw = () => {
    const secs = label === "" ? "" : ` ${Math.floor(Math.max(0, now() - started) / 1000)}s`;
    opts.write(`\r${dim}${SPINNER_FRAMES[frame % SPINNER_FRAMES.length]}${label}${secs}${reset}`);
    frame++;
  };
  return {
    start() {
      if (timer !== undefined) return;
      frame = 0;
      started = now();
      draw();
      timer = setInterval(draw, opts.intervalMs ?? 80);
    },
    stop() {
      if (timer === undefined) return;
      clearInterval(timer);
      timer = undefined;
      opts.write(label === "" ? "\r \r" : "\r\x1b[K");
    },
    spinning: () => timer !== undefined,
  };
}
