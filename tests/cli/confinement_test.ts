// Confinement through `penguin run` tool calls: the data root is invisible to
// every tool even when it lies inside the workspace, and a read-only sandbox
// stops the file tools as well as the commands.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addServerModel } from "../support/roots.ts";
import { type ScriptedTurn, startModelServer, turn } from "../support/model_server.ts";
import { inRoot, runCli } from "../support/cli.ts";
import { toolOutputsById } from "../agent/_subagent_support.ts";
import { visibleTempDir } from "../sandbox/_helpers.ts";
import { call } from "./_call_turn.ts";

type Server = Awaited<ReturnType<typeof startModelServer>>;

/** A scripted server whose turns can be appended to between runs. */
async function scriptedServer(turns: ScriptedTurn[]): Promise<Server & { queue: ScriptedTurn[] }> {
  const queue = [...turns];
  const server = await startModelServer({ handler: () => queue.shift(), maxRequests: 50 });
  return Object.assign(server, { queue });
}

async function configure(root: string, server: Server): Promise<void> {
  await addServerModel(root, server, { api_key: "sk-confine-test-key-0123456789" });
}

/** One test's directories and scripted server: the workspace, the data root and their parent. */
interface Confined {
  base: string;
  workspace: string;
  root: string;
  server: Awaited<ReturnType<typeof scriptedServer>>;
}

/**
 * Run `body` with a visible temp dir `base` holding the workspace `ws` (with `files` written
 * into it) and the data root (`data` beside it, or `pdata` inside the workspace with
 * `rootInWorkspace`), configured for a scripted server of `turns`; all removed afterwards.
 */
async function withConfined(
  prefix: string,
  turns: ScriptedTurn[],
  body: (c: Confined) => Promise<void>,
  opts: { rootInWorkspace?: boolean; files?: Record<string, string> } = {},
): Promise<void> {
  const base = await visibleTempDir(prefix);
  const workspace = join(base, "ws");
  const root = opts.rootInWorkspace ? join(workspace, "pdata") : join(base, "data");
  await Deno.mkdir(workspace);
  for (const [name, text] of Object.entries(opts.files ?? {})) {
    await Deno.writeTextFile(join(workspace, name), text);
  }
  const server = await scriptedServer(turns);
  try {
    await configure(root, server);
    await body({ base, workspace, root, server });
  } finally {
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
}

async function allFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) out.push(...await allFiles(p));
    else out.push(p);
  }
  return out;
}

Deno.test("a data root inside the workspace is invisible to the file tools and commands, and the session stays resumable", async () => {
  const turns = [turn.text("first")];
  await withConfined("penguin-confine-", turns, async ({ workspace: ws, root, server }) => {
    const first = await runCli(["--root", root, "run", "--workspace", ws, "-m", "one"]);
    assert.equal(first.code, 0, first.stderr);
    const traces = (await allFiles(root)).filter((p) => p.endsWith(".jsonl"));
    assert.equal(traces.length, 1);
    const trace = traces[0]!;
    const rel = trace.slice(ws.length + 1);
    const agentsMd = join(
      root,
      "default_project",
      "agents",
      "default_agent",
      "agent_state",
      "AGENTS.md",
    );
    const agentsBefore = await Deno.readTextFile(agentsMd);
    const traceBefore = await Deno.readTextFile(trace);

    server.queue.push(...[
      call("read_file", { file_path: rel }, "c_read"),
      call("write_file", { file_path: rel, content: "{}\n" }, "c_write"),
      call("edit_file", {
        file_path: agentsMd.slice(ws.length + 1),
        old_string: agentsBefore.slice(0, 10),
        new_string: "PWNED",
      }, "c_edit"),
      call("exec_command", {
        description: "look",
        cmd: `ls -A pdata; cat ${rel}; echo tamper >> ${rel}; echo done-looking`,
      }, "c_exec"),
      turn.text("second"),
    ]);
    const second = await runCli(["--root", root, "run", "--workspace", ws, "-m", "two"]);
    assert.equal(second.code, 0, second.stderr);
    const outputs = toolOutputsById(server.requests);
    assert.match(outputs.get("c_read")!, /not found|does not exist|outside/i);
    assert.doesNotMatch(outputs.get("c_read")!, /session_meta/);
    assert.doesNotMatch(outputs.get("c_exec")!, /session_meta/);
    assert.match(outputs.get("c_exec")!, /done-looking/);
    assert.equal(await Deno.readTextFile(agentsMd), agentsBefore, "AGENTS.md is unchanged");
    assert.ok(
      (await Deno.readTextFile(trace)).startsWith(traceBefore),
      "the first session's trace was not overwritten",
    );
    assert.doesNotMatch(await Deno.readTextFile(trace), /tamper/);

    // The first session is still resumable.
    const id = /"session_id":"(session-[^"]+)"/.exec(traceBefore)![1]!;
    server.queue.push(...[turn.text("resumed")]);
    const resumed = await runCli(["--root", root, "run", "--resume", id, "-m", "three"]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /resumed/);
  }, { rootInWorkspace: true });
});

Deno.test("--sandbox read-only stops write_file, edit_file and writing commands alike", async () => {
  const turns = [
    call("write_file", { file_path: "new.txt", content: "x\n" }, "c_write"),
    call("edit_file", {
      file_path: "keep.txt",
      old_string: "original",
      new_string: "changed",
    }, "c_edit"),
    call("exec_command", {
      description: "write",
      cmd: "echo y > made.txt; echo status=$?",
    }, "c_exec"),
    call("read_file", { file_path: "keep.txt" }, "c_read"),
    turn.text("done"),
  ];
  const files = { "keep.txt": "original\n" };
  await withConfined("penguin-confine-ro-", turns, async (c) => {
    const { workspace: ws, server } = c;
    const r = await runCli(inRoot(c, "run", "--sandbox", "read-only", "-m", "try to write"));
    assert.equal(r.code, 0, r.stderr);
    const outputs = toolOutputsById(server.requests);
    assert.match(outputs.get("c_write")!, /read-only/);
    assert.match(outputs.get("c_edit")!, /read-only/);
    assert.match(outputs.get("c_exec")!, /Read-only file system|status=1/);
    assert.match(outputs.get("c_read")!, /original/, "reading still works");
    assert.deepEqual((await Array.fromAsync(Deno.readDir(ws))).map((e) => e.name), ["keep.txt"]);
    assert.equal(await Deno.readTextFile(join(ws, "keep.txt")), "original\n");
  }, { files });
});

Deno.test('"sandbox": "read-only" in penguin.jsonc stops write_file', async () => {
  const turns = [
    call("write_file", { file_path: "new.txt", content: "x\n" }, "c_write"),
    turn.text("done"),
  ];
  const files = { "penguin.jsonc": '{ "sandbox": "read-only" }\n' };
  await withConfined("penguin-confine-jsonc-", turns, async (c) => {
    const { workspace: ws, server } = c;
    const r = await runCli(inRoot(c, "run", "-m", "write"));
    assert.equal(r.code, 0, r.stderr);
    assert.match(toolOutputsById(server.requests).get("c_write")!, /read-only/);
    assert.equal(await Deno.stat(join(ws, "new.txt")).then(() => true, () => false), false);
  }, { files });
});

Deno.test("a workspace inside the data root is refused before anything runs, naming both paths", async () => {
  const turns = [turn.text("never")];
  await withConfined("penguin-confine-inroot-", turns, async ({ root, server }) => {
    for (const ws of [root, join(root, "default_project")]) {
      const r = await runCli(["--root", root, "run", "--workspace", ws, "-m", "hi"]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /inside penguin's data root|is penguin's data root/);
      assert.ok(r.stderr.includes(await Deno.realPath(root)), r.stderr);
      assert.match(r.stderr, /--root/);
    }
    assert.equal(server.requests.length, 0);
    const traces = (await allFiles(root)).filter((p) => p.endsWith(".jsonl"));
    assert.deepEqual(traces, [], "no trace was written");
  });
});
