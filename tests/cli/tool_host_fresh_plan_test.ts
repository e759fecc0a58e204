// The file tools' sandboxed host keeps the mounts it started with; one started before the user
// made a credential store in the workspace let read_file return the token while every command's
// sandbox hid it (attack round 32 x02). Each call now compares what its sandbox would hide with
// what the host started with, and a changed plan gets a new host. A real `penguin run` whose
// scripted model reads a file, then (the store made between two requests) the store.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, turn } from "../support/model_server.ts";
import { inRoot, runCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { BWRAP_USABLE as bwrap } from "../sandbox/_bwrap.ts";

Deno.test({
  name: "read_file cannot read a credential store made after the tool host started",
  ignore: !bwrap,
  fn: async () => {
    const bodies: string[] = [];
    let ws = "";
    await withModelRoot({
      handler: async (req, i) => {
        bodies.push(JSON.stringify(req.body));
        if (i === 0) {
          return turn.of(item.toolCall("read_file", { file_path: "a.txt" }, { id: "r1" }));
        }
        if (i === 1) {
          // The user's `cargo login` in another terminal, while the session runs.
          await Deno.mkdir(join(ws, ".cargo"), { recursive: true });
          await Deno.writeTextFile(
            join(ws, ".cargo", "credentials.toml"),
            "token = late-store-secret\n",
          );
          return turn.of(
            item.toolCall("read_file", { file_path: ".cargo/credentials.toml" }, { id: "r2" }),
          );
        }
        return turn.text("done");
      },
      maxRequests: 5,
    }, async (sb) => {
      ws = sb.workspace;
      await Deno.writeTextFile(join(ws, "a.txt"), "first file\n");
      const r = await runCli(inRoot(sb, "run", "--approve", "allow-all", "-m", "go"), {
        env: { CARGO_HOME: join(ws, ".cargo") },
      });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(bodies.length >= 3, r.stderr);
      assert.match(bodies[1]!, /first file/);
      assert.doesNotMatch(bodies[2]!, /late-store-secret/, bodies[2]!.slice(-1500));
    }, { visible: true });
  },
});
