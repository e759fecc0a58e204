// `skills install DIR` bounds what it reads, not what it saw: files that grow after the install
// looked at them are counted by the bytes read (attack round 16 bounded S1: files extended
// between a stat and the read were installed, 480 MiB against the 64 MiB limit). The growth is
// simulated deterministically: every `Deno.stat` of a skill file reports the size it had when
// empty, as a look taken before a writer extended it would.
import assert from "node:assert/strict";
import { join } from "node:path";
import { installSkill, SKILL_LIMITS } from "../../lib/state/skills.ts";
import { withTempDir } from "../support/roots.ts";

Deno.test("skills install refuses files that hold more than the limit however small they looked", async () => {
  await withTempDir("penguin-skill-grow-", async (dir) => {
    const skill = join(dir, "growy");
    await Deno.mkdir(skill);
    await Deno.writeTextFile(
      join(skill, "SKILL.md"),
      "---\nname: growy\ndescription: d\nversion: 1\nupdated: 2026-01-01\n---\nhi\n",
    );
    // Three sparse files of 30 MiB: 90 MiB in all (no disk space used).
    const each = 30 * 1024 * 1024;
    for (const n of ["a.bin", "b.bin", "c.bin"]) {
      using f = await Deno.open(join(skill, n), { write: true, create: true });
      await f.truncate(each);
    }
    assert.ok(3 * each > SKILL_LIMITS.bytes);
    const realStat = Deno.stat;
    Deno.stat = async (path: string | URL) => {
      const info = await realStat(path);
      return String(path).endsWith(".bin") ? { ...info, size: 0 } : info;
    };
    try {
      await assert.rejects(
        installSkill(join(dir, "skills"), skill),
        /Cannot install .*growy.*more than 64 MiB once unpacked/,
      );
    } finally {
      Deno.stat = realStat;
    }
    const left = await Array.fromAsync(Deno.readDir(join(dir, "skills"))).catch(() => []);
    assert.deepEqual(left.map((e) => e.name), [], "nothing installed or staged");
  });
});
