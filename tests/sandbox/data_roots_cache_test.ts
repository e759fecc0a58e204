// The list of data roots: what a plan keeps between commands (a noted root seen holding a project
// is not listed again while it is the same directory) and what a rewrite drops (roots gone, but
// the most recently noted). Run in a subprocess with a run directory of its own, so the list is
// no other test's and this test's roots land in no shared list.
import assert from "node:assert/strict";
import { join } from "node:path";
import { visibleTempDir } from "../support/roots.ts";
import { evalInRunDir } from "./_run_dir_eval.ts";

const MOD = new URL("../../lib/sandbox/_data_roots.ts", import.meta.url).href;

/** Run `body` (a module's code, `base` and the module's exports in scope) with PENGUIN_RUN_DIR set; its JSON output. */
async function inRunDir(base: string, body: string): Promise<unknown> {
  const script = `import * as m from ${JSON.stringify(MOD)};\nconst base = ${
    JSON.stringify(base)
  };\n${body}`;
  return JSON.parse(await evalInRunDir(script, join(base, "run")));
}

Deno.test("a plan lists a noted root again only when it may have changed", async () => {
  const base = await visibleTempDir("penguin-roots-cache-");
  try {
    const got = await inRunDir(
      base,
      `
      const project = (r) => Deno.mkdirSync(r + "/p/agents", { recursive: true });
      const [a, b, c, d] = ["a", "b", "c", "d"].map((n) => base + "/" + n);
      project(a);
      Deno.mkdirSync(b);
      for (const r of [a, b, c]) await m.rememberDataRoot(r);
      const steps = [];
      const step = async (what) => {
        const before = m.dataRootLookups();
        const hidden = await m.dataRootsToHide(undefined, (p) => !p.startsWith(base + "/"));
        steps.push({ what, hidden: hidden.map((h) => h.noted.slice(base.length + 1)),
          lookups: m.dataRootLookups() - before });
      };
      await step("first");
      await step("unchanged");
      project(b);
      await step("project made in a noted directory");
      await step("unchanged again");
      project(c);
      await step("a noted root made");
      Deno.renameSync(a, base + "/a.old");
      Deno.mkdirSync(a);
      await step("a seen root replaced by another directory");
      project(d);
      const before = m.dataRootLookups();
      const own = await m.dataRootsToHide(d, (p) => !p.startsWith(base + "/"));
      steps.push({ what: "a root the list lacks, noted by the plan",
        hidden: own.map((h) => h.noted.slice(base.length + 1)), lookups: m.dataRootLookups() - before });
      console.log(JSON.stringify(steps));
      `,
    );
    assert.deepEqual(got, [
      // a and b are listed (c is missing: nothing to list); a holds a project.
      { what: "first", hidden: ["a"], lookups: 2 },
      // a is the directory seen before: not listed again; b held none: listed again.
      { what: "unchanged", hidden: ["a"], lookups: 1 },
      { what: "project made in a noted directory", hidden: ["a", "b"], lookups: 1 },
      { what: "unchanged again", hidden: ["a", "b"], lookups: 0 },
      { what: "a noted root made", hidden: ["a", "b", "c"], lookups: 1 },
      // Another directory at a's path (no project in it): listed, and no longer hidden.
      { what: "a seen root replaced by another directory", hidden: ["b", "c"], lookups: 1 },
      // a (holding no project) is listed each time; d is new.
      { what: "a root the list lacks, noted by the plan", hidden: ["b", "c", "d"], lookups: 2 },
    ]);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a rewrite of the list drops missing roots but the most recently noted", async () => {
  const base = await visibleTempDir("penguin-roots-prune-");
  try {
    const got = await inRunDir(
      base,
      `
      const list = base + "/run/data-roots";
      const existing = [1, 2, 3].map((i) => base + "/e" + i);
      for (const e of existing) Deno.mkdirSync(e, { recursive: true });
      const missing = Array.from({ length: 20 }, (_, i) => base + "/m" + i);
      const orphan = base + "/gone/root";
      await m.rememberDataRoot(existing[0]); // makes the run directory
      Deno.writeTextFileSync(list, [...existing, ...missing, orphan].map((r) => r + "\\n").join(""));
      const before = Deno.statSync(list).ino;
      await m.rememberDataRoot(existing[1]);
      const unchanged = Deno.statSync(list).ino === before;
      await m.rememberDataRoot(base + "/new");
      const after = Deno.readTextFileSync(list).split("\\n").filter((l) => l)
        .map((r) => r.slice(base.length + 1));
      console.log(JSON.stringify({ unchanged, after, kept: m.RECENT_MISSING_KEPT }));
      `,
    ) as { unchanged: boolean; after: string[]; kept: number };
    assert.ok(got.unchanged, "noting a root already listed writes nothing");
    // 24 entries: the last `kept` of them may stay while missing (not the orphan, whose parent
    // is gone too); older missing ones are dropped.
    const recent = Array.from({ length: 20 }, (_, i) => `m${i}`).slice(24 - got.kept - 3);
    assert.deepEqual(got.after, ["e1", "e2", "e3", ...recent, "new"]);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a noted root that carries penguin's mark is hidden while it holds nothing yet", async () => {
  // Attack round 27 c07: a root made and marked, still empty, was open to a command started
  // after it; what the command planted there would have been trusted as the user's.
  const base = await visibleTempDir("penguin-roots-marked-");
  try {
    const got = await inRunDir(
      base,
      `
      const [marked, plain] = ["marked", "plain"].map((n) => base + "/" + n);
      Deno.mkdirSync(marked);
      Deno.writeTextFileSync(marked + "/.root_mark", "x");
      Deno.mkdirSync(plain);
      for (const r of [marked, plain]) await m.rememberDataRoot(r);
      const hidden = await m.dataRootsToHide(undefined, (p) => !p.startsWith(base + "/"));
      console.log(JSON.stringify(hidden.map((h) => h.noted.slice(base.length + 1))));
      `,
    );
    assert.deepEqual(got, ["marked"]);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
