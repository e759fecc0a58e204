/**
 * What a scripted model says in one turn, and the parts of an incoming
 * Chat Completions request a script reads to decide it.
 *
 * @module
 */

/** One tool call a scripted turn makes. */
export interface ScriptedCall {
  /** Tool name, e.g. `exec_command`. */
  name: string;
  /** Arguments object (sent JSON-encoded). */
  arguments: Record<string, unknown>;
}

/** One scripted model turn: text, then tool calls (none = the answer). */
export interface ScriptedReply {
  /** Assistant text streamed before the calls. */
  text?: string;
  /** Tool calls, in order. */
  calls?: ScriptedCall[];
}

/** One message of a Chat Completions request body, as far as a script needs it. */
export interface ChatMessageView {
  /** `system`, `user`, `assistant` or `tool`. */
  role: string;
  /** The message's text (content parts joined). */
  text: string;
}

/** The request a script answers. */
export interface ScriptedRequest {
  /** The messages of the request, oldest first. */
  messages: ChatMessageView[];
  /** How many assistant turns the history holds (0 on the first request of a task). */
  turn: number;
}

/** The script: the reply to one request. */
export type Script = (req: ScriptedRequest) => ScriptedReply;

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((p) =>
      typeof p === "object" && p !== null && typeof (p as { text?: unknown }).text === "string"
        ? (p as { text: string }).text
        : ""
    ).join("");
  }
  return "";
}

/** Read the messages of a parsed Chat Completions body (anything else: none). */
export function requestOf(body: unknown): ScriptedRequest {
  const raw = typeof body === "object" && body !== null
    ? (body as { messages?: unknown }).messages
    : undefined;
  const messages: ChatMessageView[] = Array.isArray(raw)
    ? raw.filter((m): m is Record<string, unknown> => typeof m === "object" && m !== null)
      .map((m) => ({ role: String(m.role ?? ""), text: textOf(m.content) }))
    : [];
  return { messages, turn: messages.filter((m) => m.role === "assistant").length };
}
