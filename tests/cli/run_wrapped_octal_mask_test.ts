// A command prints a vault value with each character as octal of its code + 256 (`\521` is `Q` to
// bash `$'…'`, printf, awk and C compilers, which keep the low 8 bits) and as printf `%b`'s
// `\0521`: neither `run`'s output, the session's trace nor the next model request holds the
// spelling (red team final16 secimp row 16: masking read `\521` as U+0151 or `\52` then `1`, so
// the value reached all three).
import assert from "node:assert/strict";
import { assertNoPieceOf, runPrintingVaultValue } from "../support/secrets.ts";

const VALUE = "Qz7Kp2Xw9Lm4Rt6Yh8Nb3Vc5Jd1Fg0Ss";
const wrapped = (prefix: string) =>
  [...VALUE].map((c) => `\\${prefix}${(c.charCodeAt(0) + 256).toString(8)}`).join("");
const SPELLED = { XSH: wrapped(""), XPB: wrapped("0") };

/** `spelled` read back as bash `$'…'` and printf `%b` do: each escape's low 8 bits. */
function readWrapped(spelled: string): string {
  return spelled.replace(/\\0?([0-7]{3})/g, (_, d) => String.fromCharCode(parseInt(d, 8) & 0xff));
}

Deno.test("penguin run: a vault value printed as wrapped octal escapes is masked in the output, trace and next request", async () => {
  for (const s of Object.values(SPELLED)) assert.equal(readWrapped(s), VALUE);
  const script = Object.entries(SPELLED).map(([k, v]) => `${k}:${v}`).join("\n") + "\n";
  const { out, next, stored } = await runPrintingVaultValue(`cat <<'EOF'\n${script}EOF`, VALUE);
  for (
    const [where, text] of [["run's output", out], ["the next request", next], [
      "the trace",
      stored,
    ]]
  ) {
    for (const [key, spelled] of Object.entries(SPELLED)) {
      // JSON text doubles each backslash: look for either spelling.
      for (const form of [spelled, spelled.replaceAll("\\", "\\\\")]) {
        assert.ok(!text!.includes(form.slice(0, 40)), `${key} unmasked in ${where}`);
      }
      assertNoPieceOf(
        readWrapped(text!.replaceAll("\\\\", "\\")),
        [VALUE],
        `${where} read as bash`,
      );
    }
  }
  assert.ok(next.includes("XSH:[redacted:vault:DB_PW]"), next.slice(0, 400));
  assert.ok(next.includes("XPB:[redacted:vault:DB_PW]"), next.slice(0, 400));
});
