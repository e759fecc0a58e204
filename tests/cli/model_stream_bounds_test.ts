// Bounded memory against a hostile model server, measured on real `penguin run`s: however the
// response is streamed — one tool call's arguments in tiny deltas, a flood of assistant text, a
// huge non-streamed JSON body, many calls each under the per-call limit — penguin's peak stays
// ≤ 300 MB, and what passes a limit (lib/models/limits.ts) stops the request instead of being kept.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, startModelServer, turn } from "../support/model_server.ts";
import type { ScriptedTurn } from "../support/model_server.ts";
import { addServerModel, makeRoot } from "../support/roots.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { runCli } from "../support/cli.ts";

const MB = 1000 * 1000;
const MiB = 1024 * 1024;
/** The most penguin may hold at its peak while reading a hostile response. */
const PEAK_LIMIT = 300 * MB;

/** One Chat Completions stream event (the fields penguin needs, nothing more). */
const ev = (delta: unknown, finish: string | null = null): string =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** `s` `n` times, as UTF-8 bytes (built by doubling: no string of that size). */
function repeatBytes(s: string, n: number): Uint8Array {
  const one = new TextEncoder().encode(s);
  const out = new Uint8Array(one.length * n);
  out.set(one);
  for (let have = one.length; have < out.length; have *= 2) {
    out.copyWithin(have, 0, Math.min(have, out.length - have));
  }
  return out;
}

/** A whole Chat Completions stream: `body` between the opening and the finish. */
function chatStream(body: (string | Uint8Array)[], finish: string): ScriptedTurn {
  const usage = `data: ${
    JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } })
  }\n\n`;
  const enc = new TextEncoder();
  const parts = [
    enc.encode(ev({ role: "assistant", content: "" })),
    ...body.map((b) => typeof b === "string" ? enc.encode(b) : b),
    enc.encode(ev({}, finish) + usage + "data: [DONE]\n\n"),
  ];
  const raw = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    raw.set(p, at);
    at += p.length;
  }
  return { items: [], raw_body: raw };
}

/** A call's opening event. */
const callStart = (index: number, name: string) =>
  ev({ tool_calls: [{ index, id: `c${index}`, function: { name, arguments: "" } }] });

/** `n` argument deltas of `piece` for call `index`. */
const argDeltas = (index: number, piece: string, n: number) =>
  ev({ tool_calls: [{ index, function: { arguments: piece } }] }).repeat(n);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  peakBytes: number;
  requests: number;
  root: string;
  workspace: string;
}

/** `penguin run` against `first` (then "done"), measuring its peak; `check` sees the run before cleanup. */
async function runAgainst(
  first: ScriptedTurn,
  check: (r: Run) => void | Promise<void>,
): Promise<void> {
  const server = await startModelServer({
    handler: (_req, index) => index === 0 ? first : turn.text("done"),
  });
  const sb = await makeRoot(server, { visible: true });
  try {
    const r = await runCliPeak(
      ["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"],
      sb.base,
    );
    await check({
      ...r,
      requests: server.requests.length,
      root: sb.root,
      workspace: sb.workspace,
    });
  } finally {
    await server.close();
    await sb.cleanup();
  }
}

function assertPeak(r: Run): void {
  assert.ok(r.peakBytes <= PEAK_LIMIT, `penguin peak ${Math.round(r.peakBytes / MB)} MB`);
}

Deno.test({
  name:
    "one call's 36 MB argument in 16-character deltas: the request stops past 2 MiB, the call fails, peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // 2.25 million events: the wire parser used to keep every fragment of the argument.
    const delta = ev({ tool_calls: [{ index: 0, function: { arguments: "Q".repeat(16) } }] });
    const stream = chatStream([
      callStart(0, "write_file") + argDeltas(0, '{"file_path":"b.txt","content":"', 1),
      repeatBytes(delta, 36 * MB / 16),
    ], "tool_calls");
    await runAgainst(stream, async (r) => {
      assert.equal(r.code, 1, r.stderr);
      assertPeak(r);
      assert.match(r.stdout + r.stderr, /more than 2 MiB of arguments in a tool call/);
      assert.equal(r.requests, 1, "the failed call ran nothing, and the request is not retried");
      await assert.rejects(Deno.stat(join(r.workspace, "b.txt")));
    });
  },
});

Deno.test({
  name:
    "48 MB of assistant text: the request fails past 8 MiB naming the limit, the trace stays valid, peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const piece = "lorem ipsum ".repeat(4 * MiB / 12);
    const stream = chatStream([ev({ content: piece }).repeat(12)], "stop");
    await runAgainst(stream, async (r) => {
      assert.equal(r.code, 1, r.stderr);
      assertPeak(r);
      assert.match(r.stdout + r.stderr, /more than 8 MiB of text; penguin stopped reading it/);
      assert.equal(r.requests, 1, "a response past a limit is not retried");
      const v = await runCli(["--root", r.root, "trace", "validate", r.root]);
      assert.equal(v.code, 0, v.stdout + v.stderr);
    });
  },
});

Deno.test({
  name:
    "a 48 MB non-streamed JSON body: the request fails past 32 MiB without parsing it, peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const body = JSON.stringify({
      choices: [{
        index: 0,
        message: { role: "assistant", content: "Z".repeat(48 * MB) },
        finish_reason: "stop",
      }],
      usage: { prompt_tokens: 1, completion_tokens: 1 },
    });
    await runAgainst({ items: [], raw_body: body, content_type: "application/json" }, (r) => {
      assert.equal(r.code, 1, r.stderr);
      assertPeak(r);
      assert.match(r.stdout + r.stderr, /response body is larger than 32 MiB/);
      assert.equal(r.requests, 1);
    });
  },
});

Deno.test({
  name: "8 calls of 1.5 MiB in one response: the request stops past 4 MiB in all, peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    let body = "";
    for (let i = 0; i < 8; i++) {
      const content = String.fromCharCode(65 + i).repeat(1.5 * MiB);
      body += callStart(i, "no_such_tool") + argDeltas(i, `{"content":"${content}"}`, 1);
    }
    await runAgainst(chatStream([body], "tool_calls"), (r) => {
      assert.equal(r.code, 1, r.stderr);
      assertPeak(r);
      assert.match(r.stdout + r.stderr, /more than 4 MiB of tool-call arguments over its calls/);
      assert.equal(r.requests, 1, "a response past a limit is not retried");
    });
  },
});

Deno.test({
  name:
    "eight subagents each answering a 15 MB signature: each request stops past 4 MiB of opaque payloads, peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // Attack round 24 bounded R10: under the earlier 16 MiB bound each signature was kept, and the
    // eight at once took penguin to 285-317 MB.
    const signature = "S".repeat(15_000_000);
    const children = 8;
    let parentTurns = 0;
    const server = await startModelServer({
      handler: (rec) => {
        const body = rec.body as { messages?: { role: string; content: unknown }[] };
        const asked = JSON.stringify(body.messages?.find((m) => m.role === "user")?.content ?? "");
        if (/SUB-/.test(asked)) {
          return turn.of(item.thinking("t", { signature }), item.text("done"));
        }
        if (parentTurns++ > 0) return turn.text("ok");
        return turn.of(
          ...Array.from(
            { length: children },
            (_, i) =>
              item.toolCall("run_subagent", { description: "d", prompt: `SUB-${i}` }, {
                id: `p${i}`,
              }),
          ),
        );
      },
      maxRequests: 40,
    });
    const sb = await makeRoot(server, { visible: true });
    try {
      await addServerModel(
        sb.root,
        server,
        { model_id: "claude-sonnet-4-6" },
        "anthropic-messages",
      );
      const r = await runCliPeak(
        ["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"],
        sb.base,
      );
      assertPeak({ ...r, requests: 0, root: sb.root, workspace: sb.workspace });
      const last = JSON.stringify(server.requests.at(-1)?.body ?? "");
      const refused = last.match(/more than 4 MiB of signatures and other opaque payloads/g) ?? [];
      assert.equal(
        refused.length,
        children,
        `each subagent's request stopped: ${last.slice(0, 2000)}`,
      );
      assert.equal(
        last.includes(signature.slice(0, 4096)),
        false,
        "no signature reached the parent",
      );
      const v = await runCli(["--root", sb.root, "trace", "validate", sb.root]);
      assert.equal(v.code, 0, v.stdout + v.stderr);
    } finally {
      await server.close();
      await sb.cleanup();
    }
  },
});
