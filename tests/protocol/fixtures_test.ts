import assert from "node:assert/strict";
import { basename } from "node:path";
import { parseMessageLine } from "../../lib/protocol/mod.ts";
import { penguinTraceFiles, penguinTracesPresent } from "../support/penguin_traces.ts";

Deno.test({
  name: "every record of the PenguinHarness fixture traces validates and re-serialises identically",
  ignore: !penguinTracesPresent,
  fn() {
    let records = 0;
    for (const file of penguinTraceFiles()) {
      const name = basename(file);
      const lines = Deno.readTextFileSync(file).split("\n").filter((l) => l.trim());
      lines.forEach((line, i) => {
        const r = parseMessageLine(line);
        assert.ok(r.ok, `${name}:${i + 1}: ${r.ok ? "" : r.problem.message}`);
        assert.equal(JSON.stringify(r.message), line, `${name}:${i + 1}`);
        records++;
      });
    }
    assert.ok(records > 50, `expected the fixture traces to hold records, found ${records}`);
  },
});
