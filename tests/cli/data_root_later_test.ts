// A data root noted while a session runs is hidden from that session's next command: the plan
// keeps what it learned about the noted roots between commands (issue 32), but never past a
// change of the list.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addServerModel, visibleTempDir } from "../support/roots.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";

const SECRET = "other-root-secret-4b1d";

Deno.test("a data root noted mid-session is hidden from the session's next command", async () => {
  const base = await visibleTempDir("penguin-root-later-");
  // A run directory of this test's own: the list of data roots it notes is no other test's.
  const env = { PENGUIN_RUN_DIR: join(base, "run") };
  const root = join(base, "root");
  const ws = join(base, "ws");
  const other = join(base, "other");
  const secretFile = join(other, "p", "agents", "secret.txt");
  await Deno.mkdir(ws);
  await Deno.mkdir(join(other, "p", "agents"), { recursive: true });
  await Deno.writeTextFile(secretFile, `${SECRET}\n`);
  const look = (id: string) =>
    turn.of(item.toolCall("exec_command", { description: "look", cmd: `cat ${secretFile}` }, {
      id,
    }));
  let noted = "";
  const server = await startModelServer({
    handler: async (_rec, i) => {
      if (i === 0) return look("c1");
      if (i === 1) {
        // Between the two commands another penguin command uses `other` as its data root.
        const r = await runCli(["--root", other, "config", "model", "list"], { env });
        noted = r.stderr;
        return look("c2");
      }
      return turn.text("done");
    },
    maxRequests: 10,
  });
  try {
    await addServerModel(root, server, { api_key: "sk-root-later-0123456789abcdef" });
    const r = await runCli(
      ["--root", root, "run", "--workspace", ws, "--approve", "allow-all", "-m", "go"],
      { env },
    );
    assert.equal(r.code, 0, r.stderr + noted);
    const bodies = server.requests.map((r) => JSON.stringify(r.body));
    assert.equal(bodies.length, 3);
    // The first command ran before `other` was noted: it saw the file (so the plan was made).
    assert.ok(bodies[1]!.includes(SECRET), bodies[1]);
    // The second one ran after: the same session's next plan hides it.
    const second = bodies[2]!.slice(bodies[2]!.lastIndexOf("c2"));
    assert.ok(!second.includes(SECRET), second);
    assert.match(second, /No such file or directory/);
  } finally {
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
});
