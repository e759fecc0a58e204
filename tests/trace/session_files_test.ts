import assert from "node:assert/strict";
import { join } from "node:path";
import { eventMsg, modelMsg, userText } from "../../lib/protocol/mod.ts";
import {
  findRelative,
  groupSessions,
  type RelativesCache,
  validateTraceFiles,
  walkTraceFiles,
} from "../../lib/trace/mod.ts";
import { meta, sessionId, toJsonl, withTempDir } from "./_support.ts";

const PARENT = sessionId("aaaa0001");
const CHILD = sessionId("cccc0002");

/** A parent trace whose only request spawned `child`. */
function parentTrace(child: string): string {
  return toJsonl([
    meta(PARENT),
    modelMsg(userText("delegate")),
    eventMsg({ type: "subagent", session_id: child }),
  ]);
}

async function put(path: string, text: string): Promise<string> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, text);
  return path;
}

function tracesOf(root: string, agent: string): string {
  return join(root, "proj", "agents", agent, "traces");
}

Deno.test("a child's files are found by name in the parent's traces tree, across date directories, by index", async () => {
  await withTempDir(async (root) => {
    const traces = tracesOf(root, "main");
    const parent = await put(join(traces, "2026-01-02", `${PARENT}_001.jsonl`), parentTrace(CHILD));
    const second = await put(
      join(traces, "2026-01-03", `${CHILD}_002.jsonl`),
      toJsonl([meta(CHILD)]),
    );
    const first = await put(
      join(traces, "2026-01-02", `${CHILD}_001.jsonl`),
      toJsonl([meta(CHILD)]),
    );
    assert.deepEqual(await findRelative(parent, CHILD), {
      key: CHILD,
      files: [{ path: first, index: 1 }, { path: second, index: 2 }],
    });
    assert.equal(await findRelative(parent, sessionId("dddd0003")), null);
  });
});

Deno.test("a child that runs as another agent is found in that agent's traces directory", async () => {
  await withTempDir(async (root) => {
    const parent = await put(
      join(tracesOf(root, "main"), "2026-01-02", `${PARENT}_001.jsonl`),
      parentTrace(CHILD),
    );
    const child = await put(
      join(tracesOf(root, "helper"), "2026-01-02", `${CHILD}_001.jsonl`),
      toJsonl([meta(CHILD)]),
    );
    assert.deepEqual((await findRelative(parent, CHILD))?.files, [{ path: child, index: 1 }]);
    // The validator uses the same lookup: the pointer is satisfied.
    const report = await validateTraceFiles([parent]);
    assert.deepEqual(report.problems.filter((p) => p.reason.startsWith("subagent")), []);
  });
});

Deno.test("a loose child file is found next to its parent by its session_meta, and a missing one is a validation problem", async () => {
  await withTempDir(async (dir) => {
    const parent = await put(join(dir, "parent.jsonl"), parentTrace(CHILD));
    const child = await put(join(dir, "sub", "child.jsonl"), toJsonl([meta(CHILD)]));
    assert.deepEqual(await findRelative(parent, CHILD), {
      key: CHILD,
      files: [{ path: child, index: null }],
    });
    await Deno.remove(child);
    assert.equal(await findRelative(parent, CHILD), null);
    const report = await validateTraceFiles([parent]);
    assert.deepEqual(report.problems.map((p) => [p.line, p.reason.split(":")[0]]), [
      [3, "subagent"],
    ]);
  });
});

Deno.test("a cache passed to repeated lookups answers them from what the first one read", async () => {
  await withTempDir(async (dir) => {
    const parent = await put(join(dir, "parent.jsonl"), parentTrace(CHILD));
    const child = await put(join(dir, "child.jsonl"), toJsonl([meta(CHILD)]));
    const cache: RelativesCache = new Map();
    const first = await findRelative(parent, CHILD, cache);
    await Deno.remove(child);
    assert.deepEqual(await findRelative(parent, CHILD, cache), first);
    assert.equal(await findRelative(parent, CHILD), null);
  });
});

Deno.test("inside a data root, files in an agent's scratchpad or workspaces are not traces", async () => {
  await withTempDir(async (root) => {
    const traces = tracesOf(root, "main");
    const trace = await put(
      join(traces, "2026-01-02", `${PARENT}_001.jsonl`),
      toJsonl([meta(PARENT)]),
    );
    const agent = join(root, "proj", "agents", "main");
    await Deno.mkdir(join(agent, "agent_state"), { recursive: true });
    await put(join(agent, "scratchpad", "s1", "data.jsonl"), "{}\n");
    assert.deepEqual(await walkTraceFiles(root), [trace]);
    // `trace validate <root>` checks the same files.
    const report = await validateTraceFiles([root]);
    assert.deepEqual(report.files.map((f) => f.file), [trace]);
    assert.deepEqual(await groupSessions([trace]), [
      { key: PARENT, files: [{ path: trace, index: 1 }] },
    ]);
  });
});
