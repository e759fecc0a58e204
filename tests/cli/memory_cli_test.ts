// `penguin memory list|show|clear`: the user's view of what the model saved,
// read the way sessions read it (links refused), cleared only when confirmed.
import assert from "node:assert/strict";
import { join } from "node:path";
import { workspaceMemoryKey } from "../../lib/state/memory.ts";
import { runCli } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";
import { answerQuestion, hasTmux } from "../support/tmux.ts";

const SECRET = "vault-marker-3370";

interface Layout {
  state: string;
  user: string;
  wsDir: string;
  workspace: string;
}

async function seed(root: string): Promise<Layout> {
  const state = join(root, "default_project", "agents", "default_agent", "agent_state");
  const user = join(state, "memory", "user");
  const workspace = await Deno.realPath(await Deno.makeTempDir({ dir: root, prefix: "ws-" }));
  const wsDir = join(state, "memory", await workspaceMemoryKey(workspace));
  await Deno.mkdir(user, { recursive: true });
  await Deno.mkdir(wsDir, { recursive: true });
  await Deno.writeTextFile(join(state, ".vault.toml"), `# ${SECRET}\nK = "v"\n`);
  await Deno.writeTextFile(join(user, "MEMORY.md"), "- tabs.md: indent with tabs\n");
  await Deno.writeTextFile(
    join(user, "tabs.md"),
    "---\nname: tabs\ndescription: indent with tabs\nupdated_at: 2026-12-01\n---\nTabs.\n",
  );
  await Deno.symlink("../../.vault.toml", join(user, "leak.md"));
  await Deno.writeTextFile(join(wsDir, "MEMORY.md"), "- build.md: make\n- test.md: make test\n");
  await Deno.writeTextFile(join(wsDir, ".workspace"), `${workspace}\n`);
  return { state, user, wsDir, workspace };
}

Deno.test("memory list shows every scope with its topics, as a table and as JSON", async () => {
  await withRoot(async (root) => {
    const l = await seed(root);
    const table = await runCli(["--root", root, "memory", "list"]);
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trimEnd().split("\n");
    assert.match(lines[0]!, /^SCOPE\s+FILE\s+UPDATED\s+DESCRIPTION$/);
    assert.match(lines[1]!, /^user\s+MEMORY\.md\s+index, 1 line$/);
    assert.match(lines[2]!, /^user\s+tabs\.md\s+2026-12-01\s+indent with tabs$/);
    assert.ok(lines[3]!.startsWith(l.workspace) && lines[3]!.endsWith("index, 2 lines"));
    assert.equal(lines.length, 4, "the link is not a topic");

    const json = await runCli(["--root", root, "memory", "list", "--json"]);
    assert.equal(json.code, 0, json.stderr);
    const out = JSON.parse(json.stdout);
    assert.equal(out.agent_id, "default_agent");
    assert.deepEqual(out.scopes[0], {
      scope: "user",
      key: "user",
      dir: l.user,
      workspace: null,
      index_lines: 1,
      topics: [
        {
          file: "tabs.md",
          name: "tabs",
          description: "indent with tabs",
          updated_at: "2026-12-01",
        },
      ],
    });
    assert.equal(out.scopes[1].scope, "workspace");
    assert.equal(out.scopes[1].workspace, l.workspace);
    assert.ok(!json.stdout.includes(SECRET));

    const only = await runCli([
      "--root",
      root,
      "memory",
      "list",
      "--json",
      "--workspace",
      join(root, "nowhere"),
    ]);
    assert.deepEqual(JSON.parse(only.stdout).scopes.map((s: { key: string }) => s.key), ["user"]);
    const none = await runCli(["--root", root, "memory", "list", "--agent-id", "other"]);
    assert.equal(none.code, 0);
    assert.match(none.stdout, /^Agent other has no memory yet/);
  });
});

Deno.test("memory show prints an index or a topic file, and refuses a link", async () => {
  await withRoot(async (root) => {
    const l = await seed(root);
    const index = await runCli(["--root", root, "memory", "show"]);
    assert.equal(index.code, 0, index.stderr);
    assert.equal(index.stdout, "- tabs.md: indent with tabs\n");
    const topic = await runCli(["--root", root, "memory", "show", "tabs.md"]);
    assert.match(topic.stdout, /^---\nname: tabs\n[\s\S]*Tabs\.\n$/);
    const ws = await runCli(["--root", root, "memory", "show", "--workspace", l.workspace]);
    assert.equal(ws.stdout, "- build.md: make\n- test.md: make test\n");
    const link = await runCli(["--root", root, "memory", "show", "leak.md"]);
    assert.equal(link.code, 1);
    assert.match(link.stderr, /Refusing to read ".*leak\.md": it is a symbolic link/);
    assert.ok(!(link.stdout + link.stderr).includes(SECRET));
    const up = await runCli(["--root", root, "memory", "show", "../../.vault.toml"]);
    assert.notEqual(up.code, 0);
    assert.ok(!(up.stdout + up.stderr).includes(SECRET));
    const missing = await runCli(["--root", root, "memory", "show", "nope.md"]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /does not exist/);
    const noScope = await runCli(["--root", root, "memory", "show", "--workspace", root]);
    assert.equal(noScope.code, 1);
    assert.match(noScope.stderr, /has no memory of workspace/);
  });
});

Deno.test("memory clear refuses without a terminal unless --yes, and removes links, not targets", async () => {
  await withRoot(async (root) => {
    const l = await seed(root);
    const refused = await runCli(["--root", root, "memory", "clear"]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /not clearing the user memory without confirmation.*pass --yes/);
    assert.ok(await Deno.lstat(join(l.user, "tabs.md")));
    const done = await runCli(["--root", root, "memory", "clear", "--yes"]);
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /Cleared the user memory of agent default_agent \(2 files removed/);
    assert.deepEqual((await Array.fromAsync(Deno.readDir(l.user))).map((e) => e.name), [
      "MEMORY.md",
    ]);
    assert.equal(await Deno.readTextFile(join(l.user, "MEMORY.md")), "");
    // An empty index says so rather than printing nothing.
    const empty = await runCli(["--root", root, "memory", "show"]);
    assert.equal(empty.code, 0, empty.stderr);
    assert.equal(empty.stdout, "");
    assert.equal(
      empty.stderr,
      "memory show: MEMORY.md of agent default_agent's user memory is empty (nothing saved yet)\n",
    );
    assert.match(await Deno.readTextFile(join(l.state, ".vault.toml")), new RegExp(SECRET));
    assert.equal(
      await Deno.readTextFile(join(l.wsDir, "MEMORY.md")),
      "- build.md: make\n- test.md: make test\n",
      "the workspace memory is another scope",
    );
    const ws = await runCli(["--root", root, "memory", "clear", "--workspace", l.workspace, "-y"]);
    assert.equal(ws.code, 0, ws.stderr);
    assert.equal(await Deno.readTextFile(join(l.wsDir, "MEMORY.md")), "");
    assert.equal(await Deno.readTextFile(join(l.wsDir, ".workspace")), `${l.workspace}\n`);
  });
});

Deno.test({
  name: "memory clear on a terminal asks: n keeps the memory, y clears it",
  ignore: !hasTmux,
  fn: async () => {
    await withRoot(async (root) => {
      const l = await seed(root);
      const dir = join(root, "pane");
      await Deno.mkdir(dir);
      const cases: [string, RegExp][] = [
        ["n", /^Not cleared\.\n\[exited 1\]$/m],
        ["y", /^Cleared the user memory[\s\S]*\[exited 0\]$/m],
      ];
      for (const [answer, outcome] of cases) {
        await answerQuestion(
          dir,
          ["--root", root, "memory", "clear"],
          /Clear the user memory of agent default_agent .*\? \[y\/N\] $/m,
          answer,
          outcome,
        );
        const left = (await Array.fromAsync(Deno.readDir(l.user))).length;
        assert.equal(left, answer === "n" ? 3 : 1, answer);
      }
    });
  },
});
