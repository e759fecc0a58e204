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
import { createHolderLedger } from "../protocol/holder_ledger.ts";

/** Characters of committed context past which a task stops after its turn (32 MiB). */
export const MAX_CONTEXT_CHARS = 32 * 1024 * 1024;

/**
 * Characters of committed context the sessions of one penguin process keep
 * together (48 MiB): a session and its subagents, each under
 * {@linkcode MAX_CONTEXT_CHARS}. Each session sends its whole context every
 * turn, so eight subagents growing theirs at once cost the process several
 * times their sum: eight taking four turns of a 3.9 MB signature each took
 * penguin to 640 MB (attack round 25). Past it a task stops after its turn,
 * as past its own bound. A real session's context is a few MB at most (a
 * million tokens is some 4 MB of text).
 */
export const MAX_PROCESS_CONTEXT_CHARS = 48 * 1024 * 1024;

/** The committed context each live conversation of this process keeps. */
const live = createHolderLedger();

/** Record that the conversation `holder` keeps `chars` characters of context now (0: it ended). */
export function holdContext(holder: object, chars: number): void {
  live.hold(holder, chars);
}

/** Characters of context the process's other live conversations keep. */
export function contextBesides(holder: object): number {
  return live.heldBesides(holder);
}

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

/** The error a task stops with when the process's sessions keep `all` characters together, past the bound. */
export function processContextTooLarge(all: number): string {
  const mib = (n: number) => `${Math.round((n / (1024 * 1024)) * 10) / 10} MiB`;
  return `The sessions this penguin runs (a session and its subagents) hold ${mib(all)} of ` +
    `context together, more than the ${mib(MAX_PROCESS_CONTEXT_CHARS)} it keeps at once (a bound ` +
    "on memory): end the subagents no longer needed (kill_subagent), compact (/compact) or start " +
    "a new session";
}
