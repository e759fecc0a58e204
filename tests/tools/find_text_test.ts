// Attack round 20 bounded #4: a 600 KB old_string `a…aba…a` made edit_file's search quadratic
// (indexOf), and the tool host kept burning CPU after the call's timeout.
import assert from "node:assert/strict";
import { finderOf } from "../../lib/tools/_find_text.ts";

Deno.test("a long pattern is found as indexOf finds it, each occurrence after the last", () => {
  const needle = "ab".repeat(200) + "c";
  const text = `x${needle}${needle}yy${needle.slice(1)}${needle}`;
  const find = finderOf(text, needle);
  const got: number[] = [];
  for (let at = find.next(0); at !== -1; at = find.next(at + needle.length)) got.push(at);
  const want: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
    want.push(at);
  }
  assert.deepEqual(got, want);
  assert.equal(got.length, 3);
});

Deno.test("the worst case of indexOf is searched in linear steps, and a stopped search throws", () => {
  // 2 MB of `a` and a 600 KB `a…aba…a`: indexOf compares ~600 K characters at each of 2 M places.
  const text = "a".repeat(2_000_000);
  const needle = "a".repeat(300_000) + "b" + "a".repeat(300_000);
  assert.equal(finderOf(text, needle).next(0), -1);
  const stop = new AbortController();
  stop.abort();
  assert.throws(() => finderOf(text, needle, stop.signal).next(0), /stopped/);
});
