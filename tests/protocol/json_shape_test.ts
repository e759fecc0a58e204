// jsonShapeProblem (lib/protocol/json_shape.ts): values, objects and arrays counted and their depth
// followed in one pass, brackets inside strings (escapes included) not counted.
import assert from "node:assert/strict";
import { JSON_SHAPE_LIMITS, jsonShape, jsonShapeProblem } from "../../lib/protocol/json_shape.ts";

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

const values = (maxValues: number) => ({ maxContainers: 1_000, maxDepth: 10, maxValues });

Deno.test("jsonShape: every value counts once — objects, arrays, keys, strings, numbers, literals", () => {
  const text = '{"a": [1, -2.5e+3, "s"], "b": {"c": true, "d": false, "e": null}, "f": 0}';
  // {} a [] 1 -2.5e+3 "s" b {} c true d false e null f 0
  assert.deepEqual(jsonShape(text), { values: 16, containers: 3, problem: undefined });
  assert.equal(jsonShapeProblem(text, values(16)), undefined);
  assert.equal(jsonShapeProblem(text, values(15)), "more than 15 JSON values");
  assert.equal(jsonShape("  42  ").values, 1);
  assert.equal(jsonShape("null").values, 1);
  assert.equal(jsonShape("").values, 0);
});

Deno.test("jsonShape: one object of many keys or one array of many strings is many values", () => {
  const keys = `{${Array.from({ length: 200_000 }, (_, i) => `"k${i}":0`).join(",")}}`;
  assert.equal(jsonShapeProblem(keys), "more than 200000 JSON values");
  const strings = `[${Array.from({ length: 200_000 }, (_, i) => `"s${i}"`).join(",")}]`;
  assert.equal(jsonShapeProblem(strings), "more than 200000 JSON values");
  const numbers = `[${"1,".repeat(199_999)}1]`;
  assert.deepEqual(jsonShape(numbers), {
    values: 200_001,
    containers: 1,
    problem: "more than 200000 JSON values",
  });
  assert.equal(jsonShapeProblem(`[${"1,".repeat(199_998)}1]`), undefined);
  assert.equal(
    jsonShapeProblem(`[${"true,null,false,".repeat(66_667)}1]`),
    "more than 200000 JSON values",
  );
  assert.equal(JSON_SHAPE_LIMITS.maxValues, 200_000);
});

Deno.test("jsonShape: brackets, quotes, escapes and digits inside strings are one value", () => {
  const text = String
    .raw`["[[{{ 1 2 true null", "\"quoted\" [1,2]", "\\", "\u005b\n\t", "{\"k\":1}"]`;
  assert.equal(JSON.parse(text).length, 5);
  assert.deepEqual(jsonShape(text), { values: 6, containers: 1, problem: undefined });
  // An escaped backslash ends the string; the numbers after it count.
  assert.equal(jsonShape(String.raw`["\\", 1, 2]`).values, 4);
  // Limits without maxValues keep the default bound of values.
  assert.equal(
    jsonShapeProblem(`[${"0,".repeat(200_000)}0]`, { maxContainers: 9, maxDepth: 9 }),
    "more than 200000 JSON values",
  );
});
