// Synthetic trace corpora for the inspect benchmarks (`bench/inspect_speed.ts`).
//
// A corpus is a data root: `<root>/default_project/agents/<agent>/traces/<date>/<sid>_NNN.jsonl`.
// Sessions are shaped like real ones: a large session_meta (system prompt) and
// tool_list_ready at the head of every file, then requests with thinking, text,
// one to three tool calls with approvals, token_usage, request_end and tool
// outputs from 200 B to 30 KB (multi-line, with quotes, backslashes and
// non-ASCII text); a failed attempt with a retry now and then, and a summarize
// compaction that rotates the file every ~120 requests.
import { join } from "node:path";
import {
  assistantText,
  eventMsg,
  modelMsg,
  sessionMetaMsg,
  toolCall,
  toolCallOutput,
  userText,
} from "../lib/protocol/mod.ts";
import type { OmniMessage } from "../lib/protocol/mod.ts";

const WORDS = (
  "alpha beta gamma delta file line error ok build test run value const let " +
  "function return import export async await deno trace session request " +
  '"quoted" path\\to\\file naïve café 数据 ✓ {json: [1, 2]} <tag> & more'
).split(" ");

/** A small deterministic PRNG. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 0x100000000;
  };
}

function prose(rand: () => number, chars: number, lineEvery = 0): string {
  const out: string[] = [];
  let n = 0;
  let col = 0;
  while (n < chars) {
    const w = WORDS[Math.floor(rand() * WORDS.length)]!;
    out.push(w);
    n += w.length + 1;
    col += w.length + 1;
    if (lineEvery > 0 && col > lineEvery) {
      out.push("\n");
      col = 0;
    } else out.push(" ");
  }
  return out.join("");
}

/** Options of {@linkcode sessionRecords}. */
export interface SessionShape {
  /** Session id. */
  sessionId: string;
  /** Requests in the session. */
  requests: number;
  /** PRNG seed. */
  seed: number;
  /** Start time (ms since epoch). */
  start: number;
  /** Model pair. */
  provider?: string;
  /** Model id. */
  modelId?: string;
  /** Agent id (for the meta's agent_state path). */
  agent?: string;
}

/** The files of one synthetic session: arrays of JSONL lines per file index. */
export function sessionFiles(shape: SessionShape): string[][] {
  const rand = rng(shape.seed);
  let t = shape.start;
  const stamp = (m: OmniMessage): string => {
    t += 5 + Math.floor(rand() * 400);
    m.timestamp = new Date(t).toISOString();
    return JSON.stringify(m);
  };
  const agent = shape.agent ?? "default_agent";
  const meta = sessionMetaMsg({
    session_id: shape.sessionId,
    provider: shape.provider ?? "anthropic",
    model_id: shape.modelId ?? "claude-sonnet-4-6",
    model_context_window: 1000000,
    system_prompt: prose(rand, 12000, 100),
    agent_state: `/home/u/.penguin/data/default_project/agents/${agent}/agent_state`,
    workspace: "/home/u/work",
  });
  const tools = eventMsg({
    type: "tool_list_ready",
    tools: Array.from({ length: 10 }, (_, i) => ({
      name: ["exec_command", "read_file", "write_file", "edit_file"][i % 4]! + (i < 4 ? "" : i),
      description: prose(rand, 400),
      parameters: {
        type: "object",
        properties: { cmd: { type: "string", description: prose(rand, 120) } },
        required: ["cmd"],
      },
    })),
  });
  const files: string[][] = [];
  let cur: string[] = [stamp(meta), stamp(tools)];
  const session = { cache_read: 0, cache_write: 0, output: 0, total: 0 };
  let call = 0;
  cur.push(stamp(modelMsg(userText(prose(rand, 300)))));
  for (let r = 1; r <= shape.requests; r++) {
    cur.push(stamp(eventMsg({ type: "request_begin" })));
    if (r % 37 === 0) {
      cur.push(stamp(eventMsg({
        type: "request_end",
        status: "timeout",
        error_message: "connection reset by peer (ECONNRESET)",
        attempt: 1,
        retry_in_ms: 2000,
      })));
      cur.push(stamp(eventMsg({ type: "request_begin" })));
    }
    cur.push(stamp(modelMsg({
      type: "thinking",
      role: "assistant",
      thinking: prose(rand, 200 + Math.floor(rand() * 2000)),
      stop_reason: "completed",
      fidelity: { signature: "c2lnbmF0dXJl".repeat(20) },
    })));
    const last = r === shape.requests;
    const calls = last ? 0 : 1 + Math.floor(rand() * rand() * 3);
    if (rand() < 0.4 || last) cur.push(stamp(modelMsg(assistantText(prose(rand, 400)))));
    const ids: string[] = [];
    const names: string[] = [];
    for (let c = 0; c < calls; c++) {
      const id = `toolu_${(++call).toString(36).padStart(8, "0")}`;
      const name = ["exec_command", "read_file", "write_file", "edit_file"][
        Math.floor(rand() * 4)
      ]!;
      ids.push(id);
      names.push(name);
      const args = JSON.stringify({
        cmd: prose(rand, 40 + Math.floor(rand() * rand() * 1500), 80),
      });
      cur.push(stamp(modelMsg(toolCall(name, args, id))));
      const decision = rand() < 0.97 ? "allow" : "deny";
      cur.push(stamp(eventMsg({ type: "approval_decision", decision, tool_call_id: id })));
      if (decision === "deny") {
        ids.pop();
        cur.push(stamp(modelMsg(toolCallOutput(id, "Tool call denied by user.", "aborted"))));
      }
    }
    const req = {
      cache_read: 1000 * r,
      cache_write: 200 + Math.floor(rand() * 3000),
      output: 50 + Math.floor(rand() * 800),
      total: 0,
    };
    req.total = req.cache_read + req.cache_write + req.output;
    session.cache_read += req.cache_read;
    session.cache_write += req.cache_write;
    session.output += req.output;
    session.total += req.total;
    cur.push(stamp(eventMsg({ type: "token_usage", session: { ...session }, request: req })));
    cur.push(stamp(eventMsg({ type: "request_end", status: "completed" })));
    for (const id of ids) {
      const size = 200 + Math.floor(rand() * rand() * rand() * 30000);
      const failed = rand() < 0.05;
      cur.push(
        stamp(modelMsg(toolCallOutput(id, prose(rand, size, 90), failed ? "failed" : "completed"))),
      );
    }
    if (r % 120 === 0 && !last) {
      cur.push(stamp(eventMsg({
        type: "compaction_begin",
        reason: "context",
        mode: "summarize",
        context: req.total,
        turns: 120,
      })));
      cur.push(stamp(modelMsg(userText("[compaction prompt]"))));
      cur.push(stamp(eventMsg({ type: "request_begin" })));
      cur.push(stamp(modelMsg(assistantText(`[summary]${prose(rand, 1500)}[/summary]`))));
      session.cache_write += 5000;
      session.output += 400;
      session.total += 5400;
      const creq = { cache_read: 0, cache_write: 5000, output: 400, total: 5400 };
      cur.push(stamp(eventMsg({ type: "token_usage", session: { ...session }, request: creq })));
      cur.push(stamp(eventMsg({ type: "request_end", status: "completed" })));
      cur.push(stamp(eventMsg({
        type: "compaction_end",
        reason: "context",
        mode: "summarize",
        status: "completed",
        attempt: 1,
      })));
      files.push(cur);
      cur = [stamp(meta), stamp(tools)];
      cur.push(
        stamp(modelMsg(userText(`[context_summary]\n${prose(rand, 1500)}\n[/context_summary]`))),
      );
    }
  }
  files.push(cur);
  return files;
}

/** Write a corpus of about `bytes` bytes under `root`; resolves to the bytes and files written. */
export async function writeCorpus(
  root: string,
  bytes: number,
  seed = 7,
): Promise<{ bytes: number; files: number; sessions: number }> {
  const enc = new TextEncoder();
  // A handful of distinct sessions, written many times under fresh ids.
  const templates = Array.from({ length: 6 }, (_, i) =>
    sessionFiles({
      sessionId: "session-2026-01-01-00-00-00-TEMPLATE",
      requests: 60 + i * 50,
      seed: seed + i,
      start: Date.UTC(2026, 0, 1 + i, 9),
      provider: i % 3 === 2 ? "openai" : "anthropic",
      modelId: i % 3 === 2 ? "gpt-5.4" : "claude-sonnet-4-6",
      agent: i % 2 === 0 ? "default_agent" : "helper",
    }));
  let written = 0;
  let files = 0;
  let sessions = 0;
  for (let n = 0; written < bytes; n++) {
    const tpl = templates[n % templates.length]!;
    const hex = (0x10000000 + n).toString(16);
    const day = `2026-01-${String(1 + (n % 28)).padStart(2, "0")}`;
    const sid = `session-${day}-10-00-00-${hex}`;
    const agent = n % 2 === 0 ? "default_agent" : "helper";
    const dir = join(root, "default_project", "agents", agent, "traces", day);
    await Deno.mkdir(dir, { recursive: true });
    for (let i = 0; i < tpl.length; i++) {
      const body = tpl[i]!.join("\n").replaceAll("session-2026-01-01-00-00-00-TEMPLATE", sid) +
        "\n";
      const data = enc.encode(body);
      await Deno.writeFile(join(dir, `${sid}_${String(i + 1).padStart(3, "0")}.jsonl`), data);
      written += data.length;
      files++;
    }
    sessions++;
  }
  return { bytes: written, files, sessions };
}
