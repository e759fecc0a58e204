// The signal executeTool gives a tool: the user's abort (with its reason) or the timeout.
import assert from "node:assert/strict";
import { toolCall } from "../../lib/protocol/builders.ts";
import { executeTool } from "../../lib/tools/environment.ts";
import type { Tool, ToolEvent } from "../../lib/tools/tool.ts";

function tool(run: Tool["run"]): Tool {
  return {
    definition: {
      name: "fake",
      description: "a test tool",
      parameters: { type: "object", properties: {} },
      permission: "r",
      timeoutMs: 0,
      maxOutputLength: 0,
      callDescription: false,
    },
    run,
  };
}

Deno.test("a user abort reaches the tool's signal with the user's reason", async () => {
  const ctl = new AbortController();
  let seen: unknown;
  const t = tool(async function* (_args, ctx): AsyncGenerator<ToolEvent> {
    ctl.abort("stop now");
    seen = ctx.signal.reason;
    yield { type: "result", status: "aborted" };
  });
  const items = [];
  for await (
    const item of executeTool(t, toolCall("fake", "{}", "c1"), {
      workspace: "/",
      sessionId: "s",
      signal: ctl.signal,
    })
  ) items.push(item);
  assert.equal(seen, "stop now");
  assert.equal((items.at(-1) as { stop_reason: string }).stop_reason, "aborted");
});
