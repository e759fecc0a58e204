// A command prints a vault value spelled with C escapes at one level and JavaScript escapes at the
// next (and the reverse, and J/C/J): neither the session's trace nor the next model request holds
// an 8-character piece of it, as it is or read level by level (red team final13c secimp rows 33,
// 34: each chain of decoded views kept one reading, so the value reached the model and the trace).
import assert from "node:assert/strict";
import { assertNoPieceOf, runPrintingVaultValue } from "../support/secrets.ts";
import { ESCAPE_READINGS_MARKER } from "../../lib/tools/secret_mask.ts";
import { allReadings, readMixed, spellMixed } from "../support/mixed_escapes.ts";

const VALUE = "Qz7Kp2Xw9Lm4Rt6Yh8Nb3Vc5Jd1Fg0Ss";
const SPELLED: Record<string, string> = {
  CJ: spellMixed(VALUE, "cj"),
  JC: spellMixed(VALUE, "jc"),
  JCJ: spellMixed(VALUE, "jcj"),
};

/** Every string `text` holds: each line, and the strings of each line that is JSON. */
function stringsIn(text: string): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "string") out.push(v);
    else if (v !== null && typeof v === "object") Object.values(v).forEach(walk);
  };
  for (const line of text.split("\n")) {
    out.push(line);
    try {
      walk(JSON.parse(line));
    } catch { /* not JSON */ }
  }
  return out;
}

/** Asserts no string of `text`, as it is or read under any readings up to three levels, holds a piece. */
function assertHiddenIn(text: string, where: string): void {
  for (const s of stringsIn(text)) {
    for (const r of [1, 2, 3].flatMap(allReadings)) {
      assertNoPieceOf(readMixed(s, r), [VALUE], `${where} read ${r}`);
    }
    assertNoPieceOf(s, [VALUE], where);
  }
}

Deno.test("penguin run: a vault value printed with C and JavaScript escapes mixed across levels is masked in the trace and the next request", async () => {
  const script = Object.entries(SPELLED).map(([k, v]) => `${k}:${v}`).join("\n") + "\n";
  for (const r of ["cj", "jc", "jcj"]) {
    assert.equal(readMixed(SPELLED[r.toUpperCase()]!, r), VALUE, `${r} reads as the value`);
  }
  const { next, stored } = await runPrintingVaultValue(`cat <<'EOF'\n${script}EOF`, VALUE);
  // Each line is masked: by the value's marker, or (the three spellings together read more ways
  // than a level may hold) whole, by the marker naming why.
  const messages = (JSON.parse(next) as { messages: { role: string; content: unknown }[] })
    .messages;
  const output = String(messages.find((m) => m.role === "tool")!.content);
  assert.deepEqual(
    output.trimEnd().split("\n").map((l) => l.replace(/^[A-Z]+:/, "")),
    Object.keys(SPELLED).map(() =>
      output.includes(ESCAPE_READINGS_MARKER) ? ESCAPE_READINGS_MARKER : "[redacted:vault:DB_PW]"
    ),
    output,
  );
  assertHiddenIn(next, "the model request after the command");
  assert.ok(stored.includes(output.slice(0, 20)), "the trace holds the masked output");
  assertHiddenIn(stored, "the stored session");
});
