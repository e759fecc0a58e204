import assert from "node:assert/strict";
import { join } from "node:path";
import {
  buildOutline,
  importTraces,
  listSessions,
  locateSession,
  resumeTrace,
} from "../../lib/session/mod.ts";
import {
  fixture,
  FIXTURES,
  jsonl,
  records,
  scope,
  Script,
  sid,
  treeDigest,
  withRoot,
} from "./_support.ts";

/** The scope of `root`, importing into `root` as the workspace named with --workspace. */
const into = (root: string) => ({
  ...scope(root),
  workspace: { path: root, from: "--workspace" as const },
});

async function allFixtures(): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(FIXTURES)) {
    if (e.name.endsWith(".jsonl")) out.push(join(FIXTURES, e.name));
  }
  return out.sort();
}

function lines(text: string): string[] {
  return text.split("\n").filter((l) => l !== "");
}

Deno.test("every PenguinHarness fixture imports verbatim, then lists and shows", async () => {
  await withRoot(async (root) => {
    const files = await allFixtures();
    const report = await importTraces(files, into(root));
    assert.equal(report.ok, true);
    assert.deepEqual(report.refused, []);
    assert.deepEqual(report.skipped, []);
    assert.equal(report.imported.length, 6); // the two compaction files are one session
    for (const s of report.imported) {
      assert.equal(s.renamed, false);
      for (const f of s.files) {
        const src = lines(await Deno.readTextFile(f.source));
        const dst = lines(await Deno.readTextFile(f.path));
        assert.deepEqual(dst.slice(1), src.slice(1));
        const meta = JSON.parse(dst[0]!);
        const srcMeta = JSON.parse(src[0]!);
        assert.deepEqual(meta.payload.imported_from, {
          path: f.source,
          session_id: s.originalId,
          recorded_workspace: srcMeta.payload.workspace,
          workspace_from: "--workspace",
        });
        // It works where the import chose, not where its file said.
        assert.equal(meta.payload.workspace, root);
        delete meta.payload.imported_from;
        meta.payload.workspace = srcMeta.payload.workspace;
        assert.deepEqual(meta, srcMeta);
        const { meta: _a, ...a } = resumeTrace(await records(f.path));
        const { meta: _b, ...b } = resumeTrace(await records(f.source));
        assert.deepEqual(a, b);
      }
    }
    const rows = await listSessions(scope(root));
    assert.deepEqual(
      rows.map((r) => r.sessionId).sort(),
      report.imported.map((s) => s.sessionId).sort(),
    );
    for (const row of rows) {
      const outline = await buildOutline(
        await locateSession({ ...scope(root), target: row.sessionId }),
      );
      assert.equal(outline.meta?.session_id, row.sessionId);
      assert.deepEqual(outline.problems, []);
      assert.equal(outline.tokens?.total, row.tokens);
      assert.equal(outline.turns, row.turns);
    }
  });
});

Deno.test("a multi-file session imports as one session with its files in index order", async () => {
  await withRoot(async (root) => {
    const report = await importTraces(
      [fixture("04-compaction_002.jsonl"), fixture("04-compaction_001.jsonl")],
      into(root),
    );
    assert.equal(report.imported.length, 1);
    const [s] = report.imported;
    assert.deepEqual(s!.files.map((f) => f.source), [
      fixture("04-compaction_001.jsonl"),
      fixture("04-compaction_002.jsonl"),
    ]);
    const located = await locateSession({ ...scope(root), target: s!.sessionId });
    assert.deepEqual(located.files.map((f) => f.index), [1, 2]);
    assert.equal(located.latest.path, s!.files[1]!.path);
  });
});

Deno.test("an id that already exists gets a new id; the existing session is untouched", async () => {
  await withRoot(async (root) => {
    const first = await importTraces([fixture("01-simple.jsonl")], into(root));
    const before = await treeDigest(root);
    const again = await importTraces([fixture("01-simple.jsonl")], into(root));
    const original = first.imported[0]!.sessionId;
    const copy = again.imported[0]!;
    assert.equal(copy.renamed, true);
    assert.equal(copy.originalId, original);
    assert.notEqual(copy.sessionId, original);
    assert.equal(copy.sessionId.slice(0, -8), original.slice(0, -8)); // same creation time
    const [meta] = await records(copy.files[0]!.path);
    assert.ok(meta?.type === "session_meta");
    assert.equal(meta.payload.session_id, copy.sessionId);
    assert.deepEqual(meta.payload.imported_from, {
      path: fixture("01-simple.jsonl"),
      session_id: original,
      recorded_workspace: "/tmp/penguin-fixtures/ws-simple",
      workspace_from: "--workspace",
    });
    const after = await treeDigest(root);
    for (const [k, v] of Object.entries(before)) assert.equal(after[k], v);
  });
});

async function damaged(dir: string): Promise<string> {
  const s = new Script();
  const id = sid("dadadada");
  const path = join(dir, "damaged.jsonl");
  await Deno.writeTextFile(
    path,
    jsonl([s.meta(id), s.user("go")]) + "this is not json\n" +
      jsonl([
        s.model({ type: "text", role: "assistant", text: "x", stop_reason: "nope" } as never),
        s.begin(),
        s.say("ok"),
        s.end(),
      ]),
  );
  return path;
}

Deno.test("a strict import refuses a damaged file with file:line: reason errors and writes nothing", async () => {
  await withRoot(async (root) => {
    const path = await damaged(root);
    const report = await importTraces([path], into(root));
    assert.equal(report.ok, false);
    assert.equal(report.imported.length, 0);
    assert.equal(report.refused.length, 1);
    const errs = report.refused[0]!.errors;
    assert.equal(errs.length, 2);
    assert.ok(errs[0]!.startsWith(`${path}:3: `));
    assert.ok(errs[1]!.startsWith(`${path}:4: `));
    assert.deepEqual(await listSessions(scope(root)), []);
  });
});

Deno.test("a lenient import skips the bad lines and reports each", async () => {
  await withRoot(async (root) => {
    const path = await damaged(root);
    const report = await importTraces([path], { ...into(root), lenient: true });
    assert.equal(report.ok, true);
    assert.equal(report.skipped.length, 2);
    assert.ok(report.skipped.every((l) => l.startsWith(`${path}:`) && l.endsWith("(skipped)")));
    const dst = lines(await Deno.readTextFile(report.imported[0]!.files[0]!.path));
    const src = lines(await Deno.readTextFile(path));
    assert.deepEqual(dst.slice(1), [src[1], src[4], src[5], src[6]]);
  });
});

Deno.test("a file whose first record is not a session_meta is refused even when lenient", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const path = join(root, "headless.jsonl");
    await Deno.writeTextFile(path, jsonl([s.user("go"), s.meta(sid("abababab"))]));
    const report = await importTraces([path], { ...into(root), lenient: true });
    assert.equal(report.imported.length, 0);
    assert.match(report.refused[0]!.errors[0]!, /:1: expected a session_meta as the first record/);
  });
});

Deno.test("streaming partials, origin-tagged records and extra metas are import problems", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("acacacac");
    const path = join(root, "odd.jsonl");
    const partial = {
      timestamp: "2026-01-02T03:04:05.000Z",
      type: "model_msg",
      payload: {
        type: "partial_text",
        role: "assistant",
        event_type: "delta",
        text: "h",
        stop_reason: "completed",
      },
    };
    const origin = s.model(
      { type: "text", role: "assistant", text: "c", stop_reason: "completed" },
      ["x"],
    );
    await Deno.writeTextFile(
      path,
      jsonl([s.meta(id), s.user("go"), partial as never, origin, s.meta(id)]),
    );
    const strict = await importTraces([path], into(root));
    assert.deepEqual(strict.refused[0]!.errors.map((e) => e.split(": ")[0]), [
      `${path}:3`,
      `${path}:4`,
      `${path}:5`,
    ]);
    const lenient = await importTraces([path], { ...into(root), lenient: true });
    assert.equal(lenient.imported[0]!.files[0]!.records, 2);
  });
});
