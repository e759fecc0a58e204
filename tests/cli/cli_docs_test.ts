// docs/cli.md is what scripts/gen_cli_docs.ts (`deno task docs`) makes of the command
// declarations and the notes in docs/cli/: the page is regenerated in memory and compared, so a
// flag, help text or note changed without regenerating fails here. The README stays short.
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI_DOC, renderCliDocs } from "../../scripts/gen_cli_docs.ts";
import { allCommands } from "../../lib/cli/registry.ts";
import { REPO } from "../support/cli.ts";
import { withTempDir } from "../support/roots.ts";

Deno.test("docs/cli.md is up to date with the flag declarations and docs/cli/*.md", async () => {
  const committed = await Deno.readTextFile(join(REPO, CLI_DOC));
  const fresh = await renderCliDocs(REPO);
  if (committed !== fresh) {
    const a = committed.split("\n");
    const b = fresh.split("\n");
    const at = a.findIndex((line, i) => line !== b[i]);
    assert.fail(
      `${CLI_DOC} is stale: run "deno task docs". First difference at line ${at + 1}:\n` +
        `committed: ${a[at]}\ngenerated: ${b[at]}`,
    );
  }
});

Deno.test("the generated reference has every command, its flags table, its help and its notes", async () => {
  await withTempDir("penguin-docs-gen-", async (root) => {
    await Deno.mkdir(join(root, "docs", "cli"), { recursive: true });
    await Deno.writeTextFile(join(root, "docs/cli/_intro.md"), "INTRO-NOTE\n");
    await Deno.writeTextFile(join(root, "docs/cli/trace.md"), "TRACE-GROUP-NOTE\n");
    await Deno.writeTextFile(join(root, "docs/cli/trace-show.md"), "TRACE-SHOW-NOTE\n");
    const page = await renderCliDocs(root);
    for (const c of await allCommands()) {
      const heading = new RegExp(`^#{2,3} \`penguin ${c.path.join(" ")}\`$`, "m");
      assert.match(page, heading, c.path.join(" "));
      assert.ok(page.includes(c.help.trimEnd()), `the help of ${c.path.join(" ")}`);
    }
    assert.match(page, /^\| `-m, --message <text>` \| the task;/m);
    assert.match(page, /^\| `--output <value>` \| .*an alias, not listed in the help/m);
    const [intro, group, show, stats] = ["INTRO-NOTE", "TRACE-GROUP-NOTE", "TRACE-SHOW-NOTE"]
      .concat("### `penguin trace stats`").map((s) => page.indexOf(s));
    assert.ok(intro! > 0 && intro! < page.indexOf("## `penguin run`"), "the intro opens the page");
    assert.ok(group! > page.indexOf("## `penguin trace validate|"), "the group note under it");
    assert.ok(show! > page.indexOf("### `penguin trace show`") && show! < stats!, "the command's");
  });
});

Deno.test("README.md is at most 250 lines, none over 160 characters", async () => {
  const lines = (await Deno.readTextFile(join(REPO, "README.md"))).split("\n");
  assert.ok(lines.length <= 250, `${lines.length} lines`);
  const long = lines.filter((l) => [...l].length > 160);
  assert.deepEqual(long, []);
});
