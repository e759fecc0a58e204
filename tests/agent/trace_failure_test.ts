// A trace that cannot be written stops the session: nothing runs unrecorded,
// and `run` rejects with one error naming the trace file and the cause.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createAgent } from "../../lib/agent/mod.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { dateDirName } from "../../lib/trace/paths.ts";
import { item, turn } from "../support/model_server.ts";
import { collect, readSession, tracesDir } from "./_support.ts";
import { withModelRoot } from "../support/roots.ts";

const TOOL_CALL_RECORD = '"payload":{"type":"tool_call",';

/**
 * Make every `Deno.FsFile.write` of a `tool_call` record fail the way a full
 * disk does, for the duration of `body` (the writer's only way out to the OS).
 */
async function withFullDiskAtToolCalls(body: () => Promise<void>): Promise<void> {
  const proto = Deno.FsFile.prototype;
  const original = proto.write;
  proto.write = function (this: Deno.FsFile, p: Uint8Array): Promise<number> {
    if (new TextDecoder().decode(p).includes(TOOL_CALL_RECORD)) {
      return Promise.reject(new Error("No space left on device (os error 28)"));
    }
    return original.call(this, p);
  };
  try {
    await body();
  } finally {
    proto.write = original;
  }
}

Deno.test("a tool call whose record cannot be appended never runs, and run rejects with the trace error", async () => {
  await withModelRoot({
    turns: [
      turn.of(
        item.toolCall("exec_command", { cmd: "touch ran.txt" }, { id: "c1" }),
        item.toolCall("write_file", { file_path: "also.txt", content: "x" }, { id: "c2" }),
      ),
      turn.text("done"),
    ],
  }, async (sb, server) => {
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession({ workspaceDir: sb.workspace });
    try {
      await withFullDiskAtToolCalls(async () => {
        await assert.rejects(
          collect(session.run("Touch it.", { approve: "allow-all" })),
          (e) =>
            e instanceof PenguinError && e.kind === "runtime" &&
            e.message.startsWith(`Cannot append to trace "${session.tracePath}": `) &&
            e.message.includes("No space left on device (os error 28)") &&
            e.message.endsWith(
              `; session ${session.sessionId} was stopped so that nothing runs unrecorded`,
            ),
        );
      });
      assert.equal(session.traceFailure?.kind, "runtime");
      // The session runs nothing more.
      await assert.rejects(collect(session.run("Again.")), (e) => e === session.traceFailure);
    } finally {
      await session.dispose();
    }
    await assert.rejects(Deno.stat(join(sb.workspace, "ran.txt")), Deno.errors.NotFound);
    await assert.rejects(Deno.stat(join(sb.workspace, "also.txt")), Deno.errors.NotFound);
    assert.equal(server.requests.length, 1, "no request after the failure");
    // Nothing lands after the gap: the trace stops before the first unwritable record.
    const kinds = (await readSession(sb.root, session.sessionId)).map((m) =>
      m.type === "session_meta" ? m.type : m.payload.type
    );
    assert.deepEqual(kinds, ["session_meta", "text", "tool_list_ready", "request_begin"]);
  });
});

Deno.test("a trace whose directory cannot be created stops the task before any tool runs", async () => {
  await withModelRoot({
    turns: [turn.toolCall("exec_command", { cmd: "touch ran.txt" }), turn.text("done")],
  }, async (sb) => {
    // Today's date directory (and tomorrow's, should the test cross midnight) is a plain
    // file: every append fails with ENOTDIR.
    await Deno.mkdir(tracesDir(sb.root), { recursive: true });
    const blocker = join(tracesDir(sb.root), dateDirName());
    for (const day of [new Date(), new Date(Date.now() + 86_400_000)]) {
      await Deno.writeTextFile(join(tracesDir(sb.root), dateDirName(day)), "not a directory\n");
    }
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession({ workspaceDir: sb.workspace });
    try {
      await assert.rejects(
        collect(session.run("Touch it.", { approve: "allow-all" })),
        (e) =>
          e instanceof PenguinError &&
          e.message.startsWith(`Cannot open trace "${session.tracePath}" for appending: `) &&
          /Not a directory|File exists/.test(e.message),
      );
    } finally {
      await session.dispose();
    }
    await assert.rejects(Deno.stat(join(sb.workspace, "ran.txt")), Deno.errors.NotFound);
    assert.equal(await Deno.readTextFile(blocker), "not a directory\n");
  });
});
