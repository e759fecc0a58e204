// What the model's commands can write and the CLI prints — the agent's memory (`memory list|show`)
// and a skill the user installs from a folder the model wrote (`skills install|list`, and the
// skill list of every later system prompt) — is masked with the agent's secrets (attack round 22
// secrets A04, A05: a vault value there was printed raw).
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, runCliOk } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";

const VALUE = "vlt-Q7c3a91e2d4b85f60zz";
const MARK = "[redacted:vault:DB_PW]";

async function vault(root: string): Promise<void> {
  await runCliOk(["--root", root, "config", "vault", "set", "--key", "DB_PW", "--value", VALUE]);
}

Deno.test("memory list and show mask a vault value the model saved", async () => {
  await withRoot(async (root) => {
    await vault(root);
    const user = join(
      root,
      "default_project",
      "agents",
      "default_agent",
      "agent_state",
      "memory",
      "user",
    );
    await Deno.mkdir(user, { recursive: true });
    await Deno.writeTextFile(join(user, "MEMORY.md"), `- t.md: the password is ${VALUE}\n`);
    await Deno.writeTextFile(
      join(user, "t.md"),
      `---\nname: t\ndescription: pw ${VALUE}\nupdated_at: 2026-12-01\n---\n${VALUE}\n`,
    );
    for (
      const args of [["memory", "list"], ["memory", "list", "--json"], ["memory", "show"], [
        "memory",
        "show",
        "t.md",
      ]]
    ) {
      const r = await runCliOk(["--root", root, ...args]);
      assert.ok(
        !(r.stdout + r.stderr).includes(VALUE.slice(0, 10)),
        `${args.join(" ")}: ${r.stdout}`,
      );
      assert.ok(r.stdout.includes(MARK), r.stdout);
    }
  });
});

Deno.test("skills install and list mask a vault value in a skill the model wrote", async () => {
  await withRoot(async (root) => {
    await vault(root);
    const src = join(root, "..", `skill-${crypto.randomUUID()}`, "notes");
    await Deno.mkdir(src, { recursive: true });
    try {
      await Deno.writeTextFile(
        join(src, "SKILL.md"),
        `---\nname: notes\ndescription: use ${VALUE} to log in\n---\nbody\n`,
      );
      const add = await runCli(["--root", root, "skills", "install", src]);
      assert.equal(add.code, 0, add.stderr);
      for (const args of [["skills", "list"], ["skills", "list", "--json"]]) {
        const r = await runCliOk(["--root", root, ...args]);
        assert.ok(r.stdout.includes(MARK), r.stdout);
        assert.ok(!r.stdout.includes(VALUE.slice(0, 10)), r.stdout);
      }
    } finally {
      await Deno.remove(join(src, ".."), { recursive: true });
    }
  });
});
