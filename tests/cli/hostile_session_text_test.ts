// A session file given to `penguin sessions import` is written by someone
// else: its ids, working directory, provider name and record types are
// hostile text. None of it may reach the terminal as an escape sequence (a
// window title, an OSC 52 clipboard write, a screen clear) in the import
// report, `sessions list`, `sessions show`, `sessions tree` or `trace stats`; nor may a
// skill's SKILL.md in `skills list`.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";

const EVIL = "\x1b]0;PWNED\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x9b2J";

function assertClean(what: string, text: string): void {
  // deno-lint-ignore no-control-regex
  const hit = /[\x07\x1b\x9b]/.exec(text);
  assert.equal(hit, null, `${what} printed a raw control character: ${JSON.stringify(text)}`);
  assert.ok(!text.includes("]52;"), `${what} printed an OSC 52 sequence: ${text}`);
}

Deno.test("a hostile Codex session's text reaches no terminal raw: import report, sessions list/show/tree, trace stats", async () => {
  await withRoot(async (root) => {
    const file = join(root, "rollout-evil.jsonl");
    const at = (s: number) => `2025-01-01T00:00:0${s}Z`;
    const lines = [
      {
        timestamp: at(0),
        type: "session_meta",
        payload: { id: `abc${EVIL}`, cwd: `/x${EVIL}`, cli_version: "1", model_provider: EVIL },
      },
      {
        timestamp: at(1),
        type: "response_item",
        payload: { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] },
      },
      { timestamp: at(2), type: `weird${EVIL}`, payload: { type: "x" } },
      { timestamp: at(3), type: "response_item", payload: { type: `odd${EVIL}` } },
    ];
    await Deno.writeTextFile(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const imp = await runCli(["--root", root, "sessions", "import", "--from", "codex", file]);
    assert.equal(imp.code, 0, imp.stderr);
    assert.match(imp.stdout, /Loss report/);
    assertClean("sessions import", imp.stdout + imp.stderr);
    const id = /as (session-\S+):/.exec(imp.stdout)![1]!;
    const outputs: Array<[string, string[]]> = [
      ["sessions list", ["sessions", "list"]],
      ["sessions show", ["sessions", "show", id]],
      ["sessions tree", ["sessions", "tree"]],
      ["trace stats", ["trace", "stats", id]],
      ["trace stats --csv", ["trace", "stats", "--csv", id]],
    ];
    for (const [what, args] of outputs) {
      const r = await runCli(["--root", root, ...args]);
      assert.equal(r.code, 0, `${what}: ${r.stderr}`);
      assert.ok(r.stdout.includes(id), `${what}: ${r.stdout}`);
      assertClean(what, r.stdout + r.stderr);
    }
  });
});

Deno.test("a hostile skill's SKILL.md reaches no terminal raw in skills list", async () => {
  await withRoot(async (root) => {
    const src = join(root, "evil-skill");
    await Deno.mkdir(src);
    await Deno.writeTextFile(
      join(src, "SKILL.md"),
      `---\nname: evil\ndescription: hi ${EVIL} there\nversion: 1${EVIL}\n---\nbody\n`,
    );
    const inst = await runCli(["--root", root, "skills", "install", src]);
    assert.equal(inst.code, 0, inst.stderr);
    const list = await runCli(["--root", root, "skills", "list"]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /evil +1 +hi/);
    assertClean("skills list", list.stdout + list.stderr);
  });
});
