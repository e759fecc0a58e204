// A tool call of megabytes counts its arguments as large garbage once it has run
// (`largeGarbage`, lib/state/_gc.ts): their parse, what went to the tool host and back and the
// checks' views are garbage then, and V8 frees such objects only in a full collection (attack
// round 25 bounded C16: eight subagents each writing a 1.9 MB file took penguin to 334–359 MB).
// Alone in its file: the process's count of large garbage starts at zero.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createAgent } from "../../lib/agent/mod.ts";
import { fullCollections } from "../../lib/state/_gc.ts";
import { turn } from "../support/model_server.ts";
import { withModelRoot } from "../support/roots.ts";
import { collect } from "./_support.ts";

const MiB = 1024 * 1024;

const FILES = [0, 1, 2, 3, 4, 5];
const SIZE = Math.floor(1.9 * MiB); // within a call's bound on its arguments (2 MiB)

Deno.test("six write_file calls of 1.9 MiB run a full collection once they have run", async () => {
  const content = "x".repeat(SIZE);
  // One call a response (a response's calls hold 4 MiB at most), streamed in 16 KiB pieces: no
  // single event is large enough to be counted itself.
  const turns = [
    ...FILES.map((i) => ({
      ...turn.toolCall("write_file", { file_path: `big-${i}.txt`, content }),
      chunk: 16 * 1024,
    })),
    turn.text("written"),
  ];
  await withModelRoot({ turns }, async (sb) => {
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession({ workspaceDir: sb.workspace });
    const before = fullCollections();
    await collect(session.run("write them", { approve: "allow-all" }));
    const ran = fullCollections() - before;
    await session.dispose();
    for (const i of FILES) {
      assert.equal((await Deno.stat(join(sb.workspace, `big-${i}.txt`))).size, SIZE);
    }
    // 11.4 MiB of arguments: the trace's records count as much (under the 32 MiB of a
    // collection), the calls four times as much again.
    assert.ok(ran >= 1, `${ran} full collections after 11.4 MiB of tool call arguments`);
  });
});
