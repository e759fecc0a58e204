// `penguin run` and `penguin chat` when the trace cannot be written (real OS
// errors): the task stops with one clear line naming the trace file and the
// error, exit 1, and the command the model asked for never runs.
import assert from "node:assert/strict";
import { join } from "node:path";
import { dateDirName, listSessionFiles } from "../../lib/trace/paths.ts";
import { readTraceFile } from "../../lib/trace/reader.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { type CliResult, inRoot, runCli } from "../support/cli.ts";
import { makeRoot, tracesDir } from "../agent/_support.ts";
import { canMount, fillDisk, mountTmpfs, umount } from "../support/tmpfs.ts";

/** The stderr lines that are not the run header or a sandbox/permission notice. */
function problemLines(stderr: string): string[] {
  return stderr.split("\n").filter((l) =>
    l !== "" && !/^(penguin run v|Agent: |Workspace: |Model: |Session: )/.test(l)
  );
}

function assertOneTraceError(r: CliResult, cause: RegExp): void {
  assert.equal(r.code, 1, r.stderr);
  const lines = problemLines(r.stderr);
  assert.equal(lines.length, 1, r.stderr);
  assert.match(
    lines[0]!,
    /^penguin: Cannot (open|append to) trace "\/.+\/session-[^"]+_001\.jsonl"/,
  );
  assert.match(lines[0]!, cause);
  assert.match(lines[0]!, /was stopped so that nothing runs unrecorded$/);
}

Deno.test("run and chat stop with exit 1 and one line when the trace directory cannot be created", async () => {
  for (const command of ["run", "chat"]) {
    const server = await startModelServer({
      turns: [turn.toolCall("exec_command", { cmd: "touch ran.txt" }), turn.text("done")],
    });
    const sb = await makeRoot(server);
    try {
      // The date directory (today's, and tomorrow's should the test cross midnight) is a file.
      await Deno.mkdir(tracesDir(sb.root), { recursive: true });
      for (const day of [new Date(), new Date(Date.now() + 86_400_000)]) {
        await Deno.writeTextFile(join(tracesDir(sb.root), dateDirName(day)), "not a dir\n");
      }
      const r = command === "run"
        ? await runCli(inRoot(sb, "run", "-m", "Touch."))
        : await runCli(["--root", sb.root, "chat", "--workspace", sb.workspace], {
          stdin: "Touch.\nAnd again.\n",
        });
      assertOneTraceError(r, /: Not a directory \(os error 20\)/);
      await assert.rejects(Deno.stat(join(sb.workspace, "ran.txt")), Deno.errors.NotFound);
      assert.ok(server.requests.length <= 1, "nothing after the failure");
    } finally {
      await server.close();
      await sb.cleanup();
    }
  }
});

/** Resolve once a trace file under `dir` contains `needle` (bounded). */
async function waitForRecord(dir: string, needle: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    for await (const day of Deno.readDir(dir)) {
      if (!day.isDirectory || day.name.startsWith(".")) continue;
      for await (const f of Deno.readDir(join(dir, day.name))) {
        if ((await Deno.readTextFile(join(dir, day.name, f.name))).includes(needle)) return;
      }
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no trace record ${needle} under ${dir}`);
}

Deno.test({
  name: "run with a disk that fills up before the tool call is recorded never runs the command",
  ignore: !(await canMount()),
  async fn() {
    const traces = { dir: "" };
    const server = await startModelServer({
      handler: async (_req, index) => {
        if (index > 0) return turn.text("done");
        // Once request_begin is on disk, the disk fills while the model answers: the
        // tool_call record (several pages long) cannot land.
        await waitForRecord(traces.dir, '"type":"request_begin"');
        await fillDisk(join(traces.dir, "filler"));
        return turn.toolCall("exec_command", {
          cmd: "touch ran.txt",
          description: `touch a marker ${"x".repeat(16 * 1024)}`,
        });
      },
    });
    const sb = await makeRoot(server);
    traces.dir = tracesDir(sb.root);
    await mountTmpfs(traces.dir, "4m");
    try {
      const r = await runCli(inRoot(sb, "run", "-m", "Touch."));
      assertOneTraceError(r, /: No space left on device \(os error 28\)/);
      await assert.rejects(Deno.stat(join(sb.workspace, "ran.txt")), Deno.errors.NotFound);
      assert.equal(server.requests.length, 1);
      const sid = /Session: (session-\S+)/.exec(r.stderr)![1]!;
      const [file] = await listSessionFiles(traces.dir, sid);
      const kinds = (await readTraceFile(file!.path)).records.map((x) =>
        x.message.type === "session_meta" ? "session_meta" : x.message.payload.type
      );
      assert.deepEqual(kinds, ["session_meta", "text", "tool_list_ready", "request_begin"]);
    } finally {
      await umount(traces.dir);
      await server.close();
      await sb.cleanup();
    }
  },
});
