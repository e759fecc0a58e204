/**
 * A value spelled so that it reads whole only under one sequence of escape readings, one per
 * level: `j` (JavaScript: `\` before U+2028 is a line continuation, `\e` is a visible `e`) or `c`
 * (C and shell `$'…'`: `\e` is ESC, `\` before U+2028 stays). The value's 7-character pieces are
 * joined by a joint that holds, for each level, that level's separator (read away only by the
 * level's reading) escaped once for each level read before it. Any other sequence leaves a
 * visible `\` or `e[0m` between pieces, and no piece is 8 characters long.
 *
 * @module
 */

/** The separator a reading reads as nothing shown. */
const SEPARATOR = { j: "\\\u2028", c: "\\e[0m" } as const;

/** A sequence of readings, outermost level first: `"jc"` is JavaScript, then C. */
export type Readings = string;

/** `value` spelled to read whole under `readings` (outermost level first). */
export function spellMixed(value: string, readings: Readings): string {
  let joint = "";
  for (const r of [...readings].reverse()) {
    joint = joint.replaceAll("\\", "\\\\") + SEPARATOR[r as "j" | "c"];
  }
  return value.match(/.{1,7}/g)!.join(joint);
}

/** One level of `text` read as `reading` (only the escapes these spellings use). */
export function readLevel(text: string, reading: "j" | "c"): string {
  return text.replace(/\\([\\\u2028e])/g, (_, c: string) => {
    if (c === "\\") return "\\";
    if (c === "\u2028") return reading === "j" ? "" : "\\\u2028";
    return reading === "c" ? "\x1b" : "e";
  });
}

/** `text` read under `readings`, then shown as a terminal shows it (ESC[0m and U+2028 dropped). */
export function readMixed(text: string, readings: Readings): string {
  let t = text;
  for (const r of readings) t = readLevel(t, r as "j" | "c");
  // deno-lint-ignore no-control-regex
  return t.replace(/\x1b\[0m|\u2028/g, "");
}

/** Every sequence of `j` and `c` of `length`. */
export function allReadings(length: number): Readings[] {
  let out = [""];
  for (let i = 0; i < length; i++) out = out.flatMap((s) => [s + "j", s + "c"]);
  return out;
}
