/**
 * Helpers of the subagent tests: reading a chat-completions request the
 * scripted model server received (whose conversation it is, what tool
 * results and harness texts it carries) so one handler can script a parent
 * and its children at once.
 *
 * Every prompt in these tests starts with a `[[name]]` tag; the tag of a
 * request's first user message says whose conversation it is.
 *
 * @module
 */
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { type RecordedRequest, type ScriptedTurn, turn } from "../support/model_server.ts";

/** One chat message of a request body. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
}

/** The messages of a chat-completions request. */
export function chatMessages(req: RecordedRequest): ChatMessage[] {
  return ((req.body as { messages?: ChatMessage[] }).messages) ?? [];
}

/** Text of a message's content (string or parts). */
export function textOf(m: ChatMessage): string {
  if (typeof m.content === "string") return m.content;
  if (Array.isArray(m.content)) {
    return m.content.map((p) => (p as { text?: string }).text ?? "").join("");
  }
  return "";
}

/** The `[[name]]` tag of the request's first user message ("" when none). */
export function whose(req: RecordedRequest): string {
  const first = chatMessages(req).find((m) => m.role === "user");
  return /\[\[([\w-]+)\]\]/.exec(first ? textOf(first) : "")?.[1] ?? "";
}

/** The tool results of a request, in order. */
export function toolResults(req: RecordedRequest): Array<{ id: string; text: string }> {
  return chatMessages(req).filter((m) => m.role === "tool").map((m) => ({
    id: m.tool_call_id ?? "",
    text: textOf(m),
  }));
}

/** The tool outputs of every request, by tool call id (the last one sent wins). */
export function toolOutputsById(requests: readonly RecordedRequest[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of requests) {
    for (const m of chatMessages(r)) {
      if (m.role === "tool" && typeof m.tool_call_id === "string") {
        out.set(m.tool_call_id, String(m.content));
      }
    }
  }
  return out;
}

/** The user texts of a request, in order. */
export function userTexts(req: RecordedRequest): string[] {
  return chatMessages(req).filter((m) => m.role === "user").map(textOf);
}

/** How many assistant messages the request's history holds (its turn number, 0-based). */
export function turnOf(req: RecordedRequest): number {
  return chatMessages(req).filter((m) => m.role === "assistant").length;
}

/** The messages of a stream whose origin starts with `sessionId`. */
export function fromChild(stream: readonly OmniMessage[], sessionId: string): OmniMessage[] {
  return stream.filter((m) => m.origin?.[0] === sessionId);
}

/** The child session ids in a stream, in order of first appearance. */
export function childIds(stream: readonly OmniMessage[]): string[] {
  const out: string[] = [];
  for (const m of stream) {
    const id = m.origin?.[0];
    if (id !== undefined && !out.includes(id)) out.push(id);
  }
  return out;
}

/** The parent's turn that starts `[[child]] compute the answer` in the background. */
export function startChildInBackground(): ScriptedTurn {
  return turn.toolCall("run_subagent", {
    description: "background work",
    prompt: "[[child]] compute the answer",
    run_in_background: true,
  });
}

/** The child's answer (`child result: 42`), given only once `released` settles. */
export async function childAnswerAfter(released: Promise<void>): Promise<ScriptedTurn> {
  await released;
  return turn.text("child result: 42");
}
