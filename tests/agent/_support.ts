/**
 * Helpers of the agent tests: a temporary data root whose default model is
 * the scripted model server, reading a session's trace back, and the
 * record-order checker every test runs on every trace it produces.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { validateTraceFiles } from "../../lib/trace/validate.ts";
import { readTraceFile } from "../../lib/trace/reader.ts";
import { listSessionFiles } from "../../lib/trace/paths.ts";

import type { ModelServer, startModelServer } from "../support/model_server.ts";
import { createAgent, type Session } from "../../lib/agent/mod.ts";
import { type Sandbox, withModelRoot } from "../support/roots.ts";

export { makeRoot, type Sandbox } from "../support/roots.ts";

/** The traces directory of the default agent under `root`. */
export function tracesDir(root: string, agentId = "default_agent"): string {
  return join(root, "default_project", "agents", agentId, "traces");
}

/** Every record of `sessionId`'s trace files, in file then line order. */
export async function readSession(root: string, sessionId: string): Promise<OmniMessage[]> {
  const files = await listSessionFiles(tracesDir(root), sessionId);
  assert.ok(files.length > 0, `a trace file exists for ${sessionId}`);
  const out: OmniMessage[] = [];
  for (const f of files) {
    const contents = await readTraceFile(f.path);
    out.push(...contents.records.map((r) => r.message));
  }
  return out;
}

/**
 * Assert the trace validates (`penguin trace validate` clean) and each of
 * its files follows the record order rules; resolves to every record.
 */
export async function assertGoodTrace(root: string, sessionId: string): Promise<OmniMessage[]> {
  const report = await validateTraceFiles([tracesDir(root)]);
  assert.deepEqual(report.problems, [], "the traces validate");
  const out: OmniMessage[] = [];
  for (const f of await listSessionFiles(tracesDir(root), sessionId)) {
    const records = (await readTraceFile(f.path)).records.map((r) => r.message);
    checkRecordOrder(records);
    out.push(...records);
  }
  assert.ok(out.length > 0, `a trace file exists for ${sessionId}`);
  return out;
}

function kind(m: OmniMessage): string {
  return m.type === "session_meta" ? "session_meta" : String(m.payload.type);
}

/**
 * The record-order rules every trace keeps:
 * one `session_meta` first; no partials or origin-tagged records; user input
 * outside request spans and before the span that consumes it;
 * `tool_list_ready` right after a run's input (once per session object:
 * the first run, and the first run after a resume), before the first request; spans never nest and every span closes; assistant messages only
 * inside spans (except the max-turns notice); `approval_decision` right after
 * its `tool_call`; `token_usage` only on completed requests, immediately
 * followed by `request_end{completed}`; every output answers an earlier call,
 * at most once; every judged call answered before the next request begins;
 * `abort` outside spans.
 */
export function checkRecordOrder(records: readonly OmniMessage[]): void {
  assert.ok(records.length > 0, "the trace has records");
  assert.equal(records[0]!.type, "session_meta", "the first record is session_meta");
  let inSpan = false;
  let sawToolList = false;
  let sawInput = false;
  let spanHasUsage = false;
  const calls = new Map<string, string>(); // id -> decision ("" = none yet)
  const answered = new Set<string>();
  for (let i = 0; i < records.length; i++) {
    const m = records[i]!;
    const k = kind(m);
    const at = `record ${i + 1} (${k})`;
    assert.equal(m.origin, undefined, `${at}: no origin in a trace`);
    if (i > 0) assert.notEqual(m.type, "session_meta", `${at}: one session_meta per file`);
    assert.ok(!k.startsWith("partial_"), `${at}: no partials in a trace`);
    const p = m.payload as Record<string, unknown>;
    switch (k) {
      case "request_begin":
        assert.ok(!inSpan, `${at}: request spans do not nest`);
        assert.ok(sawToolList, `${at}: tool_list_ready precedes the first request`);
        for (const [id, decision] of calls) {
          if (decision !== "") {
            assert.ok(answered.has(id), `${at}: call ${id} was answered before the next request`);
          }
        }
        inSpan = true;
        spanHasUsage = false;
        break;
      case "request_end": {
        assert.ok(inSpan, `${at}: request_end closes a span`);
        inSpan = false;
        const prev = kind(records[i - 1]!);
        if (p.status === "completed") {
          assert.equal(
            prev,
            "token_usage",
            `${at}: token_usage immediately precedes request_end{completed}`,
          );
          assert.equal(p.error_message, undefined, `${at}: no error_message on success`);
          assert.equal(p.retry_in_ms, undefined, `${at}: no retry_in_ms on success`);
        } else {
          assert.ok(!spanHasUsage, `${at}: no token_usage on a failed request`);
          assert.equal(typeof p.error_message, "string", `${at}: error_message on failure`);
          assert.equal(typeof p.attempt, "number", `${at}: attempt on failure`);
        }
        break;
      }
      case "token_usage":
        assert.ok(inSpan, `${at}: token_usage inside a span`);
        assert.equal(
          kind(records[i + 1]!),
          "request_end",
          `${at}: request_end right after token_usage`,
        );
        spanHasUsage = true;
        break;
      case "tool_list_ready": {
        // Once per session object: at the first run, and again at the first run after a resume;
        // or right after session_meta at the head of a file a compaction rotated to.
        const prev = records[i - 1]!.payload as Record<string, unknown>;
        assert.ok(!inSpan, `${at}: outside request spans`);
        if (i !== 1) {
          assert.ok(sawInput, `${at}: tool_list_ready follows the first input`);
          assert.ok(
            prev.type === "text" && prev.role === "user",
            `${at}: right after a run's input`,
          );
        }
        sawToolList = true;
        break;
      }
      case "approval_decision": {
        const prev = records[i - 1]!.payload as Record<string, unknown>;
        assert.equal(prev.type, "tool_call", `${at}: right after a tool_call`);
        assert.equal(prev.tool_call_id, p.tool_call_id, `${at}: right after its own tool_call`);
        calls.set(String(p.tool_call_id), String(p.decision));
        break;
      }
      case "abort":
        assert.ok(!inSpan, `${at}: abort outside a request span`);
        break;
      case "tool_call":
        assert.ok(inSpan, `${at}: tool calls inside a span`);
        assert.equal(typeof p.stop_reason, "string", `${at}: stop_reason set`);
        if (p.stop_reason === "completed") calls.set(String(p.tool_call_id), "");
        break;
      case "tool_call_output": {
        const id = String(p.tool_call_id);
        assert.ok(calls.has(id), `${at}: answers an earlier call (${id})`);
        assert.ok(!answered.has(id), `${at}: one output per call (${id})`);
        answered.add(id);
        break;
      }
      case "text":
      case "thinking":
        assert.equal(typeof p.stop_reason, "string", `${at}: stop_reason set`);
        if (p.role === "user") {
          assert.ok(!inSpan, `${at}: user input is written outside request spans`);
          sawInput = true;
        } else if (!inSpan) {
          assert.match(
            String(p.text),
            /^\[reached max turns \(\d+\); stopping\]$/,
            `${at}: assistant output inside spans`,
          );
        }
        break;
      default:
        break;
    }
  }
  assert.ok(!inSpan, "every request span is closed");
}

/** The records of `kind`. */
export function ofKind(records: readonly OmniMessage[], k: string): Record<string, unknown>[] {
  return records.filter((m) => kind(m) === k).map((m) => m.payload as Record<string, unknown>);
}

/** The sequence of record kinds. */
export function kinds(records: readonly OmniMessage[]): string[] {
  return records.map(kind);
}

/** Every message a run yields. */
export async function collect(gen: AsyncIterable<OmniMessage>): Promise<OmniMessage[]> {
  const out: OmniMessage[] = [];
  for await (const m of gen) out.push(m);
  return out;
}

/** The non-partial messages of a stream. */
export function completesOf(stream: readonly OmniMessage[]): OmniMessage[] {
  return stream.filter((m) => !String(m.payload.type).startsWith("partial_"));
}

/** The chat-completions `messages` array of the `i`-th request the server received. */
export function requestMessages(server: ModelServer, i: number): Record<string, unknown>[] {
  const req = server.requests[i];
  assert.ok(req, `request ${i} was made`);
  return (req.body as { messages: Record<string, unknown>[] }).messages;
}

/** Resolve once `pred()` holds, polling every 10 ms; fails after `ms` (default 120 s: a failsafe for a hung test, never a timing claim). */
export async function waitFor(pred: () => boolean, what: string, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Run `body` with a session (no retry delay, then `sessionOpts`) of the
 * default agent of a fresh data root whose model server `script` scripts;
 * the session is disposed afterwards.
 */
export async function withAgentSession(
  script: Parameters<typeof startModelServer>[0],
  body: (s: Session, sb: Sandbox, server: ModelServer) => Promise<void>,
  sessionOpts: { maxTurns?: number } = {},
): Promise<void> {
  await withModelRoot(script ?? {}, async (sb, server) => {
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession({
      workspaceDir: sb.workspace,
      retryDelayMs: () => 0,
      ...sessionOpts,
    });
    try {
      await body(session, sb, server);
    } finally {
      await session.dispose();
    }
  });
}
