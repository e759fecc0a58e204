// A live session for the follow test: `deno run -A _follow_writer.ts <tracesDir> <sessionId>`.
// Writes the first file with lib/trace's writer and prints "ready"; on a stdin
// line "go" finishes that file with a completed compaction, rotates, writes
// the second file — one record in two halves with a pause in between — then
// prints "done" and exits.
import { join } from "node:path";
import {
  assistantText,
  eventMsg,
  modelMsg,
  sessionMetaMsg,
  userText,
} from "../../lib/protocol/mod.ts";
import { openTraceWriter } from "../../lib/trace/mod.ts";

const [tracesDir, sessionId] = Deno.args as [string, string];
const w = await openTraceWriter({ tracesDir, sessionId, dateDir: "2026-03-04", fsync: "never" });
const meta = sessionMetaMsg({
  session_id: sessionId,
  provider: "custom",
  model_id: "mock",
  model_context_window: 1000000,
  system_prompt: "test",
  agent_state: "/tmp/agent_state",
  workspace: "/tmp/ws",
});
const tools = eventMsg({
  type: "tool_list_ready",
  tools: [{ name: "exec_command", description: "run" }],
});
const counts = { cache_read: 0, cache_write: 1, output: 1, total: 2 };
const usage = () => eventMsg({ type: "token_usage", session: counts, request: counts });
const request = async (text: string) => {
  await w.append(eventMsg({ type: "request_begin" }));
  await w.append(modelMsg(assistantText(text)));
  await w.append(usage());
  await w.append(eventMsg({ type: "request_end", status: "completed" }));
};

await w.append(meta);
await w.append(tools);
await w.append(modelMsg(userText("MARK-ONE-START")));
await request("MARK-ONE-END");
console.log("ready");

const buf = new Uint8Array(16);
await Deno.stdin.read(buf); // "go"

const compaction = { reason: "turns", mode: "summarize" } as const;
await w.append(eventMsg({ type: "compaction_begin", ...compaction, context: 2, turns: 1 }));
await w.append(modelMsg(userText("summarize")));
await request("[summary]s[/summary]");
await w.append(eventMsg({ type: "compaction_end", ...compaction, status: "completed" }));
await w.rotate();
await w.append(meta);
await w.append(tools);
await w.append(modelMsg(userText("[context_summary]\ns\n[/context_summary]")));
await w.append(eventMsg({ type: "request_begin" }));
// One record written in two halves, the way a slow write can land.
const line = JSON.stringify(modelMsg(assistantText("MARK-TWO-END"))) + "\n";
const file = await Deno.open(join(tracesDir, "2026-03-04", `${sessionId}_002.jsonl`), {
  append: true,
});
const enc = new TextEncoder();
await file.write(enc.encode(line.slice(0, 25)));
await new Promise((r) => setTimeout(r, 400));
await file.write(enc.encode(line.slice(25)));
file.close();
await w.append(usage());
await w.append(eventMsg({ type: "request_end", status: "completed" }));
await w.close();
console.log("done");
