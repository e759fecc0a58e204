// A parent and its subagent children are one unit for `sessions tree`,
// `sessions delete`, `trace export`, `trace stats` and `sessions import`.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createAgent } from "../../lib/agent/mod.ts";
import { listSessionFiles } from "../../lib/trace/paths.ts";
import { item, type RecordedRequest, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { collect, type Sandbox, tracesDir } from "../agent/_support.ts";
import { turnOf, whose } from "../agent/_subagent_support.ts";
import { withModelRoot } from "../support/roots.ts";

interface Family {
  sb: Sandbox;
  parent: string;
  children: string[];
}

/** Run a parent that starts a foreground and a background child, both finished. */
async function withFamily(fn: (f: Family) => Promise<void>): Promise<void> {
  const handler = (req: RecordedRequest) => {
    const who = whose(req);
    if (who === "parent") {
      if (turnOf(req) > 0) return turn.text("parent done");
      return turn.of(
        item.toolCall("run_subagent", { description: "a", prompt: "[[a]] first child" }),
        item.toolCall("run_subagent", { description: "b", prompt: "[[b]] second child" }),
      );
    }
    return turn.text(`${who} answer`);
  };
  await withModelRoot({ handler, maxRequests: 20 }, async (sb) => {
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession({ workspaceDir: sb.workspace });
    const stream = await collect(session.run("[[parent]] go", { approve: "allow-all" }));
    await session.dispose();
    const children = [...new Set(stream.flatMap((m) => (m.origin ? [m.origin[0]!] : [])))];
    assert.equal(children.length, 2);
    await fn({ sb, parent: session.sessionId, children });
  });
}

async function files(root: string, id: string): Promise<string[]> {
  return (await listSessionFiles(tracesDir(root), id)).map((f) => f.path);
}

Deno.test("cli: sessions tree nests the children under their parent; sessions delete removes the family", async () => {
  await withFamily(async ({ sb, parent, children }) => {
    const tree = await runCli(["--root", sb.root, "sessions", "tree", children[0]!]);
    assert.equal(tree.code, 0, tree.stderr);
    const lines = tree.stdout.trimEnd().split("\n");
    assert.ok(lines[0]!.startsWith(`${parent}  `), tree.stdout);
    assert.deepEqual(
      lines.slice(1).map((l) => l.replace(/^[├└]─ \[subagent\] (\S+).*$/, "$1")).sort(),
      [...children].sort(),
    );
    const del = await runCli(["--root", sb.root, "sessions", "delete", parent, "--yes"]);
    assert.equal(del.code, 0, del.stderr);
    assert.match(del.stdout, new RegExp(`Deleted session ${parent} .* and 2 child session\\(s\\)`));
    for (const id of [parent, ...children]) assert.deepEqual(await files(sb.root, id), []);
  });
});

Deno.test("cli: trace export and trace stats of a parent take its children along", async () => {
  await withFamily(async ({ sb, parent, children }) => {
    const json = await runCli(["--root", sb.root, "trace", "export", parent, "--format", "json"]);
    assert.equal(json.code, 0, json.stderr);
    const conv = JSON.parse(json.stdout);
    assert.deepEqual(
      conv.subagents.map((s: { session: { session_id: string } }) => s.session.session_id).sort(),
      [...children].sort(),
    );
    for (const sub of conv.subagents) {
      assert.equal(sub.session.source, "subagent");
      assert.ok(
        sub.items.some((i: { kind: string; text?: string }) => i.text?.endsWith(" answer")),
      );
    }
    const md = await runCli(["--root", sb.root, "trace", "export", parent, "--format", "md"]);
    assert.equal(md.code, 0, md.stderr);
    for (const c of children) assert.ok(md.stdout.includes(`## Subagent session \`${c}\``));
    const html = await runCli(["--root", sb.root, "trace", "export", parent, "--format", "html"]);
    assert.equal(html.code, 0, html.stderr);
    for (const c of children) {
      assert.ok(html.stdout.includes(`<section class="subagent" id="subagent-${c}">`));
      assert.ok(html.stdout.includes(`<a href="#subagent-${c}">`));
    }

    const stats = await runCli(["--root", sb.root, "trace", "stats", parent, "--json"]);
    assert.equal(stats.code, 0, stats.stderr);
    const report = JSON.parse(stats.stdout);
    const keys = report.rows.map((r: { key: string }) => r.key);
    assert.equal(keys[0], parent);
    assert.deepEqual(keys.slice(1).sort(), [...children].sort());
    const sum = report.rows.reduce((n: number, r: { requests: number }) => n + r.requests, 0);
    assert.equal(report.total.requests, sum);
    assert.equal(report.total.requests, 4, "two parent requests and one per child");
  });
});

Deno.test("cli: importing a parent brings its children along, and renamed ids keep the pointers resolving", async () => {
  await withFamily(async ({ sb, parent, children }) => {
    const dest = join(sb.root, "..", "dest");
    const source = (await files(sb.root, parent))[0]!;
    for (const round of [1, 2]) {
      // The second import is a copy (--again: the family is already here).
      const again = round === 2 ? ["--again"] : [];
      const r = await runCli(["--root", dest, "sessions", "import", ...again, source, "--json"]);
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout);
      assert.equal(report.imported.length, 3, "the parent and both children");
      assert.deepEqual(report.missing_children, []);
      const imported = new Map<string, { session_id: string; renamed: boolean; child_of?: string }>(
        report.imported.map((s: { original_id: string }) => [s.original_id, s]),
      );
      for (const c of children) assert.equal(imported.get(c)!.child_of, parent);
      // The second import renames every member: pointers follow.
      for (const s of imported.values()) assert.equal(s.renamed, round === 2);
      const newParent = imported.get(parent)!.session_id;
      const tree = await runCli(["--root", dest, "sessions", "tree", newParent, "--json"]);
      assert.equal(tree.code, 0, tree.stderr);
      const [root] = JSON.parse(tree.stdout);
      assert.equal(root.session_id, newParent);
      assert.deepEqual(
        root.children.map((c: { session_id: string }) => c.session_id).sort(),
        children.map((c) => imported.get(c)!.session_id).sort(),
      );
      const childFile = (await listSessionFiles(
        join(dest, "default_project", "agents", "default_agent", "traces"),
        imported.get(children[0]!)!.session_id,
      ))[0]!.path;
      const first = JSON.parse((await Deno.readTextFile(childFile)).split("\n")[0]!);
      assert.equal(first.payload.parent.session_id, newParent);
    }
    const validate = await runCli(["trace", "validate", dest]);
    assert.equal(validate.code, 0, validate.stdout + validate.stderr);
  });
});

Deno.test("cli: --no-children leaves the children out of export, stats and import", async () => {
  await withFamily(async ({ sb, parent, children }) => {
    const json = await runCli([
      "--root",
      sb.root,
      "trace",
      "export",
      parent,
      "--format",
      "json",
      "--no-children",
    ]);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout).subagents ?? [], []);
    const stats = await runCli([
      "--root",
      sb.root,
      "trace",
      "stats",
      parent,
      "--json",
      "--no-children",
    ]);
    assert.equal(stats.code, 0, stats.stderr);
    const report = JSON.parse(stats.stdout);
    assert.deepEqual(report.rows.map((r: { key: string }) => r.key), [parent]);
    assert.equal(report.total.requests, 2, "only the parent's two requests");
    const dest = join(sb.root, "..", "dest-alone");
    const source = (await files(sb.root, parent))[0]!;
    const imp = await runCli([
      "--root",
      dest,
      "sessions",
      "import",
      source,
      "--json",
      "--no-children",
    ]);
    assert.equal(imp.code, 0, imp.stderr);
    const imported = JSON.parse(imp.stdout).imported.map((s: { original_id: string }) =>
      s.original_id
    );
    assert.deepEqual(imported, [parent]);
    for (const c of children) assert.ok(!imported.includes(c));
  });
});
