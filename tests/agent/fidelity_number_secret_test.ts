// An opaque `fidelity` payload holding a secret is dropped before it reaches the trace or the
// next request. A digits-only vault value the model learned came back as a NUMBER inside
// `reasoning_details`, which masking (made for strings) never looked at (attack round 23 secrets
// B4): the trace kept it and the next request replayed it. Live, and in a record masked on import.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import { maskRecord } from "../../lib/agent/_mask_history.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { readAll } from "../support/secrets.ts";

const PIN = "4718293056172839";

/** An OpenAI-chat stream whose reasoning carries `n` as a number in its opaque details. */
function reasoningWithNumber(n: number): string[] {
  const base = { id: "r1", object: "chat.completion.chunk", created: 1, model: "m" };
  const sse = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  return [
    sse({
      ...base,
      choices: [{
        index: 0,
        delta: {
          role: "assistant",
          reasoning: "hmm",
          reasoning_details: [{ type: "reasoning.encrypted", data: "abc", index: 0, n }],
        },
      }],
    }),
    sse({ ...base, choices: [{ index: 0, delta: { content: "thinking done" } }] }),
    sse({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
    sse({
      ...base,
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 },
    }),
    "data: [DONE]\n\n",
  ];
}

Deno.test("a reasoning payload holding a vault value as a number is dropped, not recorded or replayed", async () => {
  await withModelRoot({
    turns: [
      { items: [], raw_events: reasoningWithNumber(Number(PIN)) },
      turn.text("again done"),
    ],
  }, async (sb, server) => {
    const cli = async (args: string[]) => {
      const r = await runCli(["--root", sb.root, ...args], {
        env: { NO_COLOR: "1" },
        cwd: sb.workspace,
      });
      assert.equal(r.code, 0, `penguin ${args.join(" ")}: ${r.stdout}${r.stderr}`);
      return r;
    };
    await cli(["config", "vault", "set", "--key", "PIN", "--value", PIN]);
    await cli(["run", "--workspace", sb.workspace, "-m", "go"]);
    await cli(["run", "--resume", "latest", "--workspace", sb.workspace, "-m", "again"]);
    const traces = join(sb.root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID, "traces");
    const onDisk = await readAll(traces);
    assert.ok(onDisk.includes("thinking done"), "the answer is recorded");
    assert.ok(!onDisk.includes(PIN), "the trace holds no piece of the payload's number");
    assert.equal(server.requests.length, 2);
    assert.ok(
      !JSON.stringify(server.requests[1]!.body).includes(PIN),
      "the next request replays none",
    );
  });
});

Deno.test("a record whose fidelity holds a secret as a number loses its fidelity when masked", () => {
  const mask = (s: string) => s.replaceAll(PIN, "[redacted:vault:PIN]");
  const record = (n: number): OmniMessage => ({
    timestamp: "2026-12-01T00:00:00.000Z",
    type: "model_msg",
    payload: {
      type: "text",
      text: "ok",
      fidelity: { reasoning_details: [{ type: "reasoning.encrypted", data: "abc", n }] },
    } as unknown as OmniMessage["payload"],
  } as OmniMessage);
  const held = record(Number(PIN));
  const masked = maskRecord(held, mask);
  assert.notEqual(masked, held);
  assert.equal((masked.payload as { fidelity?: unknown }).fidelity, undefined);
  assert.equal((masked.payload as { text?: unknown }).text, "ok");
  // A number that spells no secret keeps its record as it is.
  const plain = record(42);
  assert.equal(maskRecord(plain, mask), plain);
});
