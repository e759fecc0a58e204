// Memory of a `penguin run` whose model streams long answers in tiny server-sent events, one
// network write each (attack round 24, R5): four foreground subagents answering 7.9 MB each in
// 16-character events took penguin to 285-369 MB. Every read got a fresh 64 KiB buffer from
// fetch, a response's pieces waited for 64 Ki characters and so outlived V8's young generation,
// a held run was joined anew every 511 deltas, and the display kept the text of every subagent
// streaming beside the one holding the screen. Here two subagents answer 2 MB each in
// 8-character events: 197-217 MB before, about 140 MB when this test was written, 161-167 MB
// at eddee82 and after (the runtime and the modules loaded grew; measured alone, idle machine).
// The bound stays under the 197 MB the causes above cost, with room for a loaded machine's
// collections: at 170 MB a CI run failed at 172.
import assert from "node:assert/strict";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";

const MB = 1000 * 1000;
/** The most penguin may hold at its peak. */
const PEAK_LIMIT = 190 * MB;
/** Characters each subagent answers. */
const ANSWER = 2_000_000;

Deno.test({
  name: "two subagents answering 2 MB in 8-character events: penguin peak ≤ 190 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const answer = "T".repeat(ANSWER);
    const server = await startModelServer({
      handler: (req) => {
        const body = req.body as { messages?: { role: string; content: unknown }[] };
        const messages = body.messages ?? [];
        const user = JSON.stringify(messages.find((m) => m.role === "user")?.content ?? "");
        if (user.includes("SUB-")) return turn.text(answer, { chunk: 8 });
        if (!messages.some((m) => m.role === "tool")) {
          return turn.of(
            ...[0, 1].map((s) =>
              item.toolCall("run_subagent", { description: "d", prompt: `SUB-${s}` }, {
                id: `p${s}`,
              })
            ),
          );
        }
        return turn.text("done");
      },
    });
    const sb = await makeRoot(server, { visible: true, protocol: "openai-chat" });
    try {
      const r = await runCliPeak(
        ["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"],
        sb.base,
      );
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.equal(server.requests.length, 4, "the parent, two subagents, the parent again");
      const last = server.requests.at(-1)!.body as {
        messages: { role: string; content: unknown }[];
      };
      const outputs = last.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
      assert.equal(outputs.length, 2);
      for (const o of outputs) {
        assert.match(o, /^T{10000}/, "each subagent's answer, its head kept");
      }
      assert.ok(r.peakBytes <= PEAK_LIMIT, `penguin peak ${Math.round(r.peakBytes / MB)} MB`);
    } finally {
      await server.close();
      await sb.cleanup();
    }
  },
});
