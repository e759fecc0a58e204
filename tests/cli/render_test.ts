import assert from "node:assert/strict";
import { builtinToolPreviews } from "../../lib/agent/tool_previews.ts";
import type {
  EventPayload,
  ModelPayload,
  OmniMessage,
  StopReason,
  TokenCounts,
  ToolCallMessage,
} from "../../lib/protocol/types.ts";
import {
  createRenderer,
  createSpinner,
  type Renderer,
  renderHistory,
} from "../../lib/cli/render/mod.ts";
import { paletteFor, toolCallPreview, type ToolPreviews } from "../../lib/display/mod.ts";
import { PREVIEW_READ_MAX, readField } from "../../lib/display/tool_preview.ts";
import { garbageCollector } from "../../lib/state/_gc.ts";

// ---------------------------------------------------------------------------
// Message builders with a controllable clock (timestamps drive elapsed time).
// ---------------------------------------------------------------------------

let clock = Date.parse("2026-01-01T00:00:00.000Z");
const ts = (advanceMs = 0) => new Date(clock += advanceMs).toISOString();

function model(payload: ModelPayload, origin?: string[]): OmniMessage {
  const m: OmniMessage = { timestamp: ts(), type: "model_msg", payload };
  if (origin) m.origin = origin;
  return m;
}
function event(payload: EventPayload, origin?: string[], advanceMs = 0): OmniMessage {
  const m: OmniMessage = { timestamp: ts(advanceMs), type: "event_msg", payload };
  if (origin) m.origin = origin;
  return m;
}

function textStream(text: string, chunk = 4): OmniMessage[] {
  const out = [model({
    type: "partial_text",
    role: "assistant",
    event_type: "start",
    text: "",
    stop_reason: "completed",
  })];
  for (let i = 0; i < text.length; i += chunk) {
    out.push(model({
      type: "partial_text",
      role: "assistant",
      event_type: "delta",
      text: text.slice(i, i + chunk),
      stop_reason: "completed",
    }));
  }
  out.push(model({
    type: "partial_text",
    role: "assistant",
    event_type: "stop",
    text: "",
    stop_reason: "completed",
  }));
  out.push(model({ type: "text", role: "assistant", text, stop_reason: "completed" }));
  return out;
}

function thinkingStream(thinking: string): OmniMessage[] {
  const part = (event_type: "start" | "delta" | "stop", t: string) =>
    model({
      type: "partial_thinking",
      role: "assistant",
      event_type,
      thinking: t,
      stop_reason: "completed",
    });
  return [
    part("start", ""),
    part("delta", thinking),
    part("stop", ""),
    model({ type: "thinking", role: "assistant", thinking, stop_reason: "completed" }),
  ];
}

function callStream(id: string, name: string, args: string, chunk = 5): OmniMessage[] {
  const part = (event_type: "start" | "delta" | "stop", n: string, a: string) =>
    model({
      type: "partial_tool_call",
      role: "assistant",
      event_type,
      name: n,
      arguments: a,
      tool_call_id: id,
      stop_reason: "completed",
    });
  const out = [part("start", name, "")];
  for (let i = 0; i < args.length; i += chunk) {
    out.push(part("delta", "", args.slice(i, i + chunk)));
  }
  out.push(part("stop", "", ""));
  out.push(completeCall(id, name, args));
  return out;
}

function completeCall(id: string, name: string, args: string, origin?: string[]): OmniMessage {
  return model({
    type: "tool_call",
    role: "assistant",
    name,
    arguments: args,
    tool_call_id: id,
    stop_reason: "completed",
  }, origin);
}

function outputStream(
  id: string,
  output: string,
  chunks: string[] = [output],
  stop_reason: StopReason = "completed",
): OmniMessage[] {
  const part = (event_type: "start" | "delta" | "stop", o: string) =>
    model({
      type: "partial_tool_call_output",
      role: "user",
      event_type,
      output: o,
      tool_call_id: id,
      stop_reason,
    });
  return [
    part("start", ""),
    ...chunks.map((c) => part("delta", c)),
    part("stop", ""),
    model({ type: "tool_call_output", role: "user", output, tool_call_id: id, stop_reason }),
  ];
}

const counts = (total: number): TokenCounts => ({
  cache_read: 0,
  cache_write: total,
  output: 0,
  total,
});

function usage(request: number, session: number, origin?: string[]): OmniMessage {
  return event({ type: "token_usage", request: counts(request), session: counts(session) }, origin);
}

/** A renderer with the builtin previews, no colour and no collapsing unless `opts` say so. */
function harness(opts: Partial<Parameters<typeof createRenderer>[0]> = {}): {
  r: Renderer;
  /** Everything written so far. */
  out: () => string;
  /** Forget what was written so far. */
  clear: () => void;
  write: (t: string) => void;
} {
  let buf = "";
  const write = (t: string) => (buf += t);
  const r = createRenderer({
    toolPreviews: builtinToolPreviews,
    color: false,
    collapse: false,
    // The task's wall time is read from the test clock the messages advance.
    now: () => clock,
    ...opts,
    write,
  });
  return { r, out: () => buf, clear: () => (buf = ""), write };
}

function run(msgs: OmniMessage[], opts: { color?: boolean; collapse?: boolean } = {}): string {
  const { r, out } = harness(opts);
  r.beginTask();
  for (const m of msgs) r.push(m);
  r.endTask();
  return out();
}

const ESC_CYAN = "\x1b[36m";
const ESC_RESET = "\x1b[0m";

const lines = (n: number, from = 1) =>
  Array.from({ length: n }, (_, i) => `line ${i + from}`).join("\n") + "\n";

/** What `/expand #1` prints of an exec_command output of {@linkcode lines}`(n)`. */
const fullExecOutput = (n: number) =>
  "[#1] exec_command -> (full output)\n" +
  lines(n).split("\n").slice(0, -1).map((l) => `  │ ${l}\n`).join("");

// ---------------------------------------------------------------------------

Deno.test("renderer streams text raw and does not repeat the complete message", () => {
  assert.equal(run(textStream("Hello, streaming world.")), "Hello, streaming world.\n");
});

Deno.test("renderer puts thinking on its own line before the answer; dim only with colour", () => {
  const msgs = [...thinkingStream("Let me think."), ...textStream("Answer.")];
  assert.equal(run(msgs), "Let me think.\nAnswer.\n");
  assert.equal(run(msgs, { color: true }), "\x1b[2mLet me think.\x1b[0m\nAnswer.\n");
});

Deno.test("tool call previews follow the documented forms", () => {
  const cases: [string, unknown, string][] = [
    ["exec_command", { cmd: "ls -la\n  /tmp" }, "exec_command <- $ ls -la /tmp"],
    [
      "exec_command",
      { description: "List files", cmd: "ls" },
      "exec_command <- List files ($ ls)",
    ],
    [
      "input_command",
      { process_id: "proc-1a2b3c4d", chars: "y\n\u0003" },
      "input_command <- proc-1a2b3c4d << y\\n^C",
    ],
    ["input_command", { process_id: "proc-1a2b3c4d", chars: "" }, "input_command <- proc-1a2b3c4d"],
    ["run_subagent", { prompt: "Summarize\nthe repo" }, "run_subagent <- Summarize the repo"],
    [
      "input_subagent",
      { subagent_id: "subagent-1234abcd", prompt: "and now?" },
      "input_subagent <- subagent-1234abcd << and now?",
    ],
    ["read_file", { file_path: "/home/u/work/src/lib/mod.ts" }, "read_file …/lib/mod.ts"],
    ["write_file", { file_path: "notes/a.txt", content: "x" }, "write_file notes/a.txt"],
    ["edit_file", { file_path: "a.txt", old_string: "a", new_string: "b" }, "edit_file a.txt"],
    ["kill_command", { process_id: "proc-9" }, 'kill_command {"process_id":"proc-9"}'],
  ];
  for (const [name, args, want] of cases) {
    assert.equal(
      toolCallPreview(name, JSON.stringify(args), { final: true, previews: builtinToolPreviews }),
      want,
    );
  }
  const cmd = "c".repeat(1500);
  assert.equal(
    toolCallPreview("exec_command", JSON.stringify({ cmd }), {
      final: true,
      previews: builtinToolPreviews,
    }),
    `exec_command <- $ ${"c".repeat(1000)}…`,
  );
  const long = "p".repeat(200);
  assert.equal(
    toolCallPreview("run_subagent", JSON.stringify({ prompt: long }), {
      final: true,
      previews: builtinToolPreviews,
    }),
    `run_subagent <- ${"p".repeat(120)}…`,
  );
});

Deno.test("a preview reads PREVIEW_READ_MAX characters of a field: padding cannot hide what follows", () => {
  // The value is cut where the preview stops reading, and marked as cut: a command padded past it
  // with blanks shows `…`, not a short harmless command.
  const padded = `echo hi${" ".repeat(PREVIEW_READ_MAX)}; rm -rf ~`;
  const final = { final: true, previews: builtinToolPreviews };
  assert.equal(
    toolCallPreview("exec_command", JSON.stringify({ cmd: padded }), final),
    "exec_command <- $ echo hi …",
  );
  // The generic form of an unknown tool's long arguments, likewise.
  const generic = toolCallPreview(
    "x",
    JSON.stringify({ a: " ".repeat(PREVIEW_READ_MAX) + "z" }),
    final,
  );
  assert.equal(generic, 'x {"a":"…');
  // A long field read in part still says whether it has closed (a streamed one has not).
  const long = "c".repeat(PREVIEW_READ_MAX + 10);
  const open = readField(`{"cmd":"${long}`, "cmd")!;
  const closed = readField(`{"cmd":"${long}\\\\"}`, "cmd")!;
  assert.deepEqual([open.complete, open.value.length, open.value.at(-1)], [
    false,
    PREVIEW_READ_MAX + 1,
    "…",
  ]);
  assert.equal(closed.complete, true);
  assert.equal(
    readField(`{"cmd":"${long}\\\\\\"`, "cmd")!.complete,
    false,
    "an escaped quote does not close it",
  );
});

Deno.test("a streamed tool call draws one cyan line that grows as arguments arrive", () => {
  const args = JSON.stringify({ cmd: "printf 'hi' > hello.txt" });
  const msgs = [
    event({ type: "tool_list_ready", tools: [{ name: "exec_command", description: "run" }] }),
    ...callStream("call_abc123", "exec_command", args, 3),
  ];
  assert.equal(run(msgs), "[#1] exec_command <- $ printf 'hi' > hello.txt\n");
  const colored = run(msgs, { color: true });
  assert.ok(colored.startsWith("\x1b[36m[#1] exec_command <- $ "));
  assert.equal(colored.replaceAll(ESC_CYAN, "").replaceAll(ESC_RESET, ""), run(msgs));
});

Deno.test("the live renderer shows the previews it is given; a tool without one shows the generic form", () => {
  const previews: ToolPreviews = (name) =>
    name === "word_count"
      ? ({ args }) => {
        const text = args()?.text;
        return typeof text === "string" ? `${text.split(" ").length} words` : null;
      }
      : undefined;
  const { r, out } = harness({ toolPreviews: previews });
  r.beginTask();
  for (const m of callStream("call_w01", "word_count", JSON.stringify({ text: "a b c" }), 3)) {
    r.push(m);
  }
  for (const m of callStream("call_r01", "read_file", JSON.stringify({ file_path: "/a/b/c.ts" }))) {
    r.push(m);
  }
  r.endTask();
  assert.equal(
    out(),
    '[#1] word_count <- 3 words\n[#2] read_file {"file_path":"/a/b/c.ts"}\n',
  );
});

Deno.test("exec_command with a description argument waits for it, then streams the described form", () => {
  const args = JSON.stringify({ description: "Create the file", cmd: "touch a.txt" });
  const msgs = [
    event({
      type: "tool_list_ready",
      tools: [{
        name: "exec_command",
        description: "run",
        parameters: { properties: { description: {}, cmd: {} } },
      }],
    }),
    ...callStream("call_9", "exec_command", args, 4),
  ];
  assert.equal(run(msgs), "[#1] exec_command <- Create the file ($ touch a.txt)\n");
});

Deno.test("tool output sits under its call line behind a gutter, no per-line prefix", () => {
  const msgs = [
    ...callStream("call_001", "exec_command", JSON.stringify({ cmd: "cat f" })),
    ...outputStream("call_001", "alpha\nbeta\n[exit code: 1]", [
      "al",
      "pha\nbe",
      "ta\n[exit code: 1]",
    ]),
  ];
  assert.equal(
    run(msgs),
    "[#1] exec_command <- $ cat f\n  │ alpha\n  │ beta\n  │ [exit code: 1]\n",
  );
});

Deno.test("collapsed output keeps the first 4 and last 4 lines around an elision marker", () => {
  const out = lines(20);
  const chunks = [out.slice(0, 13), out.slice(13, 50), out.slice(50)];
  const msgs = [
    ...callStream("call_x01", "exec_command", JSON.stringify({ cmd: "seq" })),
    ...outputStream("call_x01", out, chunks),
  ];
  const g = "  │ ";
  assert.equal(
    run(msgs, { collapse: true }),
    "[#1] exec_command <- $ seq\n" +
      [1, 2, 3, 4].map((i) => `${g}line ${i}\n`).join("") +
      `${g}… 12 more lines (/verbose for full output)\n` +
      [17, 18, 19, 20].map((i) => `${g}line ${i}\n`).join(""),
  );
  // Not collapsed: every line.
  assert.equal(run(msgs, { collapse: false }).split("\n").length - 1, 21);
});

Deno.test("collapsing never hides fewer than 2 lines: 9 lines show whole, 10 hide 2", () => {
  const nine = run(outputStream("call_a", lines(9)), { collapse: true });
  assert.equal(
    nine,
    "[#1] ->\n" + lines(9).split("\n").slice(0, -1).map((l) => `  │ ${l}\n`).join(""),
  );
  const ten = run(outputStream("call_a", lines(10)), { collapse: true });
  assert.match(ten, /… 2 more lines \(\/verbose for full output\)/);
  assert.doesNotMatch(ten, /line 5\n|line 6\n/);
  assert.match(ten, /line 7\n[\s\S]*line 10\n$/);
});

Deno.test("approval events print one line each", () => {
  const msgs = [
    event({ type: "approval_decision", decision: "allow", tool_call_id: "a" }),
    event({ type: "approval_decision", decision: "deny", tool_call_id: "b" }),
    event({ type: "approval_decision", decision: "forbidden", tool_call_id: "c" }),
  ];
  assert.equal(run(msgs), "✓ [approved]\n× [denied]\n× [forbidden by policy]\n");
});

Deno.test("an approval prompt draws the call line in place and its decision once", () => {
  const args = JSON.stringify({ cmd: "rm x" });
  const { r, out, write } = harness();
  r.beginTask();
  const stream = callStream("call_777", "exec_command", args);
  const complete = stream[stream.length - 1]!.payload as ToolCallMessage;
  // The approval callback runs before the stream reached the consumer.
  r.beginPrompt(complete);
  write("? Approve this tool call? [Y/n] n\n");
  // Messages arriving meanwhile wait for the prompt to end.
  for (const m of stream) r.push(m);
  r.push(event({ type: "approval_decision", decision: "deny", tool_call_id: "call_777" }));
  assert.equal(out(), "[#1] exec_command <- $ rm x\n? Approve this tool call? [Y/n] n\n");
  r.endPrompt(complete, "deny");
  r.endTask();
  assert.equal(
    out(),
    "[#1] exec_command <- $ rm x\n? Approve this tool call? [Y/n] n\n× [denied]\n",
  );
});

Deno.test("abort and retry lines", () => {
  const msgs = [
    event({ type: "request_begin" }),
    event({ type: "request_end", status: "timeout", attempt: 1, retry_in_ms: 2000 }),
    event({ type: "request_begin" }),
    event({ type: "request_end", status: "malformed", attempt: 2, retry_in_ms: 4000 }),
    event({ type: "request_begin" }),
    event({ type: "request_end", status: "failed", error_message: "boom", attempt: 3 }),
    event({ type: "request_begin" }),
    event({ type: "request_end", status: "failed", error_message: "boom", attempt: 4 }),
    event({ type: "abort", reason: "aborted by user" }),
    event({ type: "request_begin" }),
  ];
  assert.equal(
    run(msgs),
    "[retry] connection timed out; retry #1 in 2s…\n" +
      "[retry] malformed response; retry #2 in 4s…\n" +
      "[retry] the model provider returned an error: boom; sending retry #3…\n" +
      "[abort]: aborted by user\n",
  );
  assert.equal(run([event({ type: "abort", reason: null })]), "[abort]\n");
});

Deno.test("the stats line reports session totals with per-task deltas", () => {
  const { r, out } = harness();
  r.beginTask();
  r.push(event({ type: "request_begin" }));
  for (const m of textStream("one")) r.push(m);
  r.push(usage(1200, 1200));
  r.push(event({ type: "request_end", status: "completed" }, undefined, 2300));
  r.endTask();
  assert.equal(out(), "one\n[stats] context 1.2k (+1.2k) · tokens 1.2k (+1.2k) · 2.3s (+2.3s)\n");
  r.beginTask();
  r.push(event({ type: "request_begin" }));
  r.push(usage(1_500_000, 1_501_200));
  r.push(event({ type: "request_end", status: "completed" }, undefined, 60_700));
  r.endTask();
  assert.equal(
    out().split("\n")[2],
    "[stats] context 1.5M (+1.5M) · tokens 1.5M (+1.5M) · 1m3s (+1m1s)",
  );
});

Deno.test("child-session messages show tool calls and approvals tagged with the child id", () => {
  const child = "session-2026-01-01-00-00-00-abcdef12";
  const o = [child];
  const msgs = [
    ...callStream("call_sub", "run_subagent", JSON.stringify({ prompt: "look around" })),
    model({
      type: "text",
      role: "user",
      text: "look around",
      sender: "parent_agent",
      stop_reason: "completed",
    }, o),
    ...textStream("child chatter").map((m) => ({ ...m, origin: o })),
    completeCall("call_653", "exec_command", JSON.stringify({ cmd: "ls" }), o),
    event({ type: "approval_decision", decision: "allow", tool_call_id: "call_653" }, o),
    ...outputStream("call_653", "a\nb").map((m) => ({ ...m, origin: o })),
    usage(500, 500, o),
    ...outputStream("call_sub", "done"),
    usage(1000, 1000),
    event({ type: "request_end", status: "completed" }, undefined, 820),
  ];
  assert.equal(
    run(msgs),
    "[#1] run_subagent <- look around\n" +
      "[agent-f12 #1] exec_command <- $ ls\n" +
      "✓ [approved]\n" +
      "[#1] run_subagent ->\n  │ done\n" +
      "[stats] context 1k (+1k) · tokens 1.5k (+1.5k) · 0ms (+0ms)\n",
  );
});

/** `n` times `c` as one flat string (`repeat` shares the halves of a rope, which costs nothing to keep). */
const flatText = (n: number, c: string) =>
  new TextDecoder().decode(new Uint8Array(n).fill(c.charCodeAt(0)));

/** A text message or partial of the child session `origin`. */
const childText = (origin: string[], type: "start" | "delta" | "text", text = "") =>
  model(
    type === "text" ? { type, role: "assistant", text, stop_reason: "completed" } : {
      type: "partial_text",
      role: "assistant",
      event_type: type,
      text,
      stop_reason: "completed",
    },
    origin,
  );

Deno.test("a subagent's text beside the segment holding the screen is not kept meanwhile", () => {
  // Queued behind the holder, every delta and answer of subagents streaming beside it stayed in
  // memory until it ended: four subagents of 7.9 MB took penguin to 285-369 MB (with other causes).
  const gc = garbageCollector();
  const o = ["session-2026-01-01-00-00-00-abcdef12"];
  const { r, out } = harness();
  const [start, delta, stop, done] = outputStream("call_aaa", "a1\n");
  r.push(start!);
  gc();
  const before = Deno.memoryUsage().heapUsed;
  r.push(childText(o, "start"));
  let chars = 0;
  for (let i = 0; i < 400; i++) {
    const text = flatText(10_000 + i, "c");
    chars += text.length;
    r.push(childText(o, "delta", text));
  }
  r.push(childText(o, "text", flatText(chars, "d")));
  r.push(completeCall("call_653", "exec_command", JSON.stringify({ cmd: "ls" }), o));
  gc();
  const kept = Deno.memoryUsage().heapUsed - before;
  assert.ok(kept < 1_000_000, `${kept} bytes kept for ${2 * chars} characters`);
  for (const m of [delta!, stop!, done!]) r.push(m);
  assert.equal(out(), "[#1] ->\n  │ a1\n[agent-f12 #1] exec_command <- $ ls\n");
});

Deno.test("a streaming segment holds the screen; other segments queue until its stop", () => {
  const a = outputStream("call_aaa", "a1\na2\n");
  const b = outputStream("call_bbb", "b1\nb2\n");
  // Interleave: a.start, b.start, a.delta, b.delta, a.stop, b.stop …
  const mixed: OmniMessage[] = [];
  for (let i = 0; i < a.length; i++) mixed.push(a[i]!, b[i]!);
  assert.equal(
    run(mixed),
    "[#1] ->\n  │ a1\n  │ a2\n[#2] ->\n  │ b1\n  │ b2\n",
  );
});

Deno.test("colour off emits no escape codes at all; colour on uses them", () => {
  const msgs = [
    ...thinkingStream("hmm"),
    ...callStream("call_1", "exec_command", JSON.stringify({ cmd: "ls" })),
    event({ type: "approval_decision", decision: "allow", tool_call_id: "call_1" }),
    ...outputStream("call_1", "x"),
    ...textStream("done"),
    usage(10, 10),
    event({ type: "request_end", status: "completed" }),
  ];
  assert.ok(!run(msgs).includes("\x1b"), "no escape codes with colour off");
  const on = run(msgs, { color: true });
  for (const code of ["\x1b[2m", "\x1b[36m", "\x1b[0m"]) assert.ok(on.includes(code), code);
});

Deno.test("compaction, mcp and steering lines", () => {
  const msgs = [
    event({ type: "mcp_connect_begin", servers: ["fs", "web"] }),
    event(
      {
        type: "mcp_connect_end",
        status: "failed",
        results: [
          { server: "fs", transport: "stdio", status: "completed", duration_ms: 10 },
          { server: "web", transport: "http", status: "failed", duration_ms: 20, error: "refused" },
        ],
      },
      undefined,
      1500,
    ),
    model({
      type: "text",
      role: "user",
      text: "[user_steering]\nuse tabs\n[/user_steering]",
      stop_reason: "completed",
    }),
    event({ type: "compaction_begin", reason: "context", mode: "summarize", context: 9, turns: 1 }),
    usage(2000, 5000),
    event({ type: "compaction_end", reason: "context", mode: "summarize", status: "completed" }),
  ];
  assert.equal(
    run(msgs),
    "[mcp] connecting MCP servers (fs, web)…\n" +
      "[mcp] connected in 1.5s; unavailable: web (refused)\n" +
      "↪ user: use tabs\n" +
      "[compaction] summarizing context (context)…\n" +
      "[compaction] done; continuing with the summarized context · tokens 5k (+2k)\n",
  );
});

Deno.test("history renders complete messages statically, collapsed on request", () => {
  const msgs: OmniMessage[] = [
    model({ type: "text", role: "user", text: "count", stop_reason: "completed" }),
    model({ type: "thinking", role: "assistant", thinking: "easy", stop_reason: "completed" }),
    completeCall("call_c01", "exec_command", JSON.stringify({ cmd: "seq 12" })),
    // A person's allow shows; a mode's allow (no "by") does not.
    event({ type: "approval_decision", decision: "allow", tool_call_id: "call_c01", by: "user" }),
    completeCall("call_c02", "exec_command", JSON.stringify({ cmd: "true" })),
    event({ type: "approval_decision", decision: "allow", tool_call_id: "call_c02" }),
    model({
      type: "tool_call_output",
      role: "user",
      output: lines(12),
      tool_call_id: "call_c01",
      stop_reason: "completed",
    }),
    model({ type: "text", role: "assistant", text: "partial", stop_reason: "aborted" }),
    event({ type: "abort", reason: "aborted by user" }),
  ];
  const g = "  │ ";
  assert.equal(
    renderHistory(msgs, {
      palette: paletteFor(false),
      collapse: true,
      toolPreviews: builtinToolPreviews,
    }),
    "> count\neasy\n[#1] exec_command <- $ seq 12\n✓ [approved]\n[#2] exec_command <- $ true\n" +
      "[#1] exec_command ->\n" +
      [1, 2, 3, 4].map((i) => `${g}line ${i}\n`).join("") +
      `${g}… 4 more lines (/verbose for full output)\n` +
      [9, 10, 11, 12].map((i) => `${g}line ${i}\n`).join("") +
      "partial [aborted]\n[abort]: aborted by user\n",
  );
});

Deno.test("the spinner draws frames with carriage returns and erases itself on stop", () => {
  let buf = "";
  const s = createSpinner({ write: (t) => (buf += t), intervalMs: 1000 });
  s.start();
  assert.equal(s.spinning(), true);
  s.stop();
  s.stop();
  assert.equal(s.spinning(), false);
  assert.equal(buf, "\r⠋\r \r");
});

Deno.test("a text segment cut off without its stop releases the screen at the request's end", () => {
  const cut = textStream("Partial ans").slice(0, -2); // no stop, no complete message
  const msgs = [
    event({ type: "request_begin" }),
    ...cut,
    ...outputStream("call_bg1", "late output\n"),
    event({ type: "request_end", status: "timeout", attempt: 1, retry_in_ms: 2000 }),
    event({ type: "request_begin" }),
    ...textStream("Full answer."),
  ];
  const { r, out } = harness();
  r.beginTask();
  for (const m of msgs) r.push(m);
  // Everything is on screen before the task ends: nothing waits for the lost stop.
  assert.equal(
    out(),
    "Partial ans\n[#1] ->\n  │ late output\n" +
      "[retry] connection timed out; retry #1 in 2s…\nFull answer.\n",
  );
  r.endTask();
});

// ---------------------------------------------------------------------------
// Terminal safety: nothing from the model or a tool acts on the terminal.
// ---------------------------------------------------------------------------

/** ESC, C1 controls, carriage returns, other C0 controls (tab and newline aside). */
// deno-lint-ignore no-control-regex
const ACTIVE = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

Deno.test("live rendering removes escape sequences cut across fragments, in text, thinking and output", () => {
  const evil = "a\x1b]0;title\x07b\x1b[2Jc\x9b2Jd\rEVIL";
  const out = run([
    ...thinkingStream(evil),
    ...textStream(evil, 1),
    ...callStream("call_123", "exec_command", JSON.stringify({ cmd: "cat x" })),
    ...outputStream("call_123", evil, [...evil]),
  ]);
  assert.ok(!ACTIVE.test(out), JSON.stringify(out));
  assert.equal(
    out.split("abcd\nEVIL").length - 1,
    2,
    "thinking and text, overwrite shown as a break",
  );
  assert.match(out, /^\[#1\] exec_command <- \$ cat x\n {2}│ abcd\n {2}│ EVIL$/m);
});

Deno.test("live rendering shows control characters in tool names, ids and arguments, for subagents too", () => {
  const args = JSON.stringify({ cmd: "echo \x1b]52;c;eA==\x07", description: "x\u202ey" });
  const out = run([
    completeCall("c\x1b[2J", "exec\x07command", args, ["session-child\x9b"]),
    ...callStream("call_456", "exec_command", args),
    event({ type: "abort", reason: "llm request error: \x1b]0;t\x07bad\x9b2J" }),
  ]);
  assert.ok(!ACTIVE.test(out), JSON.stringify(out));
  assert.match(out, /\[agent-ld\\x9b #1\] exec\\x07command /);
  assert.match(out, /\[#1\] exec_command <- x\\u202ey \(\$ echo \\x1b\]52;c;eA==\\x07\)/);
  assert.match(out, /\[abort\]: llm request error: bad$/m);
});

Deno.test("history re-rendering (chat --resume) is terminal-safe", () => {
  const evil = "a\x1b]0;title\x07b\rEVIL";
  const text = renderHistory([
    model({ type: "text", role: "user", text: evil, stop_reason: "completed" }),
    model({ type: "thinking", role: "assistant", thinking: evil, stop_reason: "completed" }),
    model({ type: "text", role: "assistant", text: evil, stop_reason: "completed" }),
    completeCall("call_789", "exec_command", JSON.stringify({ cmd: evil })),
    model({
      type: "tool_call_output",
      role: "user",
      output: evil,
      tool_call_id: "call_789",
      stop_reason: "completed",
    }),
  ], {
    palette: paletteFor(false),
    collapse: false,
    toolPreviews: builtinToolPreviews,
  });
  assert.ok(!ACTIVE.test(text), JSON.stringify(text));
  assert.match(text, /exec_command <- \$ a\\x1b\]0;title\\x07b EVIL$/m);
  assert.match(text, /^ {2}│ ab$/m);
});

Deno.test("the spinner's progress line names what it waits for, counts seconds and erases the line", () => {
  let buf = "";
  let t = 0;
  const s = createSpinner({
    write: (x) => (buf += x),
    intervalMs: 1000,
    label: "waiting for p/m\x1b]0;x\x07…",
    now: () => t,
  });
  t = 5000;
  s.start();
  s.stop();
  assert.equal(buf, "\r⠋ waiting for p/m\\x1b]0;x\\x07… 0s\r\x1b[K");
});

Deno.test("the renderer stops the progress line at the first model fragment, before drawing it", () => {
  const { r, out } = harness({ spinner: true, spinnerLabel: "waiting for p/m…" });
  r.beginTask();
  r.push(event({ type: "request_begin" }));
  assert.match(out(), /^\r⠋ waiting for p\/m… 0s$/);
  r.push(model({
    type: "partial_thinking",
    role: "assistant",
    event_type: "start",
    thinking: "",
    stop_reason: "completed",
  }));
  assert.ok(out().endsWith("\r\x1b[K"), JSON.stringify(out()));
  r.endTask();
});

Deno.test("without autoApprovals only answered prompts, denials and policy verdicts print a line", () => {
  const { r, out, write } = harness({ autoApprovals: false });
  r.beginTask();
  r.push(event({ type: "approval_decision", decision: "allow", tool_call_id: "a" }));
  r.push(event({ type: "approval_decision", decision: "allow", tool_call_id: "n" }, ["child"]));
  r.push(event({ type: "approval_decision", decision: "deny", tool_call_id: "b" }));
  r.push(event({ type: "approval_decision", decision: "forbidden", tool_call_id: "c" }));
  const call = completeCall("call_ask", "exec_command", JSON.stringify({ cmd: "ls" }));
  r.beginPrompt(call.payload as ToolCallMessage);
  write("? Approve this tool call? [Y/n] y\n");
  r.endPrompt(call.payload as ToolCallMessage, "allow");
  r.push(event({ type: "approval_decision", decision: "allow", tool_call_id: "call_ask" }));
  r.endTask();
  assert.equal(
    out(),
    "× [denied]\n× [forbidden by policy]\n[#1] exec_command <- $ ls\n" +
      "? Approve this tool call? [Y/n] y\n✓ [approved]\n",
  );
});

Deno.test("the totals stats line counts turns, tokens in/out/cached and time, with cost when priced", () => {
  const tokens = (cache_read: number, cache_write: number, output: number): TokenCounts => ({
    cache_read,
    cache_write,
    output,
    total: cache_read + cache_write + output,
  });
  const msgs = (): OmniMessage[] => [
    event({ type: "request_begin" }),
    event({ type: "token_usage", request: tokens(0, 1000, 200), session: tokens(0, 1000, 200) }),
    event({ type: "request_end", status: "completed" }, undefined, 1000),
    event({ type: "request_begin" }),
    event({
      type: "token_usage",
      request: tokens(1000, 500, 300),
      session: tokens(1000, 1500, 500),
    }),
    event({ type: "request_end", status: "completed" }, undefined, 1500),
  ];
  const render = (
    style: Parameters<typeof createRenderer>[0]["stats"],
    extra: OmniMessage[] = [],
  ) => {
    const { r, out } = harness({ stats: style });
    r.beginTask();
    for (const m of [...msgs(), ...extra]) r.push(m);
    r.endTask();
    return out();
  };
  assert.equal(
    render({ kind: "totals", price: null }),
    "[stats] 2 turns · in 2.5k (1k cached) · out 500 · 2.5s\n",
  );
  const price = { cache_read: 0.1, cache_write: 1, output: 4, source: "config" as const };
  // (1000·0.1 + 1500·1 + 500·4) / 1e6 = 0.0036
  assert.equal(
    render({ kind: "totals", price }),
    "[stats] 2 turns · in 2.5k (1k cached) · out 500 · 2.5s · $0.0036\n",
  );
  const child = event({
    type: "token_usage",
    request: tokens(0, 100, 10),
    session: tokens(0, 100, 10),
  }, ["session-child"]);
  assert.equal(
    render({ kind: "totals", price }, [child]),
    "[stats] 2 turns · in 2.6k (1k cached) · out 510 · 2.5s · $0.0036 (main session; subagents unpriced)\n",
  );
  assert.doesNotMatch(render({ kind: "totals", price }), /\(\+/);
});

Deno.test("the stats line's time is the task's wall time, not the time of its requests", () => {
  const { r, out } = harness();
  clock += 500; // before the task: not counted
  r.beginTask();
  clock += 2000; // e.g. an approval question before the first request
  r.push(event({ type: "request_begin" }));
  r.push(usage(100, 100));
  r.push(event({ type: "request_end", status: "completed" }, undefined, 1000));
  clock += 4000; // e.g. waiting for a background subagent after the last request
  r.endTask();
  assert.equal(out(), "[stats] context 100 (+100) · tokens 100 (+100) · 7s (+7s)\n");
});

Deno.test("a file tool's diff output is coloured on a colour terminal; a command's is not", () => {
  const diff = "Replaced 1 occurrence.\n@@ -1,2 +1,2 @@\n-old\n+new\n ctx";
  const msgs = [
    ...callStream("call_e01", "edit_file", JSON.stringify({ file_path: "a.txt" })),
    ...outputStream("call_e01", diff),
    ...callStream("call_x02", "exec_command", JSON.stringify({ cmd: "cat d" })),
    ...outputStream("call_x02", "-old\n+new"),
  ];
  const on = run(msgs, { color: true });
  const g = "\x1b[2m  │ \x1b[0m";
  assert.ok(on.includes(`${g}\x1b[31m-old\x1b[0m\n${g}\x1b[32m+new\x1b[0m\n${g} ctx`), on);
  assert.ok(on.includes(`${g}\x1b[36m@@ -1,2 +1,2 @@\x1b[0m`), on);
  // The command's output is left as it is.
  assert.ok(on.includes(`${g}-old\n${g}+new\n`), on);
  assert.equal(
    run(msgs),
    "[#1] edit_file a.txt\n  │ Replaced 1 occurrence.\n  │ @@ -1,2 +1,2 @@\n  │ -old\n  │ +new\n" +
      "  │  ctx\n[#2] exec_command <- $ cat d\n  │ -old\n  │ +new\n",
  );
});

Deno.test("a collapsed output can be expanded afterwards, by its short id or the latest", () => {
  const { r, out, clear } = harness({ collapse: true, fullOutputHint: "/expand" });
  r.beginTask();
  for (
    const m of [
      ...callStream("call_a01", "exec_command", JSON.stringify({ cmd: "seq 12" })),
      ...outputStream("call_a01", lines(12)),
      ...callStream("call_b02", "exec_command", JSON.stringify({ cmd: "seq 20" })),
      ...outputStream("call_b02", lines(20)),
    ]
  ) r.push(m);
  r.endTask();
  assert.match(out(), /^ {2}│ … 4 more lines \(\/expand #1 for full output\)$/m);
  assert.match(out(), /^ {2}│ … 12 more lines \(\/expand #2 for full output\)$/m);
  clear();
  assert.equal(r.expand("#1"), true);
  assert.equal(out(), fullExecOutput(12));
  clear();
  assert.equal(r.expand(), true);
  assert.match(out(), /^\[#2\] exec_command -> \(full output\)\n(?: {2}│ line \d+\n){20}$/);
  assert.equal(r.expand("zzz"), false);
  clear();
  assert.equal(r.expand("2"), true, "the number alone names the call too");
  assert.match(out(), /^\[#2\] exec_command -> \(full output\)\n/);
  assert.equal(r.expand("#3"), false);
});

Deno.test("call numbers go on from a resumed history and start again for a new session", () => {
  const { r, out, clear } = harness();
  r.history([
    completeCall("call_x7", "exec_command", JSON.stringify({ cmd: "ls" })),
    completeCall("call_a1", "exec_command", JSON.stringify({ cmd: "pwd" })),
  ]);
  assert.equal(out(), "[#1] exec_command <- $ ls\n[#2] exec_command <- $ pwd\n");
  clear();
  r.beginTask();
  for (const m of callStream("call_b2", "exec_command", JSON.stringify({ cmd: "id" }))) r.push(m);
  // A late output of a call the history holds keeps that call's number.
  for (const m of outputStream("call_x7", "late")) r.push(m);
  r.endTask();
  assert.equal(out(), "[#3] exec_command <- $ id\n[#1] ->\n  │ late\n");

  // run --resume: nothing drawn, the numbering seeded from the recorded messages.
  r.startSession(["call_q"]);
  clear();
  r.beginTask();
  for (const m of callStream("call_r", "exec_command", JSON.stringify({ cmd: "id" }))) r.push(m);
  r.endTask();
  assert.equal(out(), "[#2] exec_command <- $ id\n");

  // /clear: a new session numbers from #1.
  r.startSession();
  clear();
  r.beginTask();
  for (const m of callStream("call_s", "exec_command", JSON.stringify({ cmd: "id" }))) r.push(m);
  r.endTask();
  assert.equal(out(), "[#1] exec_command <- $ id\n");
});

Deno.test("an output the resumed history shows collapsed can be expanded like a live one", () => {
  const { r, out, clear } = harness({ collapse: true, fullOutputHint: "/expand" });
  r.history([
    completeCall("call_h1", "exec_command", JSON.stringify({ cmd: "seq 20" })),
    model({
      type: "tool_call_output",
      role: "user",
      output: lines(20),
      tool_call_id: "call_h1",
      stop_reason: "completed",
    }),
  ]);
  assert.match(out(), /^ {2}│ … 12 more lines \(\/expand #1 for full output\)$/m);
  clear();
  assert.equal(r.expand("#1"), true);
  assert.equal(out(), fullExecOutput(20));
});
