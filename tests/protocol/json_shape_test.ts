// jsonShapeProblem (lib/protocol/json_shape.ts): objects and arrays counted and their depth
// followed in one pass, brackets inside strings (escapes included) not counted.
import assert from "node:assert/strict";
import { JSON_SHAPE_LIMITS, jsonShapeProblem } from "../../lib/protocol/json_shape.ts";

const small = { maxContainers: 3, maxDepth: 2 };

Deno.test("jsonShapeProblem: within both bounds there is no problem, at the bound included", () => {
  assert.equal(jsonShapeProblem('{"a":[1,2],"b":{}}', small), undefined);
  assert.equal(jsonShapeProblem("", small), undefined);
  assert.equal(jsonShapeProblem('"[[[[{{{{"', small), undefined);
  assert.equal(jsonShapeProblem("[[]]", small), undefined);
});

Deno.test("jsonShapeProblem: one container more than the bound is a problem naming it", () => {
  assert.equal(jsonShapeProblem("[{},{},{}]", small), "more than 3 JSON objects and arrays");
  assert.equal(
    jsonShapeProblem(`[${"{},".repeat(100_000)}{}]`),
    "more than 100000 JSON objects and arrays",
  );
});

Deno.test("jsonShapeProblem: nesting past the depth is a problem; closed brackets count down", () => {
  assert.equal(
    jsonShapeProblem("[[[]]]", small),
    "JSON objects and arrays nested more than 2 deep",
  );
  assert.equal(jsonShapeProblem("[[]][[]]", { maxContainers: 9, maxDepth: 2 }), undefined);
  const deep = "[".repeat(257) + "]".repeat(257);
  assert.equal(jsonShapeProblem(deep), "JSON objects and arrays nested more than 256 deep");
  assert.equal(jsonShapeProblem("[".repeat(256) + "]".repeat(256)), undefined);
  assert.equal(JSON_SHAPE_LIMITS.maxDepth, 256);
});

Deno.test("jsonShapeProblem: brackets inside strings, after escaped quotes too, are not counted", () => {
  assert.equal(jsonShapeProblem('["\\"[[[[", "\\\\", "{{{{"]', small), undefined);
  // An escaped backslash ends before the quote: the string closes, and the brackets after count.
  assert.equal(
    jsonShapeProblem('["\\\\", [[[]]]]', small),
    "JSON objects and arrays nested more than 2 deep",
  );
  // A string that never closes hides what follows (JSON.parse then refuses the text).
  assert.equal(jsonShapeProblem('["[[[[', small), undefined);
});
