// penguin's stdout writer (lib/cli/mod.ts processIo) encodes a long text a slice at a time into one
// array: the bytes written are exactly the text's UTF-8, a surrogate pair at a slice's edge
// included, and nothing of a long text is dropped or repeated.
import assert from "node:assert/strict";
import { denoEval } from "../support/deno_eval.ts";

const mod = new URL("../../lib/cli/mod.ts", import.meta.url).href;

Deno.test("a long text reaches stdout byte for byte, pairs across slice edges included", async () => {
  // 256 Ki units a slice: a pair is made to straddle the first edges, then ASCII and more pairs.
  const build = () =>
    "a".repeat(256 * 1024 - 1) + "😀".repeat(3) + "b".repeat(300_000) + "企😀é".repeat(200_000) +
    "\n";
  const text = build();
  const script = `import { processIo } from ${JSON.stringify(mod)};
const text = (${build.toString()})();
const io = processIo();
io.out(text);
io.out("");
io.out("end");`;
  const stdout = await denoEval(script);
  const want = new TextEncoder().encode(text + "end");
  assert.equal(stdout.length, want.length);
  assert.ok(stdout.every((b, i) => b === want[i]), "the same bytes");
});
