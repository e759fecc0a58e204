// parseJsonBounded (lib/protocol/bounded_json.ts): a text within the JSON shape bounds is parsed;
// one past them is refused before JSON.parse, with a PenguinError naming what was read and the bound.
import assert from "node:assert/strict";
import {
  isJsonCostRefusal,
  jsonCostProblem,
  parseJsonBounded,
} from "../../lib/protocol/bounded_json.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";

Deno.test("parseJsonBounded: a text within the bounds parses as JSON.parse does", () => {
  assert.deepEqual(parseJsonBounded('{"a":[1,{"b":"[[[["}]}', "x"), { a: [1, { b: "[[[[" }] });
  assert.equal(jsonCostProblem(`[${"{},".repeat(99_998)}{}]`), undefined);
});

Deno.test("parseJsonBounded: too many objects refuse the text, naming it and the bound", () => {
  const text = `{"type":"user","junk":[${"{},".repeat(100_000)}{}]}`;
  assert.throws(
    () => parseJsonBounded(text, '"/tmp/s.jsonl" line 3'),
    (err: unknown) => {
      assert.ok(err instanceof PenguinError);
      assert.equal(err.kind, "data");
      assert.equal(
        err.message,
        '"/tmp/s.jsonl" line 3: not parsed, too costly to parse: more than 100000 JSON objects and arrays',
      );
      assert.ok(isJsonCostRefusal(err));
      return true;
    },
  );
});

Deno.test("parseJsonBounded: nesting past the depth bound is refused, not a stack overflow", () => {
  const deep = "[".repeat(100_000) + "]".repeat(100_000);
  assert.throws(() => parseJsonBounded(deep, "line 1"), /nested more than 256 deep/);
  assert.equal(
    jsonCostProblem("[".repeat(257) + "]".repeat(257)),
    "too costly to parse: JSON objects and arrays nested more than 256 deep",
  );
});

Deno.test("parseJsonBounded: invalid JSON still throws JSON.parse's SyntaxError", () => {
  assert.throws(
    () => parseJsonBounded("{nope", "line 1"),
    (err: unknown) => err instanceof SyntaxError && !isJsonCostRefusal(err),
  );
});
