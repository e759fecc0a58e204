// agent.resumeSession: the resumed session's next
// request, as the scripted server receives it, carries exactly what the
// trace committed; refusals write nothing.
import assert from "node:assert/strict";
import { join } from "node:path";
import { type Agent, createAgent } from "../../lib/agent/mod.ts";
import { INTERRUPTED_OUTPUT } from "../../lib/session/mod.ts";
import { removeModel } from "../../lib/state/project_config.ts";
import { readTraceFile } from "../../lib/trace/reader.ts";
import { validateTraceFiles } from "../../lib/trace/validate.ts";
import { listSessionFiles } from "../../lib/trace/paths.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { type ModelServer, startModelServer, turn } from "../support/model_server.ts";
import { assertGoodTrace, collect, ofKind, type Sandbox, tracesDir, waitFor } from "./_support.ts";
import {
  assertContext,
  type Atom,
  atomsOfContext,
  completes,
  requestAtoms,
  treeDigest,
  userAtom,
} from "./_resume_support.ts";
import { withModelRoot } from "../support/roots.ts";

/** `body` with a model root on `server` and its agent. */
function withAgent(
  server: ModelServer,
  fn: (sb: Sandbox, agent: Agent) => Promise<void>,
): Promise<void> {
  return withModelRoot(server, async (sb) => await fn(sb, await createAgent({ root: sb.root })));
}

/** Record a first session: a write_file call, then a text answer. */
async function recordTwoTurns(agent: Agent, sb: Sandbox): Promise<string> {
  const first = await agent.createSession({ workspaceDir: sb.workspace });
  await collect(first.run("Write a.", { approve: "allow-all" }));
  await first.dispose();
  return first.sessionId;
}

const TWO_TURNS = () => [
  turn.toolCall("write_file", { file_path: "a.txt", content: "A" }),
  turn.text("Wrote it."),
];

const answer = (text: string): Atom => ({ role: "assistant", text, calls: [] });

for (const how of ["id", "path", "latest"] as const) {
  Deno.test(`a session resumed by ${how} sends exactly the committed history, then the new prompt`, async () => {
    const server = await startModelServer({ turns: [...TWO_TURNS(), turn.text("Still here.")] });
    await withAgent(server, async (sb, agent) => {
      const sid = await recordTwoTurns(agent, sb);
      const path = (await listSessionFiles(tracesDir(sb.root), sid))[0]!.path;
      assert.equal(await agent.latestSessionId(), sid);
      const target = how === "id" ? sid : how === "path" ? path : "latest";
      const again = await agent.resumeSession({ target });
      assert.equal(again.sessionId, sid);
      assert.equal(again.tracePath, path, "appending continues in the same file");
      assert.ok(again.resumedHistory!.length > 0);
      await collect(again.run("Still there?", { approve: "allow-all" }));
      await again.dispose();

      assertContext(requestAtoms(server, 2), [
        ...requestAtoms(server, 1),
        answer("Wrote it."),
        userAtom("Still there?"),
      ]);
      const records = await assertGoodTrace(sb.root, sid);
      const prompts = ofKind(records, "text").filter((p) => p.role === "user").map((p) => p.text);
      assert.deepEqual(prompts, ["Write a.", "Still there?"], "only the new prompt is written");
      assert.equal(records.filter((m) => m.type === "session_meta").length, 1);
      assert.equal(ofKind(records, "tool_list_ready").length, 2, "once per session object");
    });
  });
}

Deno.test("the resumed session's system prompt is the recorded one and its tool-call ids stay unique", async () => {
  const server = await startModelServer({
    turns: [
      turn.toolCall("write_file", { file_path: "a.txt", content: "A" }),
      turn.text("One."),
      turn.toolCall("write_file", { file_path: "b.txt", content: "B" }),
      turn.text("Two."),
    ],
  });
  await withAgent(server, async (sb, agent) => {
    const first = await agent.createSession({ workspaceDir: sb.workspace });
    await collect(first.run("Write a.", { approve: "allow-all" }));
    await first.dispose();
    const again = await agent.resumeSession({ target: first.sessionId });
    assert.equal(again.metaMessage.payload.system_prompt, first.metaMessage.payload.system_prompt);
    await collect(again.run("Write b.", { approve: "allow-all" }));
    await again.dispose();
    const sent = (server.requests[2]!.body as { messages: { role: string; content: unknown }[] })
      .messages;
    assert.equal(sent[0]!.content, first.metaMessage.payload.system_prompt);
    const records = await assertGoodTrace(sb.root, first.sessionId);
    const ids = ofKind(records, "tool_call").map((p) => p.tool_call_id);
    assert.equal(ids.length, 2);
    assert.equal(new Set(ids).size, 2, `historical ids were pre-registered: ${ids}`);
    assert.equal(await Deno.readTextFile(join(sb.workspace, "b.txt")), "B");
  });
});

Deno.test("an aborted round is re-carried on resume: its prompt is sent again but not written again", async () => {
  let release!: () => void;
  const stalled = new Promise<void>((r) => (release = r));
  const server = await startModelServer({
    handler: (_req, i) => {
      if (i === 0) return { ...turn.text("never finished"), stall_after: 1 };
      release();
      return turn.text("Done now.");
    },
  });
  await withAgent(server, async (sb, agent) => {
    const first = await agent.createSession({ workspaceDir: sb.workspace });
    const ctl = new AbortController();
    const run = collect(first.run("Do the thing.", { approve: "allow-all", signal: ctl.signal }));
    await waitFor(() => server.requests.length === 1, "the first request");
    ctl.abort();
    await run;
    await first.dispose();
    const again = await agent.resumeSession({ target: first.sessionId });
    await collect(again.run("Go on.", { approve: "allow-all" }));
    await again.dispose();
    await stalled;
    assertContext(requestAtoms(server, 1), [...requestAtoms(server, 0), userAtom("Go on.")]);
    const records = await assertGoodTrace(sb.root, first.sessionId);
    const prompts = ofKind(records, "text").filter((p) => p.role === "user").map((p) => p.text);
    assert.deepEqual(prompts, ["Do the thing.", "Go on."]);
  });
});

/** Write a trace file by hand (records as given) for session `sid` of the default agent. */
async function writeTrace(root: string, sid: string, records: OmniMessage[]): Promise<string> {
  const dir = join(tracesDir(root), "2026-01-02");
  await Deno.mkdir(dir, { recursive: true });
  const path = join(dir, `${sid}_001.jsonl`);
  await Deno.writeTextFile(path, records.map((r) => JSON.stringify(r) + "\n").join(""));
  return path;
}

const T = "2026-01-02T03:04:05.000Z";
const ev = (payload: Record<string, unknown>): OmniMessage =>
  ({ timestamp: T, type: "event_msg", payload }) as OmniMessage;
const mm = (payload: Record<string, unknown>): OmniMessage =>
  ({
    timestamp: T,
    type: "model_msg",
    payload: { stop_reason: "completed", ...payload },
  }) as OmniMessage;
const usage = (total: number, session: number) =>
  ev({
    type: "token_usage",
    session: { cache_read: 0, cache_write: session, output: 0, total: session },
    request: { cache_read: 0, cache_write: total, output: 0, total },
  });

function metaOf(sid: string, sb: Sandbox): OmniMessage {
  return {
    timestamp: T,
    type: "session_meta",
    payload: {
      session_id: sid,
      provider: "custom",
      model_id: "m",
      model_context_window: "unknown",
      system_prompt: "You are a test.",
      agent_state: join(sb.root, "state"),
      workspace: sb.workspace,
    },
  } as OmniMessage;
}

const SID = "session-2026-01-02-03-04-05-0badcafe";

/**
 * Write session SID's trace: its meta, one finished turn (`prompt` answered
 * by `reply`, `tokens` in context), a summarize compaction of it with its
 * request begun, then `rest`; returns the file's path.
 */
function writeCompacting(
  sb: Sandbox,
  [prompt, reply, tokens]: [string, string, number],
  rest: OmniMessage[],
): Promise<string> {
  return writeTrace(sb.root, SID, [
    metaOf(SID, sb),
    mm({ type: "text", role: "user", text: prompt }),
    ev({ type: "tool_list_ready", tools: [] }),
    ev({ type: "request_begin" }),
    mm({ type: "text", role: "assistant", text: reply }),
    usage(tokens, tokens),
    ev({ type: "request_end", status: "completed" }),
    ev({ type: "compaction_begin", reason: "turns", mode: "summarize", context: tokens, turns: 1 }),
    mm({ type: "text", role: "user", text: "Summarize please." }),
    ev({ type: "request_begin" }),
    ...rest,
  ]);
}

Deno.test("a compaction the dead process left open is closed as failed on resume; its prompt is not context", async () => {
  const server = await startModelServer({ turns: [turn.text("Back.")] });
  await withAgent(server, async (sb, agent) => {
    const path = await writeCompacting(sb, ["Hello.", "Hi.", 50], [
      mm({ type: "text", role: "assistant", text: "[summary]half" }),
    ]);
    const again = await agent.resumeSession({ target: SID });
    const closed = (await readTraceFile(path)).records.at(-1)!.message;
    assert.deepEqual(closed.payload, {
      type: "compaction_end",
      reason: "turns",
      mode: "summarize",
      status: "failed",
    });
    assert.equal(again.compactability(), "ok");
    await collect(again.run("And now?", { approve: "allow-all" }));
    await again.dispose();
    assertContext(requestAtoms(server, 0), [
      { role: "system", text: "You are a test." },
      userAtom("Hello."),
      answer("Hi."),
      userAtom("And now?"),
    ]);
    // The dead process left a request open: a warning, not a problem.
    const report = await validateTraceFiles([tracesDir(sb.root)]);
    assert.deepEqual(report.problems, []);
    assert.equal(report.warnings.length, 1);
    const records = (await readTraceFile(path)).records.map((r) => r.message);
    assert.equal(ofKind(records, "compaction_end").length, 1);
  });
});

Deno.test("a file closed by a completed compaction resumes from the summary alone and rotates before writing", async () => {
  const server = await startModelServer({ turns: [turn.text("Continuing.")] });
  await withAgent(server, async (sb, agent) => {
    const path = await writeCompacting(sb, ["Long task.", "Working.", 90], [
      mm({ type: "text", role: "assistant", text: "[summary]Task half done.[/summary]" }),
      usage(95, 185),
      ev({ type: "request_end", status: "completed" }),
      ev({ type: "compaction_end", reason: "turns", mode: "summarize", status: "completed" }),
    ]);
    const before = await Deno.readTextFile(path);
    const again = await agent.resumeSession({ target: SID });
    assert.equal(again.compactability(), "just_compacted");
    assert.deepEqual(again.resumedHistory, []);
    const stream = await collect(again.run("Next step.", { approve: "allow-all" }));
    await again.dispose();
    const summary = "[context_summary]\nTask half done.\n[/context_summary]";
    assertContext(requestAtoms(server, 0), [
      { role: "system", text: "You are a test." },
      userAtom(summary),
      userAtom("Next step."),
    ]);
    assert.ok(stream.some((m) => m.type === "model_msg" && m.payload.type === "text"));
    assert.equal(await Deno.readTextFile(path), before, "the closed file is not touched");
    const files = await listSessionFiles(tracesDir(sb.root), SID);
    assert.deepEqual(files.map((f) => f.index), [1, 2]);
    const second = (await readTraceFile(files[1]!.path)).records.map((r) => r.message);
    assert.deepEqual(
      second.slice(0, 4).map((m) => m.type === "session_meta" ? m.type : m.payload.type),
      ["session_meta", "tool_list_ready", "text", "text"],
    );
    assert.deepEqual(atomsOfContext(completes(second)).slice(0, 2), [
      userAtom(summary),
      userAtom("Next step."),
    ]);
    await assertGoodTrace(sb.root, SID);
  });
});

Deno.test("committed calls without outputs are answered by placeholders (in memory only), before the new prompt", async () => {
  const server = await startModelServer({ turns: [turn.text("Understood.")] });
  await withAgent(server, async (sb, agent) => {
    const path = await writeTrace(sb.root, SID, [
      metaOf(SID, sb),
      mm({ type: "text", role: "user", text: "Run two." }),
      ev({ type: "tool_list_ready", tools: [] }),
      ev({ type: "request_begin" }),
      mm({
        type: "tool_call",
        role: "assistant",
        name: "read_file",
        arguments: "{}",
        tool_call_id: "c1",
      }),
      mm({
        type: "tool_call",
        role: "assistant",
        name: "read_file",
        arguments: "{}",
        tool_call_id: "c2",
      }),
      usage(60, 60),
      ev({ type: "request_end", status: "completed" }),
      mm({ type: "tool_call_output", role: "user", output: "two", tool_call_id: "c2" }),
    ]);
    const again = await agent.resumeSession({ target: SID });
    await collect(again.run("Status?", { approve: "allow-all" }));
    await again.dispose();
    assertContext(requestAtoms(server, 0), [
      { role: "system", text: "You are a test." },
      userAtom("Run two."),
      { role: "assistant", text: "", calls: ["read_file({})#c1", "read_file({})#c2"] },
      { role: "tool", id: "c1", text: INTERRUPTED_OUTPUT },
      { role: "tool", id: "c2", text: "two" },
      userAtom("Status?"),
    ]);
    const text = await Deno.readTextFile(path);
    assert.ok(!text.includes(INTERRUPTED_OUTPUT), "placeholders are never written");
  });
});

Deno.test("resume refusals name the problem and write nothing: locked, workspace gone, pair gone, other agent", async () => {
  const server = await startModelServer({ turns: TWO_TURNS() });
  await withAgent(server, async (sb, agent) => {
    const sid = await recordTwoTurns(agent, sb);
    const digest = await treeDigest(sb.root);

    const live = await agent.resumeSession({ target: sid });
    await assert.rejects(
      agent.resumeSession({ target: sid }),
      (err: Error) => {
        assert.match(
          err.message,
          new RegExp(`^Cannot resume session ${sid}: it is locked by process ${Deno.pid}\\b`),
        );
        return true;
      },
    );
    await live.dispose();
    assert.equal(await treeDigest(sb.root), digest);

    const other = await createAgent({ root: sb.root, agentId: "other" });
    const otherDigest = await treeDigest(sb.root);
    const path = (await listSessionFiles(tracesDir(sb.root), sid))[0]!.path;
    await assert.rejects(
      other.resumeSession({ target: path }),
      /not under agent "other".*--agent-id default_agent/,
    );
    await assert.rejects(other.resumeSession({ target: sid }), /belongs to agent "default_agent"/);
    assert.equal(await treeDigest(sb.root), otherDigest);

    await removeModel(join(sb.root, "default_project", ".project_config.toml"), {
      provider: "custom",
      model_id: "m",
    });
    const noPair = await createAgent({ root: sb.root });
    const pairDigest = await treeDigest(sb.root);
    await assert.rejects(
      noPair.resumeSession({ target: sid }),
      /^PenguinError: Cannot resume session .*: its model \(custom, m\) is not configured in .*; no models are configured/,
    );
    assert.equal(await treeDigest(sb.root), pairDigest);

    await Deno.remove(sb.workspace, { recursive: true });
    const wsDigest = await treeDigest(sb.root);
    await assert.rejects(
      agent.resumeSession({ target: sid }),
      /Workspace does not exist: .*a workspace is never recreated/,
    );
    await assert.rejects(
      agent.resumeSession({ target: "session-2026-01-01-00-00-00-00000000" }),
      /Session does not exist/,
    );
    assert.equal(await treeDigest(sb.root), wsDigest);
  });
});
