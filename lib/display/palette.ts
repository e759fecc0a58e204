/**
 * The one colour palette of penguin's terminal output, live (`penguin run`,
 * `penguin chat`) and offline (`trace show`, `trace follow`, `trace stats`).
 * With colour off every code is "" and the output has no ANSI codes at all.
 *
 * Two views of the same codes: a {@linkcode Palette} of raw codes (the live
 * renderer opens a colour, streams, then resets) and a {@linkcode Style} of
 * wrapping functions (record-at-a-time rendering).
 *
 * @module
 */

/** ANSI codes; the plain palette maps each to "". */
export interface Palette {
  /** Dim (thinking, gutters, notices, metadata). */
  dim: string;
  /** Cyan (tool call lines). */
  cyan: string;
  /** Green (approved, success). */
  green: string;
  /** Red (denied, forbidden, failures, aborts). */
  red: string;
  /** Yellow (retries, compaction, warnings). */
  yellow: string;
  /** Magenta (user steering). */
  magenta: string;
  /** Bold (headers, user prompts). */
  bold: string;
  /** Reset all attributes. */
  reset: string;
}

const ANSI: Palette = {
  dim: "\x1b[2m",
  cyan: "\x1b[36m",
  green: "\x1b[32m",
  red: "\x1b[31m",
  yellow: "\x1b[33m",
  magenta: "\x1b[35m",
  bold: "\x1b[1m",
  reset: "\x1b[0m",
};

const PLAIN: Palette = {
  dim: "",
  cyan: "",
  green: "",
  red: "",
  yellow: "",
  magenta: "",
  bold: "",
  reset: "",
};

/** The palette for `color` on or off. */
export function paletteFor(color: boolean): Palette {
  return color ? ANSI : PLAIN;
}

/** Wrap `text` in `code` … reset (no-op with the plain palette). */
export function paint(code: string, text: string, p: Palette): string {
  return code === "" ? text : `${code}${text}${p.reset}`;
}

/** The palette's colours as wrapping functions (identity when colour is off). */
export type Style = { [K in Exclude<keyof Palette, "reset">]: (s: string) => string };

/** A {@linkcode Style}: ANSI codes when `color` is true, plain text otherwise. */
export function makeStyle(color: boolean): Style {
  const p = paletteFor(color);
  const f = (code: string) => (s: string) => paint(code, s, p);
  return {
    dim: f(p.dim),
    cyan: f(p.cyan),
    green: f(p.green),
    red: f(p.red),
    yellow: f(p.yellow),
    magenta: f(p.magenta),
    bold: f(p.bold),
  };
}
