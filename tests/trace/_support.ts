// Shared helpers of the trace tests: temp dirs and sample messages.
import {
  eventMsg,
  modelMsg,
  sessionMetaMsg,
  toolCall,
  toolCallOutput,
  userText,
} from "../../lib/protocol/mod.ts";
import type { OmniMessage } from "../../lib/protocol/mod.ts";
import { testMeta, toJsonl } from "../support/trace_records.ts";
import { withTempDir as withPrefixedTempDir } from "../support/roots.ts";

/** Run `fn` with a fresh temp directory, removed afterwards. */
export function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  return withPrefixedTempDir("penguin-trace-test-", fn);
}

/** A session id in the PenguinHarness format. */
export function sessionId(suffix = "0badf00d"): string {
  return `session-2026-01-02-03-04-05-${suffix}`;
}

/** A session_meta for `id`. */
export function meta(id: string): OmniMessage {
  return sessionMetaMsg(testMeta(id, { workspace: "/tmp/ws" }));
}

/** A short but complete request: user text, a tool call and its output, request_end. */
export function sampleTrace(id: string): OmniMessage[] {
  return [
    meta(id),
    modelMsg(userText("list the files")),
    eventMsg({ type: "request_begin" }),
    modelMsg(toolCall("exec_command", JSON.stringify({ cmd: "ls" }), "call_1")),
    eventMsg({ type: "approval_decision", decision: "allow", tool_call_id: "call_1" }),
    modelMsg(toolCallOutput("call_1", "a.txt\nb.txt\n")),
    eventMsg({
      type: "token_usage",
      session: { cache_read: 0, cache_write: 0, output: 12, total: 132 },
      request: { cache_read: 0, cache_write: 0, output: 12, total: 132 },
    }),
    eventMsg({ type: "request_end", status: "completed" }),
  ];
}

export { toJsonl };

/** A user text record whose serialised line is about `bytes` long. */
export function bigText(bytes: number, tag: string): OmniMessage {
  const filler = tag.repeat(Math.ceil(bytes / Math.max(1, tag.length))).slice(0, bytes);
  return modelMsg(userText(filler));
}

const CHILD = new URL("./_child.ts", import.meta.url).pathname;

/** Run `_child.ts <mode> <tracesDir> <sessionId>` to completion; resolve its exit code and stdout. */
export async function runChild(
  mode: string,
  tracesDir: string,
  id: string,
): Promise<{ code: number; stdout: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CHILD, mode, tracesDir, id],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout).trim() };
}

/** A long-lived child: read its first stdout line, then end it by closing its stdin. */
export interface HeldChild {
  /** The child's process. */
  process: Deno.ChildProcess;
  /** The first line it printed. */
  firstLine: string;
  /** Close its stdin and wait for it to exit. */
  finish(): Promise<number>;
}

/** Start `_child.ts hold …` (or another mode that waits on stdin) and read its first line. */
export async function startChild(mode: string, tracesDir: string, id: string): Promise<HeldChild> {
  const process = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CHILD, mode, tracesDir, id],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = process.stdout.getReader();
  const dec = new TextDecoder();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += dec.decode(value, { stream: true });
  }
  reader.releaseLock();
  const firstLine = text.split("\n")[0]!;
  return {
    process,
    firstLine,
    async finish() {
      await process.stdin.close();
      await process.stdout.cancel();
      return (await process.status).code;
    },
  };
}
