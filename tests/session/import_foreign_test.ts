// The Codex, Claude Code and pi parsers on the recorded peer sessions in
// ../shared/fixtures/peer-sessions (driven by its manifest.json): prompts,
// answers, tool calls paired with their outputs, usage, the loss report;
// plus pi branches, malformed lines and detection.
import assert from "node:assert/strict";
import { join } from "node:path";
import type { CompleteMessage } from "../../lib/protocol/types.ts";
import { detectFormat, type ForeignSession, type Harness } from "../../lib/session/mod.ts";
import { MAX_CHILDREN, parseClaude } from "../../lib/session/import_claude.ts";
import { parseCodex } from "../../lib/session/import_codex.ts";
import { parsePi } from "../../lib/session/import_pi.ts";
import { resumeTrace } from "../../lib/session/replay.ts";

const PEERS = "/work/shared/fixtures/peer-sessions";

interface ManifestFile {
  path: string;
  role: string;
  toolCallsPerPrompt?: string[][];
}
interface Scenario {
  harness: Harness;
  scenario: string;
  prompts: Array<{ sent: string; final: string }>;
  files: ManifestFile[];
}

const MANIFEST: Scenario[] = JSON.parse(
  await Deno.readTextFile(join(PEERS, "manifest.json")),
);

async function parse(harness: Harness, path: string): Promise<ForeignSession> {
  const text = await Deno.readTextFile(path);
  if (harness === "codex") return parseCodex(text, path);
  if (harness === "pi") return parsePi(text, path);
  const dir = path.replace(/\.jsonl$/, "/subagents");
  const subs = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!e.name.endsWith(".jsonl")) continue;
      const file = join(dir, e.name);
      subs.push({
        file,
        text: await Deno.readTextFile(file),
        meta: JSON.parse(await Deno.readTextFile(file.replace(/\.jsonl$/, ".meta.json"))),
      });
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return parseClaude(text, path, subs);
}

function payloads(s: ForeignSession): CompleteMessage[] {
  return s.records.flatMap((r) => (r.type === "model_msg" ? [r.payload as CompleteMessage] : []));
}

/** Per prompt (a user text without a sender): the tool names called and the last answer. */
function perPrompt(s: ForeignSession): Array<{ prompt: string; calls: string[]; final: string }> {
  const out: Array<{ prompt: string; calls: string[]; final: string }> = [];
  for (const p of payloads(s)) {
    if (p.type === "text" && p.role === "user" && p.sender === undefined) {
      out.push({ prompt: p.text, calls: [], final: "" });
    } else if (p.type === "tool_call") out.at(-1)!.calls.push(p.name);
    else if (p.type === "text" && p.role === "assistant") out.at(-1)!.final = p.text;
  }
  return out;
}

function lossKinds(s: ForeignSession): string[] {
  return s.loss.map((l) => l.kind);
}

for (const sc of MANIFEST) {
  const main = sc.files.find((f) => f.role === "session")!;
  Deno.test(`peer fixture ${sc.harness}/${sc.scenario}: prompts, calls paired with outputs, answers, usage and the loss report`, async () => {
    const path = join(PEERS, main.path);
    assert.equal(detectFormat(await Deno.readTextFile(path)), sc.harness);
    const s = await parse(sc.harness, path);
    assert.deepEqual(s.problems, []);
    assert.ok(s.id !== "" && s.cwd.startsWith("/tmp/peer-"), `${s.id} ${s.cwd}`);
    assert.equal(s.modelId, "mock");
    // One entry per prompt, in order: the prompt as sent, its calls by name, its final answer.
    const got = perPrompt(s);
    assert.deepEqual(got.map((g) => g.prompt), sc.prompts.map((p) => p.sent));
    assert.deepEqual(got.map((g) => g.calls), main.toolCallsPerPrompt);
    // A one-word final arrives as "WORD: N steps [id]"; a Markdown one verbatim.
    got.forEach((g, i) => {
      const want = sc.prompts[i]!.final;
      if (/^\S+$/.test(want)) assert.match(g.final, new RegExp(`^${want}: \\d+ steps \\[`));
      else assert.equal(g.final, want);
    });
    // Every call answered exactly once, right after its request, by id.
    const ps = payloads(s);
    const calls = ps.flatMap((p) => (p.type === "tool_call" ? [p.tool_call_id] : []));
    const outputs = ps.flatMap((p) => (p.type === "tool_call_output" ? [p.tool_call_id] : []));
    assert.deepEqual(outputs, calls);
    assert.ok(ps.every((p) => p.type !== "tool_call_output" || p.stop_reason !== "aborted"));
    // Arguments are the recorded JSON objects.
    for (const p of ps) {
      if (p.type === "tool_call") assert.equal(typeof JSON.parse(p.arguments), "object");
    }
    // Usage: the mock's 120 in / 12 out per request, one token_usage per request.
    const requests = s.records.filter((r) =>
      r.type === "event_msg" && r.payload.type === "request_begin"
    );
    const usage = s.records.flatMap((r) =>
      r.type === "event_msg" && r.payload.type === "token_usage" ? [r.payload] : []
    );
    assert.equal(usage.length, requests.length);
    assert.ok(usage.every((u) => u.request.total === 132 && u.request.output === 12));
    assert.equal(usage.at(-1)!.session.total, 132 * requests.length);
    // Timestamps are the recorded ones (the day of the recording).
    assert.ok(s.records.every((r) => r.timestamp.startsWith("2026-12-01T")));
    // The replay a resume does sees the whole conversation, nothing pending.
    const replay = resumeTrace([
      { timestamp: s.startedAt, type: "session_meta", payload: {} as never },
      ...s.records,
    ]);
    assert.equal(replay.carryOver.length, 0);
    assert.equal(replay.history.length, ps.length);
    // The loss report: the harness's own bookkeeping, each with a count and file:line.
    const expected: Record<Harness, string[]> = {
      codex: ["turn_context", "response_item message role developer", "event_msg token_count"],
      claude: ["attachment skill_listing", "queue-operation enqueue", "toolUseResult"],
      pi: ["thinking_level_change", "toolResult details"],
    };
    for (const k of expected[sc.harness]) {
      assert.ok(lossKinds(s).includes(k), `${k} in ${lossKinds(s)}`);
    }
    for (const l of s.loss) {
      assert.ok(l.count > 0);
      assert.match(l.example, /\.jsonl:\d+$/);
      assert.ok(l.reason !== "");
    }
    if (sc.harness === "claude" && sc.scenario === "04-large-output") {
      assert.equal(s.loss.find((l) => l.kind === "persisted tool output")?.count, 1);
    }
    if (sc.harness === "codex") {
      const tc = s.loss.find((l) => l.kind === "turn_context")!;
      assert.equal(tc.count, sc.prompts.length);
    }
  });
}

Deno.test("Claude Code subagent transcript becomes a child session pointed at by the Agent call", async () => {
  const sc = MANIFEST.find((m) => m.harness === "claude" && m.scenario === "03-subagent")!;
  const main = sc.files.find((f) => f.role === "session")!;
  const sub = sc.files.find((f) => f.role === "subagent-transcript")!;
  const s = await parse("claude", join(PEERS, main.path));
  assert.equal(s.children.length, 1);
  const child = s.children[0]!;
  const agentCall = payloads(s).find((p) => p.type === "tool_call" && p.name === "Agent");
  assert.equal(child.toolCallId, agentCall?.type === "tool_call" ? agentCall.tool_call_id : "");
  // The pointer comes right before the Agent call's output.
  const i = s.records.findIndex((r) => r.type === "event_msg" && r.payload.type === "subagent");
  assert.equal((s.records[i]!.payload as { session_id: string }).session_id, child.session.id);
  assert.deepEqual(s.records[i + 1]!.payload.type, "tool_call_output");
  // The child: its first prompt is the parent's, its calls are the manifest's.
  const first = payloads(child.session)[0]!;
  assert.equal(first.type === "text" && first.sender, "parent_agent");
  assert.deepEqual(
    payloads(child.session).flatMap((p) => (p.type === "tool_call" ? [p.name] : [])),
    sub.toolCallsPerPrompt!.flat(),
  );
  // Without the subagent files, the report says the transcript is missing.
  const alone = parseClaude(await Deno.readTextFile(join(PEERS, main.path)), main.path);
  assert.equal(alone.children.length, 0);
  assert.ok(lossKinds(alone).includes("subagent transcript not found"));
});

Deno.test("pi: a tree with branches imports the branch to the last entry and names the dropped one", async () => {
  const sc = MANIFEST.find((m) => m.harness === "pi" && m.scenario === "02-resume")!;
  const path = join(PEERS, sc.files[0]!.path);
  const text = await Deno.readTextFile(path);
  const entries = text.trim().split("\n").map((l) => JSON.parse(l));
  // A second reply to the first final answer, appended (as pi's /tree does): the resumed turn is now off the path.
  const firstFinal = entries.find((e) =>
    e.type === "message" && e.message.role === "assistant" &&
    e.message.content[0]?.type === "text"
  );
  const extra = [
    {
      type: "message",
      id: "b0000001",
      parentId: firstFinal.id,
      timestamp: "2026-12-01T10:00:00.000Z",
      message: { role: "user", content: [{ type: "text", text: "another path" }] },
    },
    {
      type: "message",
      id: "b0000002",
      parentId: "b0000001",
      timestamp: "2026-12-01T10:00:01.000Z",
      message: { role: "assistant", content: [{ type: "text", text: "taken" }] },
    },
  ];
  const s = parsePi(text + extra.map((e) => JSON.stringify(e) + "\n").join(""), "branchy.jsonl");
  const got = perPrompt(s);
  assert.deepEqual(got.map((g) => g.prompt), [sc.prompts[0]!.sent, "another path"]);
  assert.equal(got[1]!.final, "taken");
  const dropped = s.loss.filter((l) => l.kind.startsWith("branch "));
  assert.equal(dropped.length, 1);
  // The dropped branch is the resumed turn: its user message and everything after it.
  const resumedStart = entries.findIndex((e) => e.id === extra[0]!.parentId) + 1;
  assert.equal(dropped[0]!.kind, `branch ${entries[resumedStart].id}`);
  assert.equal(dropped[0]!.count, entries.length - resumedStart);
  assert.match(dropped[0]!.reason, /leaf is /);
});

Deno.test("pi: past 50 dropped branches the loss report counts the others together", () => {
  const ts = "2026-12-01T10:00:00.000Z";
  const line = (id: string, parentId: string | null, role: string, text: string) =>
    JSON.stringify({
      type: "message",
      id,
      parentId,
      timestamp: ts,
      message: { role, content: [{ type: "text", text }] },
    }) + "\n";
  let text = JSON.stringify({ type: "session", version: 3, id: "s", timestamp: ts, cwd: "/w" }) +
    "\n" + line("root", null, "user", "first");
  // 60 one-entry branches off the root, two of them with a child, then the imported reply.
  for (let i = 0; i < 60; i++) text += line(`b${i}`, "root", "assistant", `dropped ${i}`);
  text += line("c1", "b1", "user", "below b1") + line("c55", "b55", "user", "below b55");
  text += line("last", "root", "assistant", "kept");
  const s = parsePi(text, "star.jsonl");
  const named = s.loss.filter((l) => l.kind.startsWith("branch "));
  assert.equal(named.length, 50);
  assert.deepEqual(named[1], {
    kind: "branch b1",
    count: 2,
    example: "star.jsonl:4",
    reason: named[1]!.reason,
  });
  assert.match(named[1]!.reason, /its leaf is c1\)/);
  const more = s.loss.filter((l) => l.kind === "more branches");
  assert.equal(more.length, 1);
  // b50…b59 and c55, below b55.
  assert.equal(more[0]!.count, 11);
  assert.match(more[0]!.reason, /one of 10 more branches .*the first 50 are named/);
  assert.deepEqual(perPrompt(s).map((g) => g.prompt), ["first"]);
});

Deno.test("malformed lines are file:line problems; the rest still converts", async () => {
  const sc = MANIFEST.find((m) => m.harness === "codex" && m.scenario === "02-resume")!;
  const path = join(PEERS, sc.files[0]!.path);
  const lines = (await Deno.readTextFile(path)).split("\n");
  lines.splice(9, 0, "{not json");
  lines.splice(12, 0, JSON.stringify({ nope: 1 }));
  const s = parseCodex(lines.join("\n"), "x.jsonl");
  assert.deepEqual(s.problems.map((p) => `${p.file}:${p.line}`), ["x.jsonl:10", "x.jsonl:13"]);
  assert.match(s.problems[0]!.reason, /not valid JSON/);
  assert.match(s.problems[1]!.reason, /not a Codex rollout record/);
  assert.equal(payloads(s).filter((p) => p.type === "tool_call").length, 4);
});

Deno.test("detectFormat: a penguin trace and unknown content", () => {
  assert.equal(
    detectFormat(JSON.stringify({
      timestamp: "t",
      type: "session_meta",
      payload: { session_id: "session-x", system_prompt: "" },
    })),
    "penguin",
  );
  assert.equal(detectFormat('{"hello": 1}\n'), null);
  assert.equal(detectFormat("not json\n"), null);
});

Deno.test("Claude Code: a rewound turn left as a branch is reported; the chain to the last message is imported", async () => {
  const sc = MANIFEST.find((m) => m.harness === "claude" && m.scenario === "02-resume")!;
  const path = join(PEERS, sc.files.find((f) => f.role === "session")!.path);
  const text = await Deno.readTextFile(path);
  const lines = text.trim().split("\n").map((l) => JSON.parse(l));
  const firstFinal = lines.find((l) =>
    l.type === "assistant" && l.message.content[0]?.type === "text"
  );
  const base = { sessionId: firstFinal.sessionId, cwd: firstFinal.cwd, isSidechain: false };
  const extra = [
    {
      ...base,
      type: "user",
      uuid: "u-branch-1",
      parentUuid: firstFinal.uuid,
      timestamp: "2026-12-01T10:00:00.000Z",
      message: { role: "user", content: "another path" },
    },
    {
      ...base,
      type: "assistant",
      uuid: "u-branch-2",
      parentUuid: "u-branch-1",
      timestamp: "2026-12-01T10:00:01.000Z",
      message: { id: "msg-b", role: "assistant", content: [{ type: "text", text: "taken" }] },
    },
  ];
  const s = parseClaude(text + extra.map((e) => JSON.stringify(e) + "\n").join(""), "c.jsonl");
  const got = perPrompt(s);
  assert.deepEqual(got.map((g) => g.prompt), [sc.prompts[0]!.sent, "another path"]);
  assert.deepEqual(got.map((g) => g.calls), [sc.files[0]!.toolCallsPerPrompt![0], []]);
  assert.equal(got[1]!.final, "taken");
  // The resumed turn's conversation lines are one dropped branch, starting at its prompt.
  const at = lines.indexOf(firstFinal);
  const resumed = lines.slice(at + 1).filter((l) =>
    (l.type === "user" || l.type === "assistant") && typeof l.uuid === "string"
  );
  const dropped = s.loss.filter((l) => l.kind.startsWith("branch "));
  assert.deepEqual(dropped.map((d) => [d.kind, d.count]), [[
    `branch ${resumed[0].uuid}`,
    resumed.length,
  ]]);
  assert.deepEqual(s.problems, []);
});

/** A Claude Code session's fields shared by every line of these tests. */
const CLAUDE_LINE = {
  sessionId: "s",
  cwd: "/w",
  isSidechain: false,
  timestamp: "2026-12-01T10:00:00.000Z",
};

/** A Claude Code session: a prompt, one message of `calls` (Agent calls) and one of `results`. */
function claudeAgentTurn(calls: unknown[], results: unknown[]): string {
  const c = CLAUDE_LINE;
  return [
    { ...c, type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "go" } },
    {
      ...c,
      type: "assistant",
      uuid: "a1",
      parentUuid: "u1",
      message: { id: "m1", role: "assistant", content: calls },
    },
    {
      ...c,
      type: "user",
      uuid: "u2",
      parentUuid: "a1",
      message: { role: "user", content: results },
    },
  ].map((l) => JSON.stringify(l) + "\n").join("");
}

/** A subagent transcript of one prompt. */
const CLAUDE_CHILD = JSON.stringify({
  ...CLAUDE_LINE,
  isSidechain: true,
  type: "user",
  uuid: "c1",
  parentUuid: null,
  message: { role: "user", content: "x" },
}) + "\n";

Deno.test("Claude Code: a transcript named by many results of one Agent call is one child", () => {
  const results = Array.from({ length: 5 }, (_, i) => ({
    type: "tool_result",
    tool_use_id: "agent-call",
    content: `done ${i}`,
  }));
  const call = { type: "tool_use", id: "agent-call", name: "Agent", input: { prompt: "x" } };
  const text = claudeAgentTurn([call], results);
  const child = CLAUDE_CHILD;
  const s = parseClaude(text, "main.jsonl", [
    { file: "agent-1.jsonl", text: child, meta: { toolUseId: "agent-call" } },
  ]);
  assert.equal(s.children.length, 1);
  const again = s.loss.find((l) => l.kind === "subagent transcript named again");
  assert.equal(again?.count, 4);
});

Deno.test("the loss report names 200 kinds at most; records of more kinds count together", () => {
  const c = {
    sessionId: "s",
    cwd: "/w",
    isSidechain: false,
    timestamp: "2026-12-01T10:00:00.000Z",
  };
  const lines = [
    { ...c, type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "go" } },
  ];
  // 300 bookkeeping lines, each of a type of its own (one with a very long name).
  for (let i = 0; i < 300; i++) {
    lines.push({ ...c, type: i === 0 ? "k".repeat(5000) : `kind-${i}` } as never);
  }
  const s = parseClaude(lines.map((l) => JSON.stringify(l) + "\n").join(""), "kinds.jsonl");
  assert.equal(s.loss.length, 201); // 200 named, then the one for the others
  assert.ok(s.loss.every((l) => l.kind.length <= 120), "a kind's name is cut");
  const more = s.loss.find((l) => l.kind === "records of more kinds");
  assert.equal(more?.count, 100);
});

Deno.test("Claude Code: lines without a timestamp get the last record's time, else the epoch", () => {
  const c = { sessionId: "s", cwd: "/w", isSidechain: false };
  const lines = [
    { ...c, type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "go" } },
    {
      ...c,
      type: "assistant",
      uuid: "a1",
      parentUuid: "u1",
      timestamp: "2026-12-01T10:00:01.000Z",
      message: { id: "m1", role: "assistant", content: [{ type: "text", text: "ok" }] },
    },
    {
      ...c,
      type: "user",
      uuid: "u2",
      parentUuid: "a1",
      message: { role: "user", content: "and?" },
    },
  ];
  const s = parseClaude(lines.map((l) => JSON.stringify(l) + "\n").join(""), "untimed.jsonl");
  const times = s.records.map((r) => r.timestamp);
  assert.ok(times.length > 0);
  assert.ok(times.every((t) => !Number.isNaN(Date.parse(t))), times.join(" "));
  assert.equal(times[0], "1970-01-01T00:00:00.000Z");
  assert.equal(times.at(-1), "2026-12-01T10:00:01.000Z");
});

Deno.test("Claude Code: past MAX_CHILDREN subagent transcripts, the others keep only their answers", () => {
  const n = MAX_CHILDREN + 3;
  const calls = Array.from({ length: n }, (_, i) => ({
    type: "tool_use",
    id: `call-${i}`,
    name: "Agent",
    input: { prompt: "x" },
  }));
  const results = Array.from({ length: n }, (_, i) => ({
    type: "tool_result",
    tool_use_id: `call-${i}`,
    content: `done ${i}`,
  }));
  const text = claudeAgentTurn(calls, results);
  const child = CLAUDE_CHILD;
  const subs = Array.from({ length: n }, (_, i) => ({
    file: `agent-${i}.jsonl`,
    text: child,
    meta: { toolUseId: `call-${i}` },
  }));
  const s = parseClaude(text, "many.jsonl", subs);
  assert.equal(s.children.length, MAX_CHILDREN);
  assert.equal(s.loss.find((l) => l.kind === "subagent transcript past the limit")?.count, 3);
  assert.equal(s.loss.find((l) => l.kind.startsWith("subagent transcript not linked")), undefined);
});
