// A stand-in record penguin did not write must not make it remove a user's file: a model that made
// a later penguin's run directory before it was used forged a record naming a file outside every
// workspace with that file's identity (readable by stat), and the later penguin's sweep removed it
// (attack round 25 concgit c09). A file is removed as a stand-in only while it holds exactly the
// stand-in's content.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer, turn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";
import { runCli } from "../support/cli.ts";

Deno.test("a forged stand-in record naming a user's file outside the workspace removes nothing", async () => {
  const server = await startModelServer({
    turns: [turn.toolCall("exec_command", { cmd: "echo ran-$((40 + 2))" }), turn.text("done")],
  });
  const sb = await makeRoot(server, { visible: true });
  try {
    const victim = join(sb.base, "elsewhere", "important.txt");
    await Deno.mkdir(join(sb.base, "elsewhere"));
    await Deno.writeTextFile(victim, "the user's file\n");
    const info = await Deno.stat(victim);
    const run = join(sb.base, "run");
    await Deno.mkdir(join(run, "stand-ins"), { recursive: true, mode: 0o700 });
    await Deno.chmod(run, 0o700);
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(victim));
    const key = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("")
      .slice(0, 32);
    const record = {
      path: victim,
      kind: "file",
      content: "",
      ids: {
        dev: info.dev,
        ino: info.ino,
        mtime: info.mtime!.getTime(),
        ctime: info.ctime!.getTime(),
        size: info.size,
      },
    };
    await Deno.writeTextFile(join(run, "stand-ins", `${key}.json`), JSON.stringify(record), {
      mode: 0o600,
    });
    const r = await runCli(
      ["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"],
      { env: { PENGUIN_RUN_DIR: run } },
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(JSON.stringify(server.requests.at(-1)?.body ?? ""), /ran-42/, "the command ran");
    assert.equal(await Deno.readTextFile(victim), "the user's file\n", "the user's file is kept");
  } finally {
    await server.close();
    await sb.cleanup();
  }
});
