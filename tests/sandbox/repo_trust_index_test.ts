// The records of the roots inside a session's root are found through their index, not by reading
// every record of the record directory (issue 32 item 1, issue 26): a machine that ran penguins
// for a while holds thousands of records of other roots, which a session's plan no longer reads.
// Each session runs in a process of its own, with the test's run directory.
import assert from "node:assert/strict";
import { join } from "node:path";
import { visibleTempDir } from "./_helpers.ts";
import { runScriptInRunDir as runIn } from "./_run_dir_eval.ts";

const DYING = new URL("./_dying_session.ts", import.meta.url).pathname;
const READS = new URL("./_trust_reads.ts", import.meta.url).pathname;
const SESSION = new URL("./_trust_session.ts", import.meta.url).pathname;

async function keyOf(root: string): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(root));
  return [...new Uint8Array(hash)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("a plan reads the records related to its root, not the 5,000 others", async () => {
  const base = await Deno.realPath(await visibleTempDir("penguin-trustidx-"));
  try {
    const ws = join(base, "ws");
    const runDir = join(base, "run");
    await Deno.mkdir(join(ws, "sub"), { recursive: true });
    // A penguin on ws/sub died: its record stays, and a session on ws must read it.
    await runIn(runDir, [DYING, join(ws, "sub")]);
    const dir = join(runDir, "nested-repos");
    const sub = join(dir, `${await keyOf(join(ws, "sub"))}.json`);
    assert.ok(await Deno.lstat(sub).then(() => true, () => false), "the dead session's record");
    const unrelated = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const root = join(base, "elsewhere", String(i));
      const path = join(dir, `${await keyOf(root)}.json`);
      await Deno.writeTextFile(path, JSON.stringify({ root, trusted: [] }));
      unrelated.add(path);
    }
    // The first session on the directory may index the records written before the index (as
    // these 5,000, written by hand); the next ones read only what concerns them.
    await runIn(runDir, [READS, ws, dir]);
    const { reads } = JSON.parse(await runIn(runDir, [READS, ws, dir])) as { reads: string[] };
    assert.ok(reads.includes(sub), `the record of ws/sub is read: ${reads.join(", ")}`);
    // The others read are lookups by key of the roots above ws (none there): O(depth).
    const others = reads.filter((p) => unrelated.has(p));
    assert.equal(others.length, 0, `${others.length} unrelated records read`);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

/** The names below `dir`, relative, sorted. */
async function listing(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    out.push(prefix + e.name);
    if (e.isDirectory) out.push(...await listing(join(dir, e.name), `${prefix}${e.name}/`));
  }
  return out.sort();
}

Deno.test("another run directory's records not yet indexed are read there, nothing written", async () => {
  const base = await Deno.realPath(await visibleTempDir("penguin-trustidx-"));
  try {
    const ws = join(base, "ws");
    await Deno.mkdir(join(ws, "sub"), { recursive: true });
    // A (run directory a) on ws/sub: its command made an armed R, and A died; its record stays.
    await runIn(join(base, "a"), [DYING, join(ws, "sub"), "R"]);
    // a's index is not there (written before the index, or a's removal took it first).
    const dir = join(base, "a", "nested-repos");
    for await (const e of Deno.readDir(dir)) {
      if (e.name === "indexed" || e.name.endsWith(".below")) {
        await Deno.remove(join(dir, e.name), { recursive: true });
      }
    }
    const before = await listing(join(base, "a"));

    // B (run directory b) plans on ws: A's record of ws/sub is read, and R disarmed...
    const seen = await runIn(join(base, "b"), [SESSION, "plan", ws]);
    assert.ok(
      await Deno.lstat(join(ws, "sub/R/.git-disarmed-by-penguin")).then(() => true, () => false),
      seen,
    );
    // ...and nothing is made in a, which its penguin (or a test) may be removing meanwhile.
    assert.deepEqual(await listing(join(base, "a")), before);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
