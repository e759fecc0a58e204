/**
 * The size of a session's committed context as penguin itself measures it,
 * in characters, whatever the provider reports. Compaction is triggered by
 * the token count the provider reports for a request; one that reports none,
 * or too few (a hostile endpoint, a scripted one, a local server sending no
 * usage), never triggered it, so the context — kept in memory and sent whole
 * with every request — grew by up to a response's bounds each turn: 18
 * turns of a 7.9 MB text took one session to 450 MB. Past
 * {@linkcode MAX_CONTEXT_CHARS} a task stops after its turn instead of
 * sending the context again (`/compact` or a new session goes on); a turn
 * that ends the task ends it as it would (a resumed session's first task
 * sends what the user resumed, whatever its size).
 *
 * Not a compaction trigger of its own: a compaction sends the whole context
 * once more, and eight subagents each compacting a 15 MB context at once
 * took penguin from 423 to 899 MB.
 *
 * Counted: text, reasoning, tool names and arguments, tool outputs, and
 * opaque payloads (their JSON); not image data, which the image window and
 * the process's image ledger bound (`_image_window.ts`).
 *
 * @module
 */
import type { CompleteMessage } from "../protocol/types.ts";
import { jsonLength } from "../protocol/json_length.ts";

/** Characters of committed context past which a task stops after its turn (32 MiB). */
export const MAX_CONTEXT_CHARS = 32 * 1024 * 1024;

/** Characters one message keeps in the context (see the module doc). */
export function contextChars(m: CompleteMessage): number {
  let n = "fidelity" in m && m.fidelity !== undefined ? jsonLength(m.fidelity) : 0;
  switch (m.type) {
    case "text":
      return n + m.text.length;
    case "thinking":
      return n + m.thinking.length;
    case "tool_call":
      return n + m.name.length + m.arguments.length;
    case "tool_call_output":
      return n + m.output.length;
    case "inline_data":
      if (!m.mime_type.startsWith("image/")) n += m.data.length;
      return n;
    default:
      return n;
  }
}

/** The error a task stops with when its context holds `chars` characters, past the bound. */
export function contextTooLarge(chars: number): string {
  const mib = (n: number) => `${Math.round((n / (1024 * 1024)) * 10) / 10} MiB`;
  return `The session's context holds ${mib(chars)} of text, tool calls, tool outputs and opaque ` +
    `payloads, more than the ${mib(MAX_CONTEXT_CHARS)} penguin keeps of one session (a bound on ` +
    "memory; the provider's token counts never triggered a compaction): compact it (/compact) " +
    "or start a new session";
}
