// `penguin agent snapshot` masks a vault value the model wrote into the agent's memory spelled
// with C escapes at one level and JavaScript escapes at the next, or the reverse (red team
// final13c secimp rows 36, 37: such a file was packed byte for byte and not named).
import assert from "node:assert/strict";
import { join } from "node:path";
import { readTar } from "../../lib/state/_tar.ts";
import { runCliOk } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";
import { assertNoPieceOf, setVault } from "../support/secrets.ts";
import { allReadings, readMixed, spellMixed } from "../support/mixed_escapes.ts";

const VAULT = "Qz7Kp2Xw9Lm4Rt6Yh8Nb3Vc5Jd1Fg0Ss";

Deno.test("agent snapshot masks a memory file holding a vault value in mixed C/JavaScript escape readings", async () => {
  await withRoot(async (root) => {
    await runCliOk(["--root", root, "skills", "list"]);
    await setVault(root, "ATK_V", VAULT);
    const agent = join(root, "default_project", "agents", "default_agent");
    const user = join(agent, "agent_state", "memory", "user");
    const mixed = `# notes\nkeep this line\nY13 ${spellMixed(VAULT, "cj")}\n`;
    const memory = `# Memory\nY15 ${spellMixed(VAULT, "jc")}\n`;
    assert.equal(
      readMixed(spellMixed(VAULT, "jc"), "jc"),
      VAULT,
      "the spelling reads as the value",
    );
    await Deno.writeTextFile(join(user, "m_mixed.md"), mixed);
    await Deno.writeTextFile(join(user, "MEMORY.md"), memory);

    const r = await runCliOk(["--root", root, "agent", "snapshot"]);
    assert.match(r.stderr, /packed agent_state\/memory\/user\/m_mixed\.md: secret values masked/);
    assert.match(r.stderr, /packed agent_state\/memory\/user\/MEMORY\.md: secret values masked/);

    const dir = join(agent, "snapshots");
    const [snap] = (await Array.fromAsync(Deno.readDir(dir))).map((e) => join(dir, e.name));
    const stream = (await Deno.open(snap!)).readable.pipeThrough(new DecompressionStream("gzip"));
    const entries = readTar(new Uint8Array(await new Response(stream).arrayBuffer()));
    const byPath = new Map(entries.map((e) => [e.path, new TextDecoder().decode(e.data)]));
    for (const name of ["m_mixed.md", "MEMORY.md"]) {
      const text = byPath.get(`agent_state/memory/user/${name}`);
      assert.ok(text !== undefined, `${name} is packed`);
      for (const readings of [1, 2, 3].flatMap(allReadings)) {
        assertNoPieceOf(readMixed(text, readings), [VAULT], `${name} read ${readings}`);
      }
      assertNoPieceOf(text, [VAULT], name);
    }
    assert.match(byPath.get("agent_state/memory/user/m_mixed.md")!, /^keep this line$/m);
    assert.match(
      byPath.get("agent_state/memory/user/MEMORY.md")!,
      /^Y15 \[redacted:vault:ATK_V\]$/m,
    );
  });
});
