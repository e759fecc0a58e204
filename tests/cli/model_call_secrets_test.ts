// A secret the model learned and routes through the parts of its output around the text (issue 26
// item 5, red team Z10, Z11, Z15, Z16): a tool call's name, a tool call's id, the provider's error
// messages, and arguments that spell the secret only with JSON `\uXXXX` escapes. Real `penguin run`s
// against the scripted model: the model reads a vault value reversed (an encoding, not masked),
// then writes it in one of these places. No 8-character piece reaches the run's output, the trace,
// `trace show`, any `trace export` format or the next request.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import {
  item,
  type ModelServer,
  type ScriptedTurn,
  startModelServer,
  turn,
} from "../support/model_server.ts";
import { inRoot, runCli } from "../support/cli.ts";
import { makeRoot, type Sandbox } from "../support/roots.ts";
import { assertNoPieceOf, readAll, setVault, traceViews } from "../support/secrets.ts";

const V = "Qm7Zr2Kx9Wc4Lp8Tn3Hv6Bd1Fs5Gj0Ya";
const MARK = "[redacted:vault:ATK_V]";

/** Fail when any 8-character piece of the secret occurs in `text`. */
function assertNoPiece(text: string, where: string): void {
  assertNoPieceOf(text, [V], where);
}

/** The first turn every run starts with: the model learns the value, reversed. */
const LEARN = turn.of(item.toolCall("exec_command", { cmd: "printenv ATK_V | rev" }, { id: "c1" }));

interface Ran {
  sb: Sandbox;
  server: ModelServer;
  /** stdout + stderr of the run. */
  output: string;
  code: number;
  /** Every trace file of the session, concatenated. */
  trace: string;
  /** The request bodies the model server got, as JSON. */
  bodies: string;
}

/** One `penguin run` over `turns` (after {@linkcode LEARN}) with the vault value set; checks every place. */
async function runAndCheck(
  turns: ScriptedTurn[],
  check: (r: Ran) => Promise<void> | void,
  setup?: (sb: Sandbox) => Promise<void>,
): Promise<void> {
  const server = await startModelServer({ turns: [LEARN, ...turns] });
  const sb = await makeRoot(server, { visible: true });
  try {
    await setVault(sb.root, "ATK_V", V);
    await setup?.(sb);
    const r = await runCli([...inRoot(sb, "run"), "--approve", "allow-all", "-m", "go"], {
      env: { NO_COLOR: "1" },
    });
    const output = r.stdout + r.stderr;
    const sid = /^Session: (session-\S+)$/m.exec(r.stderr)?.[1];
    assert.ok(sid, r.stderr);
    // The first call's output is the reversed value: the model really learned it.
    const bodies = JSON.stringify(server.requests.map((q) => q.body));
    assert.ok(bodies.includes([...V].reverse().join("")), "the model learned the value");

    assertNoPiece(output, "the run's output");
    const agent = join(sb.root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID);
    const trace = await readAll(join(agent, "traces"));
    assertNoPiece(trace, "a trace file");
    assertNoPiece(bodies, "a request body");
    for (const v of await traceViews(sb.root, sid)) assertNoPiece(v.text, v.where);
    await check({ sb, server, output, code: r.code, trace, bodies });
  } finally {
    await server.close();
    await sb.cleanup();
  }
}

/** The trace's records of `type`. */
function records(trace: string, type: string): Record<string, unknown>[] {
  return trace.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l))
    .map((r) => r.payload).filter((p) => p?.type === type);
}

Deno.test("run: a tool call named by a learned secret is masked and answered as an unknown tool", async () => {
  await runAndCheck(
    [turn.of(item.toolCall(`mcp__${V}__x`, { x: 1 }, { id: "c2" })), turn.text("ok")],
    ({ output, code, trace, bodies }) => {
      assert.equal(code, 0, output);
      assert.ok(output.includes(`mcp__${MARK}__x`), output);
      const call = records(trace, "tool_call").find((c) => c.tool_call_id === "c2");
      assert.equal(call?.name, `mcp__${MARK}__x`);
      const out = records(trace, "tool_call_output").find((o) => o.tool_call_id === "c2");
      assert.match(String(out?.output), /Unknown tool/);
      assert.ok(bodies.includes(`mcp__${MARK}__x`), "the history holds the masked name");
    },
  );
});

Deno.test("run: a tool call id holding a learned secret is masked, and the call and its output still pair", async () => {
  await runAndCheck(
    [
      turn.of(item.toolCall("exec_command", { cmd: "echo paired-out" }, { id: `call_${V}` })),
      turn.text("ok"),
    ],
    ({ output, code, trace, server }) => {
      assert.equal(code, 0, output);
      const call = records(trace, "tool_call").find((c) => c.tool_call_id !== "c1");
      assert.equal(call?.tool_call_id, `call_${MARK}`);
      const out = records(trace, "tool_call_output").find((o) => o.tool_call_id === `call_${MARK}`);
      assert.match(String(out?.output), /paired-out/, "the output pairs with the masked id");
      // The next request pairs them too: the assistant's call and the tool result carry the same id.
      const last = JSON.stringify(server.requests[2]?.body);
      assert.equal(last.split(`call_${MARK}`).length - 1, 2, last);
    },
  );
});

Deno.test("run: provider error messages holding a learned secret are masked", async () => {
  await runAndCheck(
    [
      turn.streamError(`failed to parse tool call: ${V}`, "server_error"),
      turn.error(400, { error: { message: `bad request ${V}`, type: "invalid_request_error" } }),
    ],
    ({ output, code, trace }) => {
      assert.notEqual(code, 0, "the run ends on the HTTP 400");
      assert.ok(output.includes(`failed to parse tool call: ${MARK}`), output);
      assert.ok(output.includes(`bad request ${MARK}`), output);
      const ends = records(trace, "request_end").map((e) => String(e.error_message ?? ""));
      assert.ok(ends.some((m) => m.includes(`failed to parse tool call: ${MARK}`)), trace);
      assert.ok(ends.some((m) => m.includes(`bad request ${MARK}`)), trace);
    },
  );
});

/** `s` with every character as a JSON `\uXXXX` escape. */
const escaped = (s: string) =>
  [...s].map((c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0")).join("");

Deno.test("run: arguments spelling a learned secret with \\u escapes are masked in the live display; the tool gets them real", async () => {
  await runAndCheck(
    [
      turn.of(item.toolCall(
        "exec_command",
        `{"description":"d ${escaped(V)}","cmd":"true"}`,
        { id: "c2" },
      )),
      turn.of(item.toolCall("read_file", `{"file_path":"${escaped(V)}.txt"}`, { id: "c3" })),
      turn.text("ok"),
    ],
    ({ output, code, bodies }) => {
      assert.equal(code, 0, output);
      assert.ok(output.includes(`d ${MARK}`), output);
      assert.ok(output.includes(`${MARK}.txt`), output);
      // The tool read the real file: its content reached the next request.
      assert.ok(bodies.includes("content-of-the-real-file"), bodies);
    },
    async (sb) => {
      await Deno.writeTextFile(join(sb.workspace, `${V}.txt`), "content-of-the-real-file\n");
    },
  );
});
