// A tool call whose arguments are not a JSON object goes back to the model as a
// failed tool output, on every wire protocol: no retry, and the next request
// replays the call with `{}` arguments (upstream servers reject anything else)
// while the trace keeps the model's text byte for byte.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createAgent } from "../../lib/agent/mod.ts";
import type { WireProtocol } from "../../lib/models/wire.ts";
import { addModel } from "../../lib/state/project_config.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { assertGoodTrace, collect, ofKind } from "./_support.ts";

const TRUNCATED = '{"cmd": "touch ran.txt"';

type Json = Record<string, unknown>;

/** The arguments of the replayed call in the second request, as the protocol carries them. */
function replayedArguments(protocol: WireProtocol, body: Json): unknown {
  switch (protocol) {
    case "openai-chat": {
      const msgs = body.messages as Json[];
      const call = msgs.flatMap((m) => (m.tool_calls as Json[] | undefined) ?? [])[0]!;
      return (call.function as Json).arguments;
    }
    case "openai-responses":
      return (body.input as Json[]).find((i) => i.type === "function_call")!.arguments;
    case "anthropic-messages": {
      const blocks = (body.messages as Json[]).flatMap((m) =>
        Array.isArray(m.content) ? m.content as Json[] : []
      );
      return blocks.find((b) => b.type === "tool_use")!.input;
    }
    case "gemini": {
      const parts = (body.contents as Json[]).flatMap((c) => c.parts as Json[]);
      return (parts.find((p) => p.functionCall)!.functionCall as Json).args;
    }
  }
}

const PROTOCOLS: WireProtocol[] = [
  "openai-chat",
  "openai-responses",
  "anthropic-messages",
  "gemini",
];

for (const protocol of PROTOCOLS) {
  Deno.test(`${protocol}: truncated tool-call arguments come back to the model as a failed tool output, without a retry`, async () => {
    const server = await startModelServer({
      turns: [turn.toolCall("exec_command", TRUNCATED), turn.text("I will re-issue it.")],
    });
    const dir = await Deno.makeTempDir({ prefix: "penguin-badargs-" });
    try {
      const root = join(dir, "data");
      const workspace = join(dir, "ws");
      await Deno.mkdir(workspace);
      await addModel(join(root, "default_project", ".project_config.toml"), {
        provider: "custom",
        model_id: "m",
        base_url: server.baseUrl(protocol),
        client_type: protocol,
      }, { setDefault: true });
      const agent = await createAgent({ root });
      const session = await agent.createSession({ workspaceDir: workspace });
      try {
        await collect(session.run("Create ran.txt.", { approve: "allow-all" }));
      } finally {
        await session.dispose();
      }

      assert.equal(server.requests.length, 2, "one request for the call, one for the answer");
      const records = await assertGoodTrace(root, session.sessionId);
      const ends = ofKind(records, "request_end");
      assert.deepEqual(ends.map((e) => [e.status, e.attempt]), [
        ["completed", undefined],
        ["completed", undefined],
      ]);
      assert.equal(ofKind(records, "abort").length, 0);

      // The trace keeps what the model sent (Gemini carries arguments as a JSON value: here a string).
      const call = ofKind(records, "tool_call")[0]!;
      assert.equal(call.stop_reason, "completed");
      assert.equal(call.arguments, protocol === "gemini" ? JSON.stringify(TRUNCATED) : TRUNCATED);

      const out = ofKind(records, "tool_call_output")[0]!;
      assert.equal(out.stop_reason, "failed");
      const explanation = protocol === "gemini"
        ? /^Tool call "exec_command" failed: the arguments are a string, not a JSON object\./
        : /^Tool call "exec_command" failed: the arguments are not valid JSON \(.+\)\. Re-issue the call/;
      assert.match(String(out.output), explanation);
      await assert.rejects(Deno.stat(join(workspace, "ran.txt")), Deno.errors.NotFound);

      // The follow-up request is well-formed: the call replays as an empty object, the failure follows it.
      const body = server.requests[1]!.body as Json;
      const replayed = replayedArguments(protocol, body);
      if (typeof replayed === "string") assert.equal(replayed, "{}");
      else assert.deepEqual(replayed, {});
      assert.match(JSON.stringify(body), /failed: the arguments are/);
    } finally {
      await server.close();
      await Deno.remove(dir, { recursive: true });
    }
  });
}
