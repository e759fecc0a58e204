// A command prints a vault value the way Go's encoding/json writes it (`&` `<` as `\u0026`
// `\u003c`): neither `run`'s output, the session's trace nor the next model request holds an
// 8-character run of the value once the escapes are decoded (red team final10 row 32: the 8-char
// suffix `&3xK<9pQ` reached all three, only JSON.stringify's spelling being masked).
import assert from "node:assert/strict";
import { runPrintingVaultValue } from "../support/secrets.ts";

const VALUE = "Tr0ub4dor&3xK<9pQ";
/** VALUE as Go's encoder escapes it: an escape at least every 8 characters. */
const GO_SPELLED = "Tr0ub4dor\\u00263xK\\u003c9pQ";

/** Undo JSON string escapes, twice (a value in a JSON string inside JSON text). */
function decoded(text: string): string {
  let t = text;
  for (let i = 0; i < 3; i++) {
    t = t.replace(/\\+u([0-9a-fA-F]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
      .replace(/\\+([/"\\])/g, "$1");
  }
  return t;
}

function assertNoRun(text: string, where: string): void {
  const t = decoded(text);
  for (let i = 0; i + 8 <= VALUE.length; i++) {
    const run = VALUE.slice(i, i + 8);
    assert.ok(!t.includes(run), `${where} holds "${run}" of the value once decoded`);
  }
}

Deno.test("penguin run: a vault value printed Go-escaped is masked in the output, the trace and the next request", async () => {
  const { out, next, stored } = await runPrintingVaultValue(
    `printf '%s\\n' '{"DB_PASSWORD": "${GO_SPELLED}"}'`,
    VALUE,
  );
  assert.ok(next.includes("[redacted:vault:DB_PW]"), `the request masks the value: ${next}`);
  assertNoRun(next, "the model request after the command");
  assertNoRun(out, "run's output");
  assert.ok(stored.includes("[redacted:vault:DB_PW]"), "the trace holds the marker");
  // The vault itself holds the value: only what is not the vault file is checked.
  assertNoRun(stored, "the stored session");
});

/** `text` read as printf `%b` reads it: each `\0NNN` (octal) is one character. */
function printfB(text: string): string {
  return text.replace(/\\+0([0-7]{1,3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

Deno.test("penguin run: a vault value printed as printf %b's \\0NNN escapes is masked in the output, the trace and the next request", async () => {
  // Every character as `\0NNN`, as `printf '%b'` and `echo -e` read it (red team final14 row 26).
  const spelled = [...VALUE].map((c) => "\\0" + c.charCodeAt(0).toString(8).padStart(3, "0"))
    .join("");
  assert.equal(printfB(spelled), VALUE, "the spelling reads as the value");
  const { out, next, stored } = await runPrintingVaultValue(
    `printf '%s\\n' 'XPF:${spelled}'`,
    VALUE,
  );
  assert.ok(next.includes("XPF:[redacted:vault:DB_PW]"), `the request masks the value: ${next}`);
  assertNoRun(printfB(next), "the model request after the command");
  assertNoRun(printfB(out), "run's output");
  assert.ok(stored.includes("XPF:[redacted:vault:DB_PW]"), "the trace holds the marker");
  assertNoRun(printfB(stored), "the stored session");
});
