import assert from "node:assert/strict";
import { join } from "node:path";
import { listSkills, skillFrontmatter } from "../../lib/state/mod.ts";
import { skillList } from "../../lib/agent/prompt_sections.ts";

Deno.test("SKILL.md frontmatter is read line by line, BOM and CRLF tolerated", () => {
  assert.deepEqual(
    skillFrontmatter(
      '\uFEFF---\r\nname: "x"\r\ndescription: does x: well\r\nversion: 2\r\n---\r\nbody',
    ),
    { name: "x", description: "does x: well", version: "2" },
  );
  assert.deepEqual(skillFrontmatter("no frontmatter"), {});
  assert.deepEqual(skillFrontmatter("---\nname: open block"), {});
});

Deno.test("the skills listing and the system prompt's skill list agree, sorted by name", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const make = async (name: string, md?: string) => {
      await Deno.mkdir(join(dir, name));
      if (md !== undefined) await Deno.writeTextFile(join(dir, name, "SKILL.md"), md);
    };
    await make("zeta", "---\ndescription: last one\nversion: x\n---\n");
    await make("alpha", "---\ndescription: first one\nversion: 4\nupdated: 2026-11-30\n---\n");
    await make("bare");
    await make("not a skill", "---\ndescription: bad dir name\n---\n");
    const skills = await listSkills(dir);
    assert.deepEqual(
      skills.map((s) => [s.name, s.version, s.description, s.updated]),
      [["alpha", 4, "first one", "2026-11-30"], ["bare", 1, "", ""], ["zeta", 1, "last one", ""]],
    );
    assert.deepEqual(await skillList(dir), [
      "- `alpha` — first one",
      "- `bare`",
      "- `zeta` — last one",
    ]);
    assert.deepEqual(await listSkills(join(dir, "missing")), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
