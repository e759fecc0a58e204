// The diff hunks must be real patches: applying them to the old lines gives
// the new lines. Checked over many seeded random edits.
import assert from "node:assert/strict";
import { type Hunk, lineDiff, renderHunk, replacementHunks } from "../../lib/tools/_diff.ts";
import { contentLines } from "../../lib/tools/_files.ts";

/** Small deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Apply unified hunks (headers as rendered) to `old` lines. */
function apply(old: string[], hunks: Hunk[]): string[] {
  const out: string[] = [];
  let at = 0; // index into old
  for (const h of hunks) {
    const header = renderHunk(h).split("\n")[0]!;
    const m = header.match(/^@@ -(\d+),(\d+) \+(\d+),(\d+) @@$/);
    assert.ok(m, header);
    const start = Number(m[2]) === 0 ? Number(m[1]) : Number(m[1]) - 1;
    while (at < start) out.push(old[at++]!);
    assert.equal(
      Number(m[3]),
      h.newCount === 0 ? out.length : out.length + 1,
      "new start must match",
    );
    let oldSeen = 0;
    let newSeen = 0;
    for (const line of h.lines) {
      const op = line[0];
      const text = line.slice(1);
      if (op === " ") {
        assert.equal(old[at], text, "context line must match the old file");
        out.push(old[at++]!);
        oldSeen++;
        newSeen++;
      } else if (op === "-") {
        assert.equal(old[at], text, "removed line must match the old file");
        at++;
        oldSeen++;
      } else if (op === "+") {
        out.push(text);
        newSeen++;
      }
    }
    assert.equal(oldSeen, h.oldCount);
    assert.equal(newSeen, h.newCount);
  }
  while (at < old.length) out.push(old[at++]!);
  return out;
}

function randomText(next: () => number, lines: number): string {
  return Array.from({ length: lines }, () => `w${Math.floor(next() * 6)}\n`).join("");
}

Deno.test("lineDiff hunks turn the old lines into the new lines (200 random edits)", () => {
  const next = rng(42);
  for (let k = 0; k < 200; k++) {
    const a = randomText(next, Math.floor(next() * 40));
    const lines = contentLines(a);
    for (let e = Math.floor(next() * 5); e >= 0; e--) {
      const i = Math.floor(next() * (lines.length + 1));
      const kind = next();
      if (kind < 0.33) lines.splice(i, 1);
      else if (kind < 0.66) lines.splice(i, 0, `n${Math.floor(next() * 6)}`);
      else lines[i] = `c${Math.floor(next() * 6)}`;
    }
    const b = lines.filter((l) => l !== undefined).map((l) => `${l}\n`).join("");
    const diff = lineDiff(a, b);
    if (a === b) {
      assert.equal(diff.kind, "identical");
      continue;
    }
    assert.equal(diff.kind, "hunks");
    if (diff.kind !== "hunks") continue;
    assert.deepEqual(apply(contentLines(a), diff.hunks), contentLines(b));
    const shown = diff.hunks.flatMap((h) => h.lines);
    assert.equal(shown.filter((l) => l[0] === "+").length, diff.plus);
    assert.equal(shown.filter((l) => l[0] === "-").length, diff.minus);
  }
});

Deno.test("replacementHunks turn the old lines into the edited lines (200 random edits)", () => {
  const next = rng(7);
  for (let k = 0; k < 200; k++) {
    const content = randomText(next, 1 + Math.floor(next() * 60));
    const lines = contentLines(content);
    const pick = lines[Math.floor(next() * lines.length)]!;
    const oldString = next() < 0.5 ? pick : `${pick}\n`;
    const newString = ["", "X", "X\nY", "X\nY\nZ\n", `${pick}!`][Math.floor(next() * 5)]!;
    if (oldString === newString) continue;
    const updated = content.split(oldString).join(newString);
    const hunks = replacementHunks(content, oldString, newString, true, 1000);
    const sites = hunks.reduce((n, h) => n + h.sites, 0);
    assert.equal(sites, content.split(oldString).length - 1);
    assert.deepEqual(apply(lines, hunks.map((h) => h.hunk)), contentLines(updated));
  }
});

Deno.test("replacementHunks for a single site in a long file shows only that region", () => {
  const content = Array.from({ length: 100 }, (_, i) => `line ${i + 1}\n`).join("");
  const [only] = replacementHunks(content, "line 50\n", "fifty\nL\n", false, 5);
  assert.equal(
    renderHunk(only!.hunk),
    "@@ -47,7 +47,8 @@\n line 47\n line 48\n line 49\n-line 50\n+fifty\n+L\n line 51\n line 52\n line 53",
  );
});
