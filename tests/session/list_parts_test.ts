// A listing of tens of thousands of sessions is written in parts (`sessionListParts`,
// `treeParts`, `printJsonArray`): each part is whole lines, and the parts together are exactly
// the text written whole before.
import assert from "node:assert/strict";
import {
  formatSessionList,
  formatTree,
  sessionListParts,
  type SessionSummary,
  type TreeNode,
  treeParts,
} from "../../lib/session/mod.ts";
import { printJson, printJsonArray } from "../../lib/cli/json.ts";
import type { Io } from "../../lib/cli/command.ts";

/** A listing row of session `i`, its fields of a length that varies with `i`. */
function row(i: number): SessionSummary {
  return {
    sessionId: `session-2026-10-01-10-00-00-${i.toString(16).padStart(8, "0")}`,
    projectId: "default_project",
    agentId: i % 3 === 0 ? "helper" : "default_agent",
    files: 1,
    latestPath: `/data/traces/${i}_001.jsonl`,
    created: new Date(Date.UTC(2026, 9, 1) + i * 60_000).toISOString(),
    lastActivity: new Date(Date.UTC(2026, 9, 2) + i * 60_000).toISOString(),
    provider: "openai",
    modelId: "gpt-" + "x".repeat(i % 30),
    workspace: "/home/u/" + "w".repeat(i % 70),
    turns: i % 7 === 0 ? null : i % 11,
    tokens: i * 37,
    tokenCounts: null,
    firstPrompt: `prompt ${i}: ` + "ü".repeat(i % 90),
    source: null,
    lineage: null,
    parent: null,
    importedFrom: null,
  };
}

const rows = (n: number) => Array.from({ length: n }, (_, i) => row(i));

function assertWholeLines(parts: string[]): void {
  for (const p of parts) assert.ok(p.endsWith("\n"), "a part ends within a line");
}

Deno.test("a session table of 2,500 rows comes in parts of whole lines that join to the table", () => {
  const all = rows(2500);
  for (const width of [undefined, 200, 90, 50]) {
    const parts = [...sessionListParts(all, true, width, Date.UTC(2026, 11, 1))];
    assert.equal(parts.length, 3);
    assertWholeLines(parts);
    const text = parts.join("");
    assert.equal(text, formatSessionList(all, true, width, Date.UTC(2026, 11, 1)));
    const lines = text.split("\n");
    assert.equal(lines.length, 2500 + 3); // heading, rows, the count, and the end
    assert.equal(lines[2501], "2500 session(s)");
    // Wide enough for the widest layout's columns: every line fits.
    if (width === 200) {
      for (const l of lines) assert.ok(l.length < width, `${l.length} ≥ ${width}: ${l}`);
    }
  }
});

Deno.test("a session table fits a terminal with 200,000 rows (no argument list of every cell)", () => {
  const text = formatSessionList(rows(200_000), false, 120);
  assert.equal(text.split("\n").length, 200_000 + 3);
});

Deno.test("an empty listing is one line", () => {
  assert.deepEqual([...sessionListParts([], false)], ["No sessions.\n"]);
  assert.deepEqual([...treeParts([])], ["No sessions.\n"]);
});

Deno.test("a tree of 2,500 sessions comes in parts of whole lines, children under their parents", () => {
  const node = (
    i: number,
    relation: TreeNode["relation"],
    children: TreeNode[] = [],
  ): TreeNode => ({
    sessionId: `s${i}`,
    relation,
    summary: i % 5 === 0 ? null : row(i),
    children,
  });
  const forest: TreeNode[] = [];
  for (let i = 0; i < 500; i++) {
    const b = i * 5;
    forest.push(node(b, "root", [
      node(b + 1, "fork", [node(b + 2, "subagent"), node(b + 3, "clone")]),
      node(b + 4, "subagent"),
    ]));
  }
  const parts = [...treeParts(forest)];
  assert.equal(parts.length, 3);
  assertWholeLines(parts);
  const text = parts.join("");
  assert.equal(text, formatTree(forest));
  const lines = text.split("\n");
  assert.equal(lines.length, 2501);
  assert.match(lines[0]!, /^s0 \(not on disk\)$/);
  assert.ok(lines[1]!.startsWith("├─ [fork] s1  "));
  assert.ok(lines[2]!.startsWith("│  ├─ [subagent] s2  "));
  assert.ok(lines[3]!.startsWith("│  └─ [clone] s3  "));
  assert.ok(lines[4]!.startsWith("└─ [subagent] s4  "));
  assert.match(lines[5]!, /^s5 \(not on disk\)$/);
});

/** An Io that keeps what is written to stdout, write by write. */
function capture(): { io: Io; writes: string[] } {
  const writes: string[] = [];
  return { io: { out: (t: string) => writes.push(t), err: () => {} } as unknown as Io, writes };
}

Deno.test("a JSON array printed in parts is the array printed whole", () => {
  const values: unknown[][] = [
    [],
    [1],
    [{ aB: { cD: [1, { eF: "x\ny" }] }, meta: { keepCase: 1 } }, null, "s", [], {}],
    rows(1234),
    [undefined, () => 1, { a: undefined }],
  ];
  for (const v of values) {
    const whole = capture();
    printJson(whole.io, v, new Set(["meta"]));
    const parted = capture();
    printJsonArray(parted.io, v, new Set(["meta"]));
    assert.equal(parted.writes.join(""), whole.writes.join(""));
    assert.ok(parted.writes.length <= Math.ceil(v.length / 500) + 1);
    if (v.length > 1000) assert.ok(parted.writes.length >= 3);
  }
});
