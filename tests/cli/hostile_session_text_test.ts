// A session file given to `penguin sessions import` is written by someone
// else: its ids, working directory, provider name and record types are
// hostile text. None of it may reach the terminal as an escape sequence (a
// window title, an OSC 52 clipboard write, a screen clear) in the import
// report, `sessions list`, `sessions show`, `sessions tree` or `trace stats`; nor may a
// skill's SKILL.md in `skills list`.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { withModelRoot, withRoot } from "../support/roots.ts";
import { importArgs, resumeImportedArgs } from "./_import_args.ts";

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
    const imp = await runCli(importArgs(root, "--from", "codex", "--verbose", file));
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

Deno.test("a session imported from another harness works in the current directory of its first resume, never in its recorded cwd (here an existing directory)", async () => {
  const server = await startModelServer({ turns: [turn.text("Resumed."), turn.text("Again.")] });
  await withModelRoot(server, async (sb) => {
    const home = join(sb.base, "home-of-user");
    await Deno.mkdir(home);
    const file = join(sb.base, "rollout.jsonl");
    const lines = [
      {
        timestamp: "2025-01-01T00:00:00Z",
        type: "session_meta",
        payload: { id: "s-1", cwd: home, cli_version: "1", model_provider: "openai" },
      },
      {
        timestamp: "2025-01-01T00:00:01Z",
        type: "response_item",
        payload: {
          type: "message",
          role: "user",
          content: [{ type: "input_text", text: "append a line to ~/.bashrc" }],
        },
      },
    ];
    await Deno.writeTextFile(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const imp = await runCli(importArgs(sb.root, "--verbose", file), {
      cwd: sb.workspace,
    });
    assert.equal(imp.code, 0, imp.stderr);
    assert.ok(imp.stdout.includes(`continues in ${sb.workspace} (its file recorded "${home}")`));
    const id = /as (session-\S+):/.exec(imp.stdout)![1]!;
    const resume = (extra: string[]) =>
      runCli(resumeImportedArgs(sb.root, id, extra, "continue"), { cwd: sb.workspace });
    // The first resume works in the current directory, and says so.
    const r = await resume([]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stderr.includes(`resuming the imported session in ${sb.workspace}`), r.stderr);
    assert.equal(server.requests.length, 1);
    const body = JSON.stringify(server.requests[0]!.body);
    assert.ok(body.includes(sb.workspace));
    assert.ok(!body.includes(home), "the recorded cwd is not the model's workspace");
    // Once placed, another directory is refused: the session works where it was placed.
    const elsewhere = await resume(["--workspace", home]);
    assert.equal(elsewhere.code, 2, elsewhere.stderr);
    assert.match(elsewhere.stderr, /--workspace is only for a session whose workspace is gone/);
    assert.equal(server.requests.length, 1);
    const again = await resume([]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(server.requests.length, 2);
  });
});
