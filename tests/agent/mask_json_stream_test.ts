// The streaming re-writer of tool-call argument text (lib/agent/_mask_json_stream.ts): a secret
// spelled with JSON escapes is masked on the decoded string wherever the fragments split the text
// (inside an escape too), and text without a secret stays equivalent JSON.
import assert from "node:assert/strict";
import { createJsonStringMasker } from "../../lib/agent/_mask_json_stream.ts";
import type { Secret } from "../../lib/tools/mod.ts";

const V = "Qm7Zr2Kx9Wc4Lp8Tn3Hv6Bd1Fs5Gj0Ya";
const SECRETS: Secret[] = [{ kind: "vault", name: "ATK_V", value: V }];

/** `s` with every character as a `\uXXXX` escape. */
const escaped = (s: string) =>
  [...s].map((c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0")).join("");

/** `text` through one re-writer, cut into two fragments at `at`. */
function split(text: string, at: number): string {
  const m = createJsonStringMasker(SECRETS);
  return m.push(text.slice(0, at)) + m.push(text.slice(at)) + m.flush();
}

Deno.test("json stream masker: an escaped secret is masked at every fragment boundary", () => {
  const text = `{"${escaped("k")}":"a\\"b ${escaped(V)} \\n\\u00e9","n":1}`;
  for (let at = 0; at <= text.length; at++) {
    const out = split(text, at);
    assert.deepEqual(
      JSON.parse(out),
      { k: 'a"b [redacted:vault:ATK_V] \né', n: 1 },
      `cut at ${at}`,
    );
  }
});

Deno.test("json stream masker: arguments without a secret stay equivalent JSON", () => {
  const value = {
    cmd: 'printf "%s\\n" x',
    path: "a/\u00e9/\ud83d\ude00",
    list: [1, true, null, "\t"],
  };
  const text = JSON.stringify(value).replace("\\t", "\\u0009").replaceAll("/", "\\/");
  for (let at = 0; at <= text.length; at++) {
    assert.deepEqual(JSON.parse(split(text, at)), value, `cut at ${at}`);
  }
});
