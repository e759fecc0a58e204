import assert from "node:assert/strict";
import { join } from "node:path";
import { PenguinError } from "../../lib/protocol/mod.ts";
import { resolveTarget, resolveTargets } from "../../lib/inspect/targets.ts";
import {
  agentIdOf,
  findRelative,
  projectConfigPathOf,
  readSessionMeta,
} from "../../lib/trace/mod.ts";
import {
  fixtureFiles,
  FIXTURES,
  fixturesPresent,
  sid,
  traceBuilder,
  tracesDay,
  withTempDir,
} from "./_support.ts";

Deno.test({
  name: "a directory target groups files into sessions by name, else by their session_meta",
  ignore: !fixturesPresent,
  async fn() {
    const sessions = await resolveTargets([FIXTURES]);
    const byKey = new Map(sessions.map((s) => [s.key, s.files.map((f) => f.path)]));
    assert.deepEqual(byKey.get("04-compaction"), [
      join(FIXTURES, "04-compaction_001.jsonl"),
      join(FIXTURES, "04-compaction_002.jsonl"),
    ]);
    const metaIds = await Promise.all(
      fixtureFiles().filter((f) => !f.includes("04-compaction")).map(async (f) =>
        (await readSessionMeta(f))!.session_id
      ),
    );
    for (const id of metaIds) assert.equal(byKey.get(id)?.length, 1, id);
    assert.equal(sessions.length, metaIds.length + 1);
    // A file target is that file alone.
    const one = await resolveTarget(join(FIXTURES, "04-compaction_002.jsonl"));
    assert.deepEqual(one.map((s) => s.files.length), [1]);
  },
});

Deno.test({
  name: "a subagent child is found next to its parent by its session_meta",
  ignore: !fixturesPresent,
  async fn() {
    const parent = join(FIXTURES, "05-subagent-parent.jsonl");
    const child = join(FIXTURES, "05-subagent-child.jsonl");
    const id = (await readSessionMeta(child))!.session_id;
    const found = await findRelative(parent, id);
    assert.deepEqual(found?.files.map((f) => f.path), [child]);
    assert.equal(await findRelative(parent, sid("deadbeef")), null);
  },
});

Deno.test("a session id is looked up in the data root, also by a unique prefix or suffix", async () => {
  await withTempDir(async (root) => {
    const d1 = await tracesDay(root, "2026-03-04");
    const d2 = await tracesDay(root, "2026-03-05");
    const a = sid("abcd1234");
    await Deno.writeTextFile(join(d1, `${a}_001.jsonl`), traceBuilder(a).meta().jsonl());
    await Deno.writeTextFile(join(d2, `${a}_002.jsonl`), traceBuilder(a).meta().jsonl());
    await Deno.writeTextFile(
      join(d1, `${sid("abcd9999")}_001.jsonl`),
      traceBuilder(sid("abcd9999")).meta().jsonl(),
    );
    const [exact] = await resolveTarget(a, { root });
    assert.deepEqual(exact!.files.map((f) => f.index), [1, 2]);
    const [bySuffix] = await resolveTarget("abcd1234", { root });
    assert.equal(bySuffix!.key, a);
    await assert.rejects(
      resolveTarget("abcd", { env: (n) => (n === "PENGUIN_HOME" ? root : undefined) }),
      (e) =>
        e instanceof PenguinError && e.kind === "usage" && /matches 2 sessions/.test(e.message),
    );
    await assert.rejects(
      resolveTarget("ffffffff", { root }),
      (e) => e instanceof PenguinError && e.kind === "not_found",
    );
  });
});

Deno.test("inside a data root only agents' trace directories are searched", async () => {
  await withTempDir(async (root) => {
    const id = sid("0000aaaa");
    await Deno.writeTextFile(
      join(await tracesDay(root), `${id}_001.jsonl`),
      traceBuilder(id).meta().jsonl(),
    );
    const agent = join(root, "default_project", "agents", "default_agent");
    for (const d of ["scratchpad/s1", "workspaces/tmp-1", "agent_state/memory"]) {
      await Deno.mkdir(join(agent, d), { recursive: true });
      await Deno.writeTextFile(join(agent, d, "data.jsonl"), "{}\n");
    }
    for (const target of [root, join(root, "default_project"), agent]) {
      const sessions = await resolveTargets([target]);
      assert.deepEqual(sessions.map((s) => s.key), [id], target);
    }
  });
});

Deno.test("a trace under <proj>/agents/<agent>/traces/<day> is priced by <proj>/.project_config.toml", () => {
  const path = "/data/proj1/agents/helper/traces/2026-03-04/s_001.jsonl";
  assert.equal(projectConfigPathOf(path), "/data/proj1/.project_config.toml");
  assert.equal(projectConfigPathOf("/tmp/x/s_001.jsonl"), null);
  assert.equal(agentIdOf(null, path), "helper");
  assert.equal(
    agentIdOf({ agent_state: "/d/p/agents/coder/agent_state" } as never, "/tmp/x.jsonl"),
    "coder",
  );
  assert.equal(agentIdOf(null, "/tmp/x.jsonl"), null);
});
