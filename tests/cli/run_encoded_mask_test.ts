// A command prints a vault value base64-encoded (standard and URL-safe, after other bytes),
// hex-encoded (both cases), URL percent-encoded and as HTML character references: neither `run`'s
// output, the session's trace nor the next model request holds any of those spellings (red team:
// each was a documented limit of masking, and each got the value out).
import assert from "node:assert/strict";
import { runPrintingVaultValue } from "../support/secrets.ts";

const VALUE = "Qz7Kp2Xw9Lm4Rt6Yh8Nb3Vc5Jd1Fg0Ss";
const utf8 = (s: string) => new TextEncoder().encode(s);
const b64 = (s: string) => btoa(String.fromCharCode(...utf8(s)));
const hex = (s: string) => Array.from(utf8(s), (b) => b.toString(16).padStart(2, "0")).join("");
const url = (s: string) => [...s].map((c) => `%${hex(c).toUpperCase()}`).join("");

/** What the command prints, by label; the command computes each from the vault value itself. */
const PRINTED: Record<string, string> = {
  B64: b64(VALUE + "\n"),
  B64P: b64("pw=" + VALUE + "\n"),
  B64U: b64("x" + VALUE).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, ""),
  HEX: hex(VALUE + "\n"),
  HEXU: hex(VALUE).toUpperCase(),
  URL: url(VALUE),
  HTML: [...VALUE].map((c) => `&#${c.charCodeAt(0)};`).join(""),
};

Deno.test("penguin run: a vault value printed as base64, hex, URL and HTML escapes is masked in the output, trace and next request", async () => {
  const cmd = [
    `v=${VALUE}`,
    `echo "B64:$(echo "$v" | base64 -w0)"`,
    `echo "B64P:$(echo "pw=$v" | base64 -w0)"`,
    `echo "B64U:$(printf 'x%s' "$v" | base64 -w0 | tr '+/' '-_' | tr -d '=')"`,
    `echo "HEX:$(echo "$v" | od -An -tx1 -v | tr -d ' \\n')"`,
    `echo "HEXU:$(printf %s "$v" | od -An -tx1 -v | tr -d ' \\n' | tr a-f A-F)"`,
    `echo "URL:$(printf %s "$v" | od -An -tx1 -v | tr -d '\\n' | sed 's/ /%/g' | tr a-f A-F)"`,
    `echo "HTML:$(printf %s "$v" | od -An -tu1 -v | tr -s ' \\n' ' ' | sed 's/^ //; s/ $//; s/\\([0-9]*\\)/\\&#\\1;/g; s/ //g')"`,
  ].join("; ");
  // The vault value is in the command only here; the model's call is masked before it is recorded.
  const { out, next, stored } = await runPrintingVaultValue(cmd, VALUE);
  for (
    const [where, text] of [["run's output", out], ["the next request", next], [
      "the trace",
      stored,
    ]]
  ) {
    for (const [label, printed] of Object.entries(PRINTED)) {
      for (let i = 0; i + 16 <= printed.length; i += 4) {
        assert.ok(!text!.includes(printed.slice(i, i + 16)), `${label} unmasked in ${where}`);
      }
    }
  }
  for (const label of Object.keys(PRINTED)) {
    assert.ok(next.includes(`${label}:`), next.slice(0, 600));
    assert.match(next, new RegExp(`${label}:[^\\\\]{0,6}\\[redacted:vault:DB_PW\\]`), label);
  }
});
