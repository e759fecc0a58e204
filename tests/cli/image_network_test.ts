// `--network off` (the default) keeps the model off the network: an image URL
// given to read_image or describe_image is fetched by penguin itself, outside
// the sandbox, so with the network off it is refused before any connection is
// made (else a URL would carry workspace data out in its query string, or
// probe services on the host and its network through the errors it returns).
import assert from "node:assert/strict";
import { join } from "node:path";
import { addModel, setVisionModel } from "../../lib/state/project_config.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { makeRoot } from "../support/roots.ts";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);

Deno.test("with the network off, read_image and describe_image fetch no URL; with it on, they do", async () => {
  const hits: string[] = [];
  const listener = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    hits.push(new URL(req.url).pathname);
    return new Response(PNG, { headers: { "content-type": "image/png" } });
  });
  const url = (what: string) => `http://127.0.0.1:${listener.addr.port}/${what}?d=workspace-data`;
  const outputs = new Map<string, string>();
  let calls: ReturnType<typeof turn.of>[] = [];
  const server = await startModelServer({
    handler: (req) => {
      const msgs = (req.body as { messages?: Record<string, unknown>[] }).messages ?? [];
      for (const m of msgs) {
        if (m.role === "tool") outputs.set(String(m.tool_call_id), JSON.stringify(m.content));
      }
      if (req.model === "v") return turn.text("a picture");
      return calls.shift() ?? turn.text("done");
    },
  });
  const sb = await makeRoot(server, { visible: true });
  const config = join(sb.root, "default_project", ".project_config.toml");
  try {
    const run = (extra: string[]) =>
      runCli(["--root", sb.root, "run", "--workspace", sb.workspace, ...extra, "-m", "look"]);
    // A vision session model: read_image.
    await addModel(config, { provider: "custom", model_id: "m", vision: true });
    calls = [turn.of(item.toolCall("read_image", { source: url("read") }, { id: "ri" }))];
    const off = await run([]);
    assert.equal(off.code, 0, off.stderr);
    assert.deepEqual(hits, [], "read_image fetched a URL with the network off");
    assert.match(outputs.get("ri")!, /network is off/);
    calls = [turn.of(item.toolCall("read_image", { source: url("read") }, { id: "ri_on" }))];
    const on = await run(["--network", "on"]);
    assert.equal(on.code, 0, on.stderr);
    assert.deepEqual(hits, ["/read"]);

    // A text-only session model with a vision model: describe_image.
    await addModel(config, { provider: "custom", model_id: "m", vision: false });
    await addModel(config, {
      provider: "custom",
      model_id: "v",
      base_url: server.baseUrl("openai-chat"),
      client_type: "openai-chat",
    });
    await setVisionModel(config, { provider: "custom", model_id: "v" });
    calls = [turn.of(item.toolCall("describe_image", { source: url("describe") }, { id: "di" }))];
    const dOff = await run([]);
    assert.equal(dOff.code, 0, dOff.stderr);
    assert.deepEqual(hits, ["/read"], "describe_image fetched a URL with the network off");
    assert.match(outputs.get("di")!, /network is off/);
  } finally {
    await listener.shutdown();
    await server.close();
    await sb.cleanup();
  }
});
