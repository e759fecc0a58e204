// boundedLines: lines split across chunks, and the bound holding before a line is whole.
import assert from "node:assert/strict";
import { boundedLines } from "../../lib/mcp/bounded_lines.ts";

function feed(max: number, chunks: string[]): { lines: string[]; tooLong: number } {
  const got = { lines: [] as string[], tooLong: 0 };
  const push = boundedLines(max, {
    onLine: (l) => got.lines.push(l),
    onTooLong: () => got.tooLong++,
  });
  for (const c of chunks) push(c);
  return got;
}

Deno.test("boundedLines joins lines across chunks and drops a trailing \\r", () => {
  assert.deepEqual(feed(10, ["ab", "c\r\nde\nf", "g", "\n", "\n"]), {
    lines: ["abc", "de", "fg", ""],
    tooLong: 0,
  });
});

Deno.test("boundedLines reports a line past the bound once, before it ends, and reads nothing after", () => {
  assert.deepEqual(feed(5, ["ok\n12", "34", "56", "789\n", "later\n"]), {
    lines: ["ok"],
    tooLong: 1,
  });
  assert.deepEqual(feed(5, ["12345\n123456"]), { lines: ["12345"], tooLong: 1 });
});
