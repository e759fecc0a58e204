// No import cycles in lib/: the module graph (type-only and lazy imports
// included) must be a DAG, so every module can be read, tested and replaced
// from the bottom up.
import assert from "node:assert/strict";
import { REPO } from "../support/cli.ts";
import { findCycles, importGraph } from "./_graph.ts";

Deno.test("lib/ has no import cycles (type-only and lazy imports count)", () => {
  const graph = importGraph(`${REPO}lib`);
  const cycles = findCycles(graph).map((cycle) =>
    cycle.map((file) => file.slice(REPO.length)).join(" → ")
  );
  assert.deepEqual(cycles, [], `import cycles in lib/:\n${cycles.join("\n")}`);
});

Deno.test("the cycle finder names each cycle as a closed path", () => {
  const graph = new Map([
    ["a.ts", ["b.ts"]],
    ["b.ts", ["c.ts"]],
    ["c.ts", ["a.ts", "d.ts"]],
    ["d.ts", []],
    ["e.ts", ["e.ts"]],
  ]);
  assert.deepEqual(findCycles(graph), [["a.ts", "b.ts", "c.ts", "a.ts"], ["e.ts", "e.ts"]]);
});
