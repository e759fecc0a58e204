// A command prints a vault value with JavaScript escapes between its pieces (`\v`, `\0`, octal
// `\033[1m`, a line continuation before U+2028, identity escapes `\K`): neither `run`'s output,
// the session's trace nor the next model request holds an 8-character run of the value once
// JavaScript reads the text (red team final12 secimp rows 25-27, 30, 31: the escape view kept these
// spellings as they were, so the value reached all three).
import assert from "node:assert/strict";
import { runPrintingVaultValue } from "../support/secrets.ts";

/** No quote, backslash or digit, so each spelling reads back as it in JavaScript. */
const VALUE = "Kx<Wq&Pz/Mn>Rt~Ys%Lb";
const pieces = (size: number) => VALUE.match(new RegExp(`.{1,${size}}`, "g"))!;
const SPELLED: Record<string, string> = {
  JSV: pieces(1).join("\\v"),
  JS0: pieces(3).join("\\0"),
  OCT: pieces(4).join("\\033[1m"),
  LS: pieces(4).join("\\\u2028"),
  IDE: [...VALUE].map((c) => /[bfnrtvux]/.test(c) ? c : "\\" + c).join(""),
};

/** The 8-character runs of VALUE in `text` read as a JavaScript string (sloppy mode), line by line. */
function runsIn(text: string): string[] {
  const found: string[] = [];
  for (const line of text.split("\n")) {
    let read: string;
    try {
      read = (0, eval)(`"${line.replaceAll('"', '\\"')}"`) as string;
    } catch {
      read = line;
    }
    // deno-lint-ignore no-control-regex
    const shown = read.replace(/\x1b\[[0-9;]*m|[\x00-\x08\x0b-\x1f\x7f\u2028\u2029]/g, "");
    for (let i = 0; i + 8 <= VALUE.length; i++) {
      if (shown.includes(VALUE.slice(i, i + 8))) found.push(VALUE.slice(i, i + 8));
    }
  }
  return found;
}

/** A text whose JSON strings are undone (a request body, a trace record), as lines. */
function unjson(text: string): string {
  return text.replace(/"((?:[^"\\]|\\.)*)"/g, (m) => {
    try {
      return "\n" + (JSON.parse(m) as string) + "\n";
    } catch {
      return m;
    }
  });
}

Deno.test("penguin run: a vault value printed with JS escapes between its pieces is masked everywhere", async () => {
  const script = Object.entries(SPELLED).map(([k, v]) => `${k}:${v}`).join("\n") + "\n";
  // The spellings read as the value (the check below is not vacuous).
  assert.equal(runsIn(script).length, 5 * (VALUE.length - 7), "each spelling reads as the value");
  const { out, next, stored } = await runPrintingVaultValue(`cat <<'EOF'\n${script}EOF`, VALUE);
  for (const label of Object.keys(SPELLED)) {
    assert.ok(next.includes(`${label}:[redacted:vault:DB_PW]`), `${label} is masked`);
  }
  assert.deepEqual(runsIn(unjson(next)), [], "the model request after the command");
  assert.deepEqual(runsIn(out), [], "run's output");
  assert.ok(stored.includes("[redacted:vault:DB_PW]"), "the trace holds the marker");
  assert.deepEqual(runsIn(unjson(stored)), [], "the stored session");
});
