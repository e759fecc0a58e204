import assert from "node:assert/strict";
import { parseMessageLine } from "../../lib/protocol/mod.ts";

const DIR = new URL("../../../shared/fixtures/penguin-traces/", import.meta.url);
let present = true;
try {
  Deno.statSync(DIR);
} catch {
  present = false;
}

Deno.test({
  name: "every record of the PenguinHarness fixture traces validates and re-serialises identically",
  ignore: !present,
  fn() {
    let records = 0;
    for (const entry of Deno.readDirSync(DIR)) {
      if (!entry.name.endsWith(".jsonl")) continue;
      const lines = Deno.readTextFileSync(new URL(entry.name, DIR)).split("\n").filter((l) =>
        l.trim()
      );
      lines.forEach((line, i) => {
        const r = parseMessageLine(line);
        assert.ok(r.ok, `${entry.name}:${i + 1}: ${r.ok ? "" : r.problem.message}`);
        assert.equal(JSON.stringify(r.message), line, `${entry.name}:${i + 1}`);
        records++;
      });
    }
    assert.ok(records > 50, `expected the fixture traces to hold records, found ${records}`);
  },
});
