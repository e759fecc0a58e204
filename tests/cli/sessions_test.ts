import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";
import { answerQuestion, hasTmux } from "../support/tmux.ts";

const FIXTURES = "/work/shared/fixtures/penguin-traces";
const PARENT = "session-2026-11-29-19-26-19-5803d24a";
const CHILD = "session-2026-11-29-19-26-19-8997c56f";
const RESUMED = "session-2026-11-29-19-26-12-021d8b64";

async function fixtures(): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(FIXTURES)) {
    if (e.name.endsWith(".jsonl")) out.push(join(FIXTURES, e.name));
  }
  return out.sort();
}

async function importAll(root: string): Promise<void> {
  const r = await runCli(["--root", root, "sessions", "import", ...(await fixtures())]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /6 session\(s\) imported, 0 refused/);
}

Deno.test("cli: sessions import, list (text and --json) and tree over the fixtures", async () => {
  await withRoot(async (root) => {
    await importAll(root);
    const list = await runCli(["--root", root, "sessions", "list"]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(
      list.stdout,
      /^ID\s+CREATED\s+LAST ACTIVITY\s+MODEL\s+WORKSPACE\s+TURNS\s+TOKENS\s+FIRST PROMPT/,
    );
    // The subagent child is reached from its parent (sessions tree), not listed by default.
    assert.match(
      list.stdout,
      /5 session\(s\)\nNot shown: 1 with no turn or of a subagent \(--all\)\.\n$/,
    );
    assert.ok(!list.stdout.includes(CHILD), list.stdout);
    assert.match(list.stdout, new RegExp(`${RESUMED}.*custom/mock.*Run two steps\\.`));
    const json = await runCli(["--root", root, "sessions", "list", "--all", "--json"]);
    const rows = JSON.parse(json.stdout) as Array<{ session_id: string; source: string | null }>;
    assert.equal(rows.length, 6);
    assert.equal(rows.find((r) => r.session_id === CHILD)?.source, "subagent");
    const tree = await runCli(["--root", root, "sessions", "tree", PARENT]);
    assert.equal(tree.code, 0, tree.stderr);
    const [top, under] = tree.stdout.split("\n");
    assert.ok(top!.startsWith(`${PARENT}  `), tree.stdout);
    assert.ok(under!.startsWith(`└─ [subagent] ${CHILD}  `), tree.stdout);
  });
});

Deno.test("cli: sessions show numbers the user prompts, by id, path and latest", async () => {
  await withRoot(async (root) => {
    await importAll(root);
    const byId = await runCli(["--root", root, "sessions", "show", RESUMED]);
    assert.equal(byId.code, 0, byId.stderr);
    assert.match(byId.stdout, /^\[1\] user: \[\[mock turns=2 id=fx-resume-a\]\] Run two steps\.$/m);
    assert.match(byId.stdout, /^\[2\] user: \[\[mock turns=1 id=fx-resume-b\]\]/m);
    assert.match(byId.stdout, /^ {4}-> exec_command /m);
    assert.match(byId.stdout, /^ {4}<- exec_command: step-1/m);
    const byPath = await runCli([
      "--root",
      root,
      "sessions",
      "show",
      join(FIXTURES, "03-resumed.jsonl"),
      "--json",
    ]);
    const outline = JSON.parse(byPath.stdout) as { session_id: string; prompts: number };
    assert.equal(outline.session_id, RESUMED);
    assert.equal(outline.prompts, 2);
    const latest = await runCli(["--root", root, "sessions", "show", "latest"]);
    assert.match(latest.stdout, new RegExp(`^Session ${PARENT}$`, "m"));
  });
});

Deno.test("cli: sessions fork and clone print the new id and how to continue it", async () => {
  await withRoot(async (root) => {
    await importAll(root);
    const fork = await runCli(["--root", root, "sessions", "fork", RESUMED, "--before", "2"]);
    assert.equal(fork.code, 0, fork.stderr);
    const id = /into (session-\S+)/.exec(fork.stdout)?.[1];
    assert.ok(id, fork.stdout);
    assert.match(fork.stdout, new RegExp(`penguin chat --resume ${id}\\n`));
    assert.match(fork.stdout, new RegExp(`penguin run --resume ${id} -m`));
    const shown = await runCli(["--root", root, "sessions", "show", id, "--json"]);
    assert.equal((JSON.parse(shown.stdout) as { prompts: number }).prompts, 1);
    const clone = await runCli(["--root", root, "sessions", "clone", RESUMED, "--json"]);
    const c = JSON.parse(clone.stdout) as {
      session_id: string;
      kind: string;
      lineage: { parent_session_id: string };
    };
    assert.equal(c.kind, "clone");
    assert.match(c.session_id, /^session-\d{4}-/);
    assert.equal(c.lineage.parent_session_id, RESUMED);
    const bad = await runCli(["--root", root, "sessions", "fork", RESUMED]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /exactly one of --before <n> and --at <n>/);
  });
});

Deno.test("cli: sessions delete refuses without a terminal unless --yes, then deletes the children too", async () => {
  await withRoot(async (root) => {
    await importAll(root);
    const refused = await runCli(["--root", root, "sessions", "delete", PARENT]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /pass --yes/);
    const done = await runCli(["--root", root, "sessions", "delete", PARENT, "--yes"]);
    assert.equal(done.code, 0, done.stderr);
    assert.match(
      done.stdout,
      new RegExp(`Deleted session ${PARENT} \\(1 trace file\\(s\\)\\) and 1 child session\\(s\\)`),
    );
    const list = await runCli(["--root", root, "sessions", "list", "--json"]);
    const ids = (JSON.parse(list.stdout) as Array<{ session_id: string }>).map((r) => r.session_id);
    assert.equal(ids.length, 4);
    assert.ok(!ids.includes(PARENT) && !ids.includes(CHILD));
  });
});

Deno.test({
  name: "cli: sessions delete on a terminal asks once: n keeps the session, y deletes it",
  ignore: !hasTmux,
  fn: async () => {
    await withRoot(async (root) => {
      await importAll(root);
      const dir = join(root, "pane");
      await Deno.mkdir(dir);
      const cases: [string, RegExp][] = [
        ["n", /^Not deleted\.\n\[exited 1\]$/m],
        [
          "y",
          /^Deleted session \S+ \(1 trace file\(s\)\) and 1 child session\(s\)[\s\S]*\[exited 0\]$/m,
        ],
      ];
      for (const [answer, outcome] of cases) {
        await answerQuestion(
          dir,
          ["--root", root, "sessions", "delete", PARENT],
          /and 1 child session\(s\)\? \[y\/N\] $/m,
          answer,
          outcome,
        );
      }
      const list = await runCli(["--root", root, "sessions", "list", "--json"]);
      const ids = (JSON.parse(list.stdout) as Array<{ session_id: string }>).map((r) =>
        r.session_id
      );
      assert.ok(!ids.includes(PARENT), "deleted after y");
    });
  },
});

Deno.test("cli: a damaged import is refused with file:line errors; --lenient imports it", async () => {
  await withRoot(async (root) => {
    const src = await Deno.readTextFile(join(FIXTURES, "01-simple.jsonl"));
    const lines = src.split("\n");
    lines.splice(2, 0, "{broken");
    const path = join(root, "damaged.jsonl");
    await Deno.writeTextFile(path, lines.join("\n"));
    const strict = await runCli(["--root", root, "sessions", "import", path]);
    assert.equal(strict.code, 1);
    assert.match(strict.stderr, new RegExp(`${path}:3: not valid JSON`));
    const lenient = await runCli(["--root", root, "sessions", "import", "--lenient", path]);
    assert.equal(lenient.code, 0, lenient.stderr);
    assert.match(lenient.stderr, new RegExp(`${path}:3: .*\\(skipped\\)`));
  });
});

Deno.test("cli: a missing session is an error naming the searched directory", async () => {
  await withRoot(async (root) => {
    const r = await runCli([
      "--root",
      root,
      "sessions",
      "show",
      "session-2026-01-01-00-00-00-00000000",
      "--agent-id",
      "a1",
    ]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      new RegExp(
        `Session does not exist: session-2026-01-01-00-00-00-00000000 \\(searched ${root}/default_project/agents/a1/traces\\)`,
      ),
    );
  });
});

Deno.test("cli: sessions help lists the subcommands and each has its own help", async () => {
  const group = await runCli(["sessions", "--help"]);
  assert.equal(group.code, 0);
  for (const c of ["list", "show", "fork", "clone", "import", "delete", "tree"]) {
    assert.match(group.stdout, new RegExp(`sessions ${c}`));
    const help = await runCli(["help", "sessions", c]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, new RegExp(`^Usage: penguin sessions ${c}`));
    assert.match(help.stdout, /--project-id/);
  }
});
