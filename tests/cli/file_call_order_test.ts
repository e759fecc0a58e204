// Several file-tool calls on one file in one response run in the order the model made them: a
// model that edits one file twelve times in one response (models do make parallel edits) gets
// every edit, not only the last writer's, and a read_file after a write_file in the same response
// reads what was written. Before, every allowed call started at once and the tool worker pool ran
// four of them side by side, so edits of one file raced and all but one could be lost.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";
import { runCli } from "../support/cli.ts";

const EDITS = 12;

Deno.test("twelve edit_file calls on one file in one response all land, in order", async () => {
  const edits = Array.from({ length: EDITS }, (_, i) =>
    item.toolCall("edit_file", {
      file_path: "notes.txt",
      old_string: `slot${i}=old`,
      new_string: `slot${i}=new`,
    }));
  const server = await startModelServer({
    turns: [
      turn.of(
        item.toolCall("write_file", { file_path: "fresh.txt", content: "written first\n" }),
        item.toolCall("read_file", { file_path: "fresh.txt" }),
        ...edits,
      ),
      turn.text("done"),
    ],
  });
  const sb = await makeRoot(server, { visible: true });
  try {
    // A file large enough that reading and writing it takes a while, so racing edits overlap.
    const filler = "filler line\n".repeat(200_000);
    const slots = Array.from({ length: EDITS }, (_, i) => `slot${i}=old\n`).join("");
    await Deno.writeTextFile(join(sb.workspace, "notes.txt"), slots + filler);
    const r = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const text = await Deno.readTextFile(join(sb.workspace, "notes.txt"));
    for (let i = 0; i < EDITS; i++) {
      assert.ok(text.includes(`slot${i}=new\n`), `edit ${i} was lost:\n${text.slice(0, 400)}`);
    }
    assert.ok(text.endsWith(filler));
    // The read that follows the write in the same response saw the written text.
    const bodies = server.requests.map((q) => JSON.stringify(q.body)).join("\n");
    assert.match(bodies, /written first/);
  } finally {
    await server.close();
    await sb.cleanup();
  }
});
