// An image a built-in tool returns whose data holds a secret is refused like an MCP server's
// (issue 26, attack round 18b secrets): the model's command wrote a PNG header and the vault value
// into a file, `read_image` sent it to the model as a data URL (a data URL is not masked as text),
// and the value reached the trace and the request in base64. A real `penguin run` against the
// scripted model.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { addServerModel, visibleTempDir } from "../support/roots.ts";
import { filesUnder } from "../support/files_under.ts";

const SECRET = "vlt7c3a91e2QdZ4b85f60Kw";

/** Whether a base64 data URL in `text` decodes to bytes holding the secret. */
function imageHolds(text: string): boolean {
  return [...text.matchAll(/data:image\/[a-z]+;base64,([A-Za-z0-9+/=]+)/g)].some((m) => {
    try {
      return atob(m[1]!).includes(SECRET);
    } catch {
      return false;
    }
  });
}

Deno.test("penguin run: read_image of a file holding a vault value is refused, not sent", async () => {
  const base = await visibleTempDir("penguin-image-secret-");
  const root = join(base, "data"), ws = join(base, "ws"), home = join(base, "home");
  await Deno.mkdir(ws);
  await Deno.mkdir(home);
  const server = await startModelServer({
    turns: [
      turn.of(item.toolCall("exec_command", {
        cmd: `printf '\\x89PNG\\r\\n\\x1a\\n' > x.png; printf %s "$MY_TOKEN" >> x.png; echo made`,
      })),
      turn.of(item.toolCall("read_image", { source: "x.png" })),
      turn.text("done"),
    ],
  });
  try {
    await addServerModel(root, server, { vision: true });
    const env = { HOME: home, PAGER: "cat" };
    const v = await runCli(
      ["--root", root, "config", "vault", "set", "--key", "MY_TOKEN", "--value", SECRET],
      { env },
    );
    assert.equal(v.code, 0, v.stderr);
    const r = await runCli(["--root", root, "run", "--workspace", ws, "-m", "go"], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.length, 3);
    const requests = server.requests.map((q) => JSON.stringify(q.body)).join("\n");
    assert.match(requests, /made/, "the command ran");
    assert.equal(imageHolds(requests), false, "a request carried the value as image data");
    assert.match(requests, /image refused: its data holds a secret/);
    let traces = "";
    for (const f of await filesUnder(root)) {
      if (f.endsWith(".jsonl")) traces += await Deno.readTextFile(f);
    }
    assert.equal(imageHolds(traces), false, "the trace carried the value as image data");
  } finally {
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
});
