// Compaction: triggers, summarize
// and discard, repair and transport retries, failures that keep the
// context, manual compaction, and lazy rotation. After every scenario the
// next request must carry exactly what the trace says the context is.
import assert from "node:assert/strict";
import {
  type Agent,
  compactionSettings,
  compactionTrigger,
  createAgent,
} from "../../lib/agent/mod.ts";
import { COMPACTION_TOOL_ERROR, engineStateOf, type Session } from "../../lib/agent/mod.ts";
import { resumeTrace } from "../../lib/session/mod.ts";
import {
  DEFAULT_COMPACTION_PROMPT,
  DEFAULT_COMPACTION_RETRY_PROMPT,
} from "../../lib/state/default_prompts.ts";
import { listSessionFiles } from "../../lib/trace/paths.ts";
import { readTraceFile } from "../../lib/trace/reader.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { item, type ModelServer, turn } from "../support/model_server.ts";
import { MAX_CONTEXT_CHARS, MAX_PROCESS_CONTEXT_CHARS } from "../../lib/agent/context_size.ts";
import { assertGoodTrace, collect, makeRoot, ofKind, type Sandbox, tracesDir } from "./_support.ts";
import {
  assertContext,
  type Atom,
  atomsOfContext,
  compactionAwareServer,
  patchAgentConfig,
  requestAtoms,
  userAtom,
} from "./_resume_support.ts";

const SUMMARY = (s: string) => turn.text(`[summary]${s}[/summary]`);
const CONTEXT = (s: string) => `[context_summary]\n${s}\n[/context_summary]`;

const isCompactionRequest = (server: ModelServer, i: number) =>
  requestAtoms(server, i).at(-1)?.text?.endsWith(DEFAULT_COMPACTION_PROMPT) === true;

async function setup(
  server: ModelServer,
  compaction: Record<string, unknown>,
  opts: { contextWindow?: number } = {},
): Promise<{ sb: Sandbox; agent: Agent }> {
  const sb = await makeRoot(server, opts);
  await createAgent({ root: sb.root }); // writes the default config
  await patchAgentConfig(sb.root, { compaction });
  return { sb, agent: await createAgent({ root: sb.root }) };
}

/** What {@linkcode withScene} hands its body. */
interface Scene {
  sb: Sandbox;
  agent: Agent;
  session: Session;
}

/** The agent's compaction config, the model's context window, and session options. */
interface SceneOptions {
  compaction: Record<string, unknown>;
  contextWindow?: number;
  session?: { retryDelayMs?: () => number };
}

/**
 * Run `fn` with an agent of `server` whose config has the scene's
 * compaction, and a session in its workspace; the server and the sandbox go
 * afterwards.
 */
async function withScene(
  server: ModelServer,
  opts: SceneOptions,
  fn: (scene: Scene) => Promise<void>,
): Promise<void> {
  try {
    const { sb, agent } = await setup(server, opts.compaction, opts);
    try {
      const session = await agent.createSession({ workspaceDir: sb.workspace, ...opts.session });
      await fn({ sb, agent, session });
    } finally {
      await sb.cleanup();
    }
  } finally {
    await server.close();
  }
}

function events(stream: readonly OmniMessage[], type: string): Record<string, unknown>[] {
  return stream.filter((m) => m.type === "event_msg" && m.payload.type === type)
    .map((m) => m.payload as Record<string, unknown>);
}

async function files(sb: Sandbox, sid: string): Promise<OmniMessage[][]> {
  const out: OmniMessage[][] = [];
  for (const f of await listSessionFiles(tracesDir(sb.root), sid)) {
    out.push((await readTraceFile(f.path)).records.map((r) => r.message));
  }
  return out;
}

const kindOf = (m: OmniMessage) => m.type === "session_meta" ? m.type : String(m.payload.type);

/** What a resumed session would send from the latest file: its context plus `next`. */
async function tracedContext(sb: Sandbox, session: Session, next: string): Promise<Atom[]> {
  const latest = (await files(sb, session.sessionId)).at(-1)!;
  const st = engineStateOf(resumeTrace(latest));
  return [
    { role: "system", text: session.metaMessage.payload.system_prompt },
    ...atomsOfContext([
      ...(st.pendingSummary ? [st.pendingSummary] : []),
      ...st.history,
      ...st.carryOver,
    ]),
    userAtom(next),
  ];
}

async function run(session: Session, text: string): Promise<OmniMessage[]> {
  return await collect(session.run(text, { approve: "allow-all" }));
}

const write = (name: string) => turn.toolCall("write_file", { file_path: name, content: name });

Deno.test("compaction thresholds: context first, min(configured, window − 2048), 128000 when unknown, ≤ 0 off", () => {
  const cfg = {
    max_context_length: 256000,
    max_session_turns: 3,
    mode: "summarize" as const,
    prompt: "p",
  };
  assert.equal(compactionSettings(cfg).maxContextLength, 128000 - 2048);
  assert.equal(compactionSettings(cfg, 5000).maxContextLength, 5000 - 2048);
  assert.equal(compactionSettings(cfg, 2000).maxContextLength, 128000 - 2048);
  assert.equal(
    compactionSettings({ ...cfg, max_context_length: 1000 }, 5000).maxContextLength,
    1000,
  );
  assert.equal(compactionSettings({ ...cfg, max_context_length: 0 }, 5000).maxContextLength, 0);
  const s = compactionSettings({ ...cfg, max_context_length: 1000 }, 5000);
  assert.equal(compactionTrigger(s, { lastRequestTotal: 999, sessionTurns: 2 }), null);
  assert.equal(compactionTrigger(s, { lastRequestTotal: 1000, sessionTurns: 2 }), "context");
  assert.equal(compactionTrigger(s, { lastRequestTotal: 1000, sessionTurns: 3 }), "context");
  assert.equal(compactionTrigger(s, { lastRequestTotal: 10, sessionTurns: 3 }), "turns");
  const off = compactionSettings({ ...cfg, max_context_length: -1, max_session_turns: 0 });
  assert.equal(compactionTrigger(off, { lastRequestTotal: 1e9, sessionTurns: 1e6 }), null);
});

Deno.test("turn trigger mid-task: summarize with the same tools, rotate to _002 (session_meta + tool_list_ready), continue from the summary", async () => {
  const server = await compactionAwareServer(
    [write("a.txt"), write("b.txt"), turn.text("All done."), turn.text("Yes.")],
    [SUMMARY("Wrote a.txt and b.txt."), SUMMARY("Wrote both; confirmed.")],
  );
  await withScene(server, { compaction: { max_session_turns: 2 } }, async ({ sb, session }) => {
    const stream = await run(session, "Write two files.");
    assert.ok(isCompactionRequest(server, 2));
    const [r1, r2] = [server.requests[1]!.body, server.requests[2]!.body] as Record<
      string,
      unknown
    >[];
    assert.deepEqual(r2!.tools, r1!.tools, "the compaction request offers the same tools");
    const turn2 = requestAtoms(server, 2);
    assert.deepEqual(turn2.slice(0, requestAtoms(server, 1).length), requestAtoms(server, 1));
    assert.deepEqual(
      turn2.slice(-2).map((a) => a.role),
      ["tool", "user"],
      "the turn's outputs, then the prompt",
    );
    assertContext(requestAtoms(server, 3), [
      { role: "system", text: session.metaMessage.payload.system_prompt },
      userAtom(CONTEXT("Wrote a.txt and b.txt.")),
    ]);
    assert.deepEqual(events(stream, "compaction_begin"), [{
      type: "compaction_begin",
      reason: "turns",
      mode: "summarize",
      context: 120,
      turns: 2,
    }]);
    assert.deepEqual(events(stream, "compaction_end"), [{
      type: "compaction_end",
      reason: "turns",
      mode: "summarize",
      status: "completed",
      attempt: 1,
    }]);
    assert.equal(session.usage().sessionTurns, 1, "counters restart after a compaction");
    assert.equal(session.usage().sessionTokens.total, 4 * 120, "compaction tokens count");

    const [first, second] = await files(sb, session.sessionId);
    assert.deepEqual(first!.at(-1)!.payload, events(stream, "compaction_end")[0]);
    assert.deepEqual(second!.slice(0, 3).map(kindOf), ["session_meta", "tool_list_ready", "text"]);
    assert.deepEqual(second![0]!.payload, session.metaMessage.payload);
    assert.ok(session.tracePath.endsWith("_002.jsonl"));
    await assertGoodTrace(sb.root, session.sessionId);

    const expected = await tracedContext(sb, session, "Done?");
    const again = await run(session, "Done?");
    assertContext(requestAtoms(server, 4), [
      ...requestAtoms(server, 3),
      { role: "assistant", text: "All done.", calls: [] },
      userAtom("Done?"),
    ]);
    assertContext(requestAtoms(server, 4), expected, "the live context equals the replayed one");
    // Two more turns: the threshold is reached again, this time at a task boundary.
    assert.equal(events(again, "compaction_end")[0]!.status, "completed");
    assert.equal(server.requests.length, 6);
    await session.dispose();
    assert.equal(
      (await files(sb, session.sessionId)).length,
      2,
      "the next file waits for a record",
    );
  });
});

Deno.test("context trigger at a task boundary keeps the summary for the next run, which writes it first", async () => {
  const server = await compactionAwareServer(
    [
      { ...turn.text("A big answer."), usage: { input: 3000, output: 20 } },
      turn.text("Next done."),
    ],
    [SUMMARY("The user asked for a big answer.")],
  );
  await withScene(server, { compaction: {}, contextWindow: 5000 }, async ({ sb, session }) => {
    const stream = await run(session, "Give me a big answer.");
    assert.equal(events(stream, "compaction_begin")[0]!.reason, "context");
    assert.equal(events(stream, "compaction_begin")[0]!.context, 3020);
    assert.equal(session.compactability(), "just_compacted");
    assert.equal((await files(sb, session.sessionId)).length, 1, "rotation waits for a record");
    const expected = await tracedContext(sb, session, "Next.");
    await run(session, "Next.");
    assertContext(requestAtoms(server, 2), [
      { role: "system", text: session.metaMessage.payload.system_prompt },
      userAtom(CONTEXT("The user asked for a big answer.")),
      userAtom("Next."),
    ]);
    assertContext(requestAtoms(server, 2), expected, "the live context equals the replayed one");
    await session.dispose();
    const [, second] = await files(sb, session.sessionId);
    assert.deepEqual(second!.slice(0, 4).map(kindOf), [
      "session_meta",
      "tool_list_ready",
      "text",
      "text",
    ]);
    assert.equal(ofKind(second!, "tool_list_ready").length, 1);
    await assertGoodTrace(sb.root, session.sessionId);
  });
});

Deno.test("a context past MAX_CONTEXT_CHARS stops the task after its turn, the provider counting no tokens", async () => {
  // A model answering 7.9 MB a turn and calling a tool to go on, its provider counting no tokens:
  // the context, kept in memory and sent whole each time, grew without bound.
  const big = "T".repeat(7_900_000);
  // The turn whose answer takes the context past the bound is the last.
  const turns = Math.ceil(MAX_CONTEXT_CHARS / big.length);
  const main = Array.from({ length: turns + 2 }, (_, i) => ({
    ...turn.of(item.text(big), item.toolCall("no_such_tool", {}, { id: `c${i}` })),
    usage: { input: 5, output: 5 },
    chunk: 1024 * 1024,
  }));
  const server = await compactionAwareServer(main);
  await withScene(server, { compaction: {} }, async ({ session }) => {
    const stream = await run(session, "Talk.");
    assert.equal(
      events(stream, "compaction_begin").length,
      0,
      "the provider's count never triggers it",
    );
    const aborts = events(stream, "abort");
    assert.equal(aborts.length, 1);
    assert.match(String(aborts[0]!.reason), /context holds 3\d\.\d MiB .* more than the 32 MiB/);
    assert.equal(server.requests.length, turns, "no request sent past the bound");
    await session.dispose();
  });
});

Deno.test("the sessions of one process keep at most MAX_PROCESS_CONTEXT_CHARS of context together", async () => {
  // Attack round 25: eight subagents taking four turns of a 3.9 MB signature each, every session
  // under its own 32 MiB, took penguin to 640 MB: each sends its whole context every turn.
  const big = "T".repeat(7_900_000);
  const grow = (i: number) => ({
    ...turn.of(item.text(big), item.toolCall("no_such_tool", {}, { id: `g${i}` })),
    usage: { input: 5, output: 5 },
    chunk: 1024 * 1024,
  });
  const firstTurns = Math.floor(MAX_CONTEXT_CHARS / big.length); // 4: under its own bound
  const first = await compactionAwareServer([
    ...Array.from({ length: firstTurns }, (_, i) => grow(i)),
    turn.text("first done"),
  ]);
  const keptFirst = firstTurns * big.length;
  // The second session's turn that takes the two past the process's bound is its last.
  const secondTurns = Math.floor((MAX_PROCESS_CONTEXT_CHARS - keptFirst) / big.length) + 1;
  assert.ok(secondTurns * big.length < MAX_CONTEXT_CHARS, "the second stays under its own bound");
  const second = await compactionAwareServer([
    ...Array.from({ length: secondTurns + 2 }, (_, i) => grow(100 + i)),
  ]);
  await withScene(first, { compaction: {} }, async (a) => {
    const outA = await run(a.session, "Grow.");
    assert.equal(events(outA, "abort").length, 0, "the first session stays under every bound");
    await withScene(second, { compaction: {} }, async (b) => {
      const outB = await run(b.session, "Grow too.");
      const aborts = events(outB, "abort");
      assert.equal(aborts.length, 1);
      assert.match(
        String(aborts[0]!.reason),
        /sessions this penguin runs .* hold \d+\.\d MiB of context together, more than the 48 MiB/,
      );
      assert.equal(second.requests.length, secondTurns, "no request sent past the process's bound");
      // The first session ends: what it kept no longer counts, and the second goes on to its own
      // bound (one more turn fits under 32 MiB, the next passes it).
      await a.session.dispose();
      const again = events(await run(b.session, "Go on."), "abort");
      assert.equal(again.length, 1);
      assert.match(String(again[0]!.reason), /more than the 32 MiB penguin keeps of one session/);
      assert.equal(second.requests.length, secondTurns + 2);
      await b.session.dispose();
    });
  });
});

Deno.test("discard waits for a task boundary, then drops the context and ends the task", async () => {
  const server = await compactionAwareServer(
    [write("a.txt"), write("b.txt"), turn.text("Both written."), turn.text("Fresh.")],
    [],
  );
  await withScene(
    server,
    { compaction: { max_session_turns: 2, mode: "discard" } },
    async ({ sb, session }) => {
      const stream = await run(session, "Write two files.");
      assert.equal(
        server.requests.length,
        3,
        "no compaction request; deferred past the mid-task turn",
      );
      assert.deepEqual(events(stream, "compaction_begin"), [{
        type: "compaction_begin",
        reason: "turns",
        mode: "discard",
        context: 120,
        turns: 3,
      }]);
      assert.deepEqual(events(stream, "compaction_end"), [{
        type: "compaction_end",
        reason: "turns",
        mode: "discard",
        status: "completed",
      }]);
      await run(session, "Start over.");
      assertContext(requestAtoms(server, 3), [
        { role: "system", text: session.metaMessage.payload.system_prompt },
        userAtom("Start over."),
      ]);
      await session.dispose();
      assert.equal((await files(sb, session.sessionId)).length, 2);
      await assertGoodTrace(sb.root, session.sessionId);
    },
  );
});

Deno.test("a failed compaction mid-task keeps the context and the file and aborts with `compaction failed`", async () => {
  const server = await compactionAwareServer(
    [write("a.txt"), turn.text("Continued.")],
    [turn.error(401), SUMMARY("Wrote a.txt; continued.")],
  );
  await withScene(server, { compaction: { max_session_turns: 1 } }, async ({ sb, session }) => {
    const stream = await run(session, "Write a.");
    const end = events(stream, "compaction_end")[0]!;
    assert.equal(end.status, "failed");
    assert.equal(end.attempt, 1, "auth stops at once");
    assert.match(String(end.error_message), /401|auth|key/i);
    assert.deepEqual(events(stream, "abort").map((e) => e.reason), ["compaction failed"]);
    assert.equal((await files(sb, session.sessionId)).length, 1);
    assert.equal(session.compactability(), "ok");
    const expected = await tracedContext(sb, session, "Go on.");
    await run(session, "Go on.");
    assertContext(requestAtoms(server, 2), expected, "the old context plus the turn's outputs");
    assert.deepEqual(requestAtoms(server, 2).slice(-2).map((a) => a.role), ["tool", "user"]);
    await session.dispose();
    await assertGoodTrace(sb.root, session.sessionId);
  });
});

Deno.test("a compaction reply that calls tools gets repair outputs and a corrective note; exhausting the retries fails", async () => {
  const calls = Array.from({ length: 6 }, () => turn.toolCall("read_file", { file_path: "x" }));
  const server = await compactionAwareServer([turn.text("Hi."), turn.text("Still here.")], [
    ...calls,
    SUMMARY("Greeted."),
  ]);
  await withScene(server, { compaction: { max_session_turns: 1 } }, async ({ sb, session }) => {
    const stream = await run(session, "Hello.");
    assert.equal(server.requests.length, 7, "1 turn + 6 compaction attempts");
    const end = events(stream, "compaction_end")[0]!;
    assert.deepEqual(
      { status: end.status, attempt: end.attempt },
      { status: "failed", attempt: 6 },
    );
    assert.match(String(end.error_message), /called tools/);
    assert.equal(events(stream, "abort").length, 0, "a boundary failure does not abort the task");
    const retry = requestAtoms(server, 2);
    const call = retry.at(-3)!.calls![0]!;
    assert.match(call, /^read_file\(\{"file_path":"x"\}\)#/);
    assertContext(retry.slice(-3), [
      { role: "assistant", text: "", calls: [call] },
      { role: "tool", id: call.split("#").at(-1)!, text: COMPACTION_TOOL_ERROR },
      userAtom(DEFAULT_COMPACTION_RETRY_PROMPT),
      userAtom(DEFAULT_COMPACTION_PROMPT),
    ]);
    const records = (await files(sb, session.sessionId))[0]!;
    assert.equal(ofKind(records, "tool_call_output").length, 6, "every repair output is written");
    const expected = await tracedContext(sb, session, "Still?");
    await run(session, "Still?");
    assertContext(requestAtoms(server, 7), expected, "committed attempts stay in the context");
    await session.dispose();
    await assertGoodTrace(sb.root, session.sessionId);
  });
});

Deno.test("repair and transport retries: a tool-call reply then a 500 then a summary completes at attempt 3", async () => {
  const server = await compactionAwareServer([turn.text("Hi.")], [
    turn.toolCall("read_file", { file_path: "x" }),
    turn.error(500),
    SUMMARY("Greeted."),
  ]);
  await withScene(
    server,
    { compaction: { max_session_turns: 1 }, session: { retryDelayMs: () => 0 } },
    async ({ sb, session }) => {
      const stream = await run(session, "Hello.");
      assertContext(
        requestAtoms(server, 3),
        requestAtoms(server, 2),
        "a transport failure resends unchanged",
      );
      const end = events(stream, "compaction_end")[0]!;
      assert.deepEqual({ status: end.status, attempt: end.attempt }, {
        status: "completed",
        attempt: 3,
      });
      const first = (await files(sb, session.sessionId))[0]!;
      const ends = ofKind(first, "request_end");
      assert.deepEqual(ends.map((e) => [e.status, e.attempt]), [
        ["completed", undefined],
        ["completed", undefined],
        ["timeout", 2],
        ["completed", 3],
      ]);
      assert.ok(
        !stream.some((m) => m.type === "model_msg" && m.payload.type === "tool_call"),
        "raw compaction output stays off the stream",
      );
      assert.ok(
        stream.some((m) =>
          m.type === "model_msg" && m.payload.type === "partial_text" &&
          m.payload.text.includes("Greeted")
        ),
      );
      await session.dispose();
      await assertGoodTrace(sb.root, session.sessionId);
    },
  );
});

Deno.test("manual compaction: skipped (nothing written) when empty, summarize when there are turns", async () => {
  const server = await compactionAwareServer([turn.text("Hi."), turn.text("Again.")], [
    SUMMARY("Greeted."),
  ]);
  await withScene(server, { compaction: {} }, async ({ sb, session }) => {
    const skipped = session.compact();
    const none = await skipped.next();
    assert.deepEqual(none, { done: true, value: { status: "skipped", skipped: "empty" } });
    await assert.rejects(Deno.stat(session.tracePath), Deno.errors.NotFound);
    await run(session, "Hello.");
    assert.equal(session.compactability(), "ok");
    const msgs: OmniMessage[] = [];
    const gen = session.compact();
    let r = await gen.next();
    while (!r.done) {
      msgs.push(r.value);
      r = await gen.next();
    }
    assert.deepEqual(r.value, { status: "completed", attempt: 1 });
    assert.equal(events(msgs, "compaction_begin")[0]!.reason, "manual");
    assert.equal(session.compactability(), "just_compacted");
    const again = await session.compact().next();
    assert.deepEqual(again.value, { status: "skipped", skipped: "just_compacted" });
    await run(session, "Where were we?");
    assertContext(requestAtoms(server, 2), [
      { role: "system", text: session.metaMessage.payload.system_prompt },
      userAtom(CONTEXT("Greeted.")),
      userAtom("Where were we?"),
    ]);
    await session.dispose();
    await assertGoodTrace(sb.root, session.sessionId);
  });
});

Deno.test("manual discard drops the context; the next request starts fresh", async () => {
  const server = await compactionAwareServer([turn.text("Hi."), turn.text("Fresh.")], []);
  await withScene(server, { compaction: { mode: "discard" } }, async ({ sb, session }) => {
    await run(session, "Hello.");
    const gen = session.compact();
    const msgs: OmniMessage[] = [];
    for (let r = await gen.next(); !r.done; r = await gen.next()) msgs.push(r.value);
    assert.deepEqual(msgs.map(kindOf), ["compaction_begin", "compaction_end"]);
    await run(session, "New topic.");
    assertContext(requestAtoms(server, 1), [
      { role: "system", text: session.metaMessage.payload.system_prompt },
      userAtom("New topic."),
    ]);
    await session.dispose();
    await assertGoodTrace(sb.root, session.sessionId);
  });
});
