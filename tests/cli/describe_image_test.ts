// describe_image end to end: `penguin run` with a text-only session model and
// a vision model, both served by the scripted model server.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addModel, setVisionModel } from "../../lib/state/project_config.ts";
import { type RecordedRequest, startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { type Sandbox, withModelRoot } from "../support/roots.ts";
import { assertNoPieceOf } from "../support/secrets.ts";

type Server = Awaited<ReturnType<typeof startModelServer>>;

/** A PNG signature and a few bytes: enough for the image sniffer. */
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4, 5, 6]);

const configPath = (sb: Sandbox) => join(sb.root, "default_project", ".project_config.toml");

interface Setup {
  /** The session model (custom, m) accepts images. */
  sessionVision?: boolean;
  /** Configure (custom, v) as the project's vision model. */
  visionModel?: boolean;
  /** What the vision model answers (default: a description). */
  visionReply?: ReturnType<typeof turn.text>;
}

/**
 * Run `body` with a root whose default model (custom, m) and optional
 * vision model (custom, v) both point at one scripted server: requests for
 * `v` get `visionReply`, requests for `m` get `session` in order.
 */
async function scenario(
  setup: Setup,
  session: ReturnType<typeof turn.text>[],
  body: (
    sb: Sandbox,
    server: Server,
    run: (msg: string) => ReturnType<typeof runCli>,
  ) => Promise<void>,
): Promise<void> {
  const queue = [...session];
  await withModelRoot({
    handler: (
      req,
    ) => (req.model === "v"
      ? setup.visionReply ?? turn.text("A red square on a white background.")
      : queue.shift()),
  }, async (sb, server) => {
    await addModel(configPath(sb), {
      provider: "custom",
      model_id: "m",
      vision: setup.sessionVision ?? false,
    });
    if (setup.visionModel ?? true) {
      await addModel(configPath(sb), {
        provider: "custom",
        model_id: "v",
        base_url: server.baseUrl("openai-chat"),
        client_type: "openai-chat",
        max_tokens: 1000,
      });
      await setVisionModel(configPath(sb), { provider: "custom", model_id: "v" });
    }
    await Deno.writeFile(join(sb.workspace, "pic.png"), PNG);
    await body(
      sb,
      server,
      (msg) => runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", msg]),
    );
  }, { visible: true });
}

const toolNames = (req: RecordedRequest) =>
  ((req.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) =>
    t.function.name
  );

function toolOutput(req: RecordedRequest): string {
  const messages = (req.body as { messages: { role: string; content: unknown }[] }).messages;
  const tool = messages.find((m) => m.role === "tool");
  assert.ok(tool, "the request carries the tool output");
  return String(tool.content);
}

Deno.test("describe_image sends the workspace image and the question to the vision model; its answer is the output", async () => {
  await scenario({}, [
    turn.toolCall("describe_image", { source: "pic.png", prompt: "What colour is it?" }),
    turn.text("It is red."),
  ], async (_sb, server, run) => {
    const r = await run("What is in pic.png?");
    assert.equal(r.code, 0, r.stderr);
    const [first, vision, second] = server.requests;
    assert.equal(server.requests.length, 3);
    assert.equal(first!.model, "m");
    assert.ok(toolNames(first!).includes("describe_image"), toolNames(first!).join(", "));
    assert.ok(!toolNames(first!).includes("read_image"), "read_image is for vision models");

    assert.equal(vision!.model, "v");
    const body = vision!.body as Record<string, unknown>;
    assert.equal(body.tools, undefined, "no tools for the vision model");
    assert.equal(body.max_tokens ?? body.max_completion_tokens, 1000);
    const messages = body.messages as { role: string; content: unknown }[];
    assert.deepEqual(messages.map((m) => m.role), ["user"], "no system prompt");
    const parts = messages[0]!.content as Record<string, unknown>[];
    assert.deepEqual(parts, [
      { type: "text", text: "What colour is it?" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${PNG.toBase64()}` } },
    ]);

    assert.equal(second!.model, "m");
    assert.equal(
      toolOutput(second!),
      "image/png, 14 B — described by v:\nA red square on a white background.",
    );
  });
});

Deno.test("describe_image is offered only to a text-only model with a vision model configured", async () => {
  // No vision model configured; a session model that sees images itself.
  const cases: [Setup, string][] = [
    [{ visionModel: false }, "read_file"],
    [{ sessionVision: true }, "read_image"],
  ];
  for (const [setup, offered] of cases) {
    await scenario(setup, [turn.text("ok")], async (_sb, server, run) => {
      const r = await run("hi");
      assert.equal(r.code, 0, r.stderr);
      const names = toolNames(server.requests[0]!);
      assert.ok(names.includes(offered), names.join(", "));
      assert.ok(!names.includes("describe_image"), names.join(", "));
    });
  }
});

Deno.test("describe_image refuses a path outside the workspace and asks the vision model nothing", async () => {
  await scenario({}, [
    turn.toolCall("describe_image", { source: "../outside.png" }),
    turn.text("Refused."),
  ], async (sb, server, run) => {
    await Deno.writeFile(join(sb.base, "outside.png"), PNG);
    const r = await run("Describe ../outside.png");
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(server.requests.map((q) => q.model), ["m", "m"]);
    const out = toolOutput(server.requests[1]!);
    assert.doesNotMatch(out, /described by/);
    assert.match(
      out,
      /^Path "\.\.\/outside\.png" resolves to ".*", outside the workspace ".*"; file tools can only reach the workspace/,
    );
  });
});

Deno.test("a failed vision request fails describe_image, naming the status", async () => {
  await scenario({ visionReply: turn.error(401, { error: { message: "bad key" } }) }, [
    turn.toolCall("describe_image", { source: "pic.png" }),
    turn.text("It failed."),
  ], async (_sb, server, run) => {
    const r = await run("Describe pic.png");
    assert.equal(r.code, 0, r.stderr);
    const vision = server.requests[1]!.body as { messages: { content: { text?: string }[] }[] };
    assert.match(vision.messages[0]!.content[0]!.text!, /^Describe this image in detail/);
    const out = toolOutput(server.requests[2]!);
    assert.match(out, /^image\/png, 14 B — described by v:\n/);
    assert.match(out, /\[describe_image: the vision model v request ended auth: .*bad key/);
  });
});

Deno.test("describe_image of an image holding a vault value asks the vision model nothing", async () => {
  // Attack round 18b secrets: the value would reach the vision model's provider as base64.
  const secret = "vlt7c3a91e2QdZ4b85f60Kw";
  await scenario({}, [
    turn.toolCall("describe_image", { source: "leak.png" }),
    turn.text("Refused."),
  ], async (sb, server, run) => {
    const vault = await runCli([
      "--root",
      sb.root,
      "config",
      "vault",
      "set",
      "--key",
      "MY_TOKEN",
      "--value",
      secret,
    ]);
    assert.equal(vault.code, 0, vault.stderr);
    await Deno.writeFile(
      join(sb.workspace, "leak.png"),
      new Uint8Array([...PNG.slice(0, 8), ...new TextEncoder().encode(secret)]),
    );
    const r = await run("Describe leak.png");
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(server.requests.map((q) => q.model), ["m", "m"], "the vision model was asked");
    assert.match(toolOutput(server.requests[1]!), /image refused: its data holds a secret/);
  });
});

Deno.test("describe_image's question reaches the vision model masked (round 24 secrets B4)", async () => {
  // The model learned the value some way (reversed, a documented limit) and asks with it.
  const secret = "vlt7c3a91e2QdZ4b85f60Kw";
  await scenario({}, [
    turn.toolCall("describe_image", { source: "pic.png", prompt: `Is ${secret} written here?` }),
    turn.text("Done."),
  ], async (sb, server, run) => {
    const vault = await runCli(
      ["--root", sb.root, "config", "vault", "set", "--key", "MY_TOKEN", "--value", secret],
    );
    assert.equal(vault.code, 0, vault.stderr);
    const r = await run("Describe pic.png");
    assert.equal(r.code, 0, r.stderr);
    const vision = server.requests.find((q) => q.model === "v");
    assert.ok(vision, "the vision model was asked");
    const sent = JSON.stringify(vision.body);
    assert.ok(sent.includes("[redacted:vault:MY_TOKEN]"), sent);
    assertNoPieceOf(sent, [secret], "the vision request");
  });
});
