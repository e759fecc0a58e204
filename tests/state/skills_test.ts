import assert from "node:assert/strict";
import { join } from "node:path";
import { listSkills, skillFrontmatter } from "../../lib/state/mod.ts";
import { installSkill, SKILL_LIMITS } from "../../lib/state/skills.ts";
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

Deno.test("installing a skill archive refuses data that is not gzip, and one that unpacks past the size limit", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const skills = join(dir, "skills");
    const notGzip = join(dir, "plain.tar.gz");
    await Deno.writeTextFile(notGzip, "just text");
    await assert.rejects(
      installSkill(skills, notGzip),
      /Cannot install the skill from ".*plain\.tar\.gz": not a gzip file/,
    );
    // 65 MiB of zeros: a small archive that unpacks past 64 MiB (plus 1 MiB for tar headers).
    const bomb = join(dir, "bomb.tar.gz");
    const zeros = new Blob([new Uint8Array(SKILL_LIMITS.bytes + 2 * 1024 * 1024)]).stream()
      .pipeThrough(new CompressionStream("gzip"));
    await Deno.writeFile(bomb, new Uint8Array(await new Response(zeros).arrayBuffer()));
    await assert.rejects(
      installSkill(skills, bomb),
      /Cannot install the skill from ".*bomb\.tar\.gz": more than 64 MiB once unpacked/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
