/**
 * The marker blocks the agent loop synthesizes: the
 * `[turn_aborted]` / `[turn_retried]` transcripts of an interrupted or failed
 * turn, `[user_steering]` and the max-turns notice. Producers write the square
 * form only; the unwrap helper also accepts the legacy `<tag>` form.
 *
 * @module
 */
import { splitGoalRound } from "../protocol/goal_round_marker.ts";
import type { CompleteMessage, ToolCallMessage, ToolCallOutputMessage } from "../protocol/types.ts";

/** Block form of a marker: `[tag]\n<body>\n[/tag]`. */
export function markerBlock(tag: string, body: string): string {
  return `[${tag}]\n${body}\n[/${tag}]`;
}

function line(tag: string, body: string, attrs = ""): string {
  return `  [${tag}${attrs}]${body}[/${tag}]`;
}

/** `  [user_input]…[/user_input]`: a text input of the transcribed turn. */
export function transcribeUserInput(text: string): string {
  return line("user_input", text);
}

/** `  [thinking]…[/thinking]`: a thinking segment the model produced. */
export function transcribeThinking(thinking: string): string {
  return line("thinking", thinking);
}

/** `  [text]…[/text]`: a text segment the model produced. */
export function transcribeText(text: string): string {
  return line("text", text);
}

/** `  [tool_call name="<n>" id="<id>"]<args>[/tool_call]`. */
export function transcribeToolCall(
  call: Pick<ToolCallMessage, "name" | "tool_call_id" | "arguments">,
): string {
  return line("tool_call", call.arguments, ` name="${call.name}" id="${call.tool_call_id}"`);
}

/** `  [tool_call_output id="<id>" status="<s>"]<out>[/tool_call_output]`. */
export function transcribeToolCallOutput(
  out: Pick<ToolCallOutputMessage, "tool_call_id" | "stop_reason" | "output">,
): string {
  return line(
    "tool_call_output",
    out.output,
    ` id="${out.tool_call_id}" status="${out.stop_reason ?? "completed"}"`,
  );
}

/** The transcript lines of what one attempt produced: segments, then calls, then outputs. */
export function transcribeTurn(
  segments: readonly CompleteMessage[],
  calls: readonly ToolCallMessage[],
  outputs: readonly ToolCallOutputMessage[],
): string[] {
  const lines: string[] = [];
  for (const s of segments) {
    if (s.type === "thinking") lines.push(transcribeThinking(s.thinking));
    else if (s.type === "text") lines.push(transcribeText(s.text));
  }
  for (const c of calls) lines.push(transcribeToolCall(c));
  for (const o of outputs) lines.push(transcribeToolCallOutput(o));
  return lines;
}

/** The `[turn_aborted]` block resent as carry-over after an interrupted turn. */
export function turnAbortedBlock(lines: readonly string[]): string {
  return ["[turn_aborted]", ...lines, "[/turn_aborted]"].join("\n");
}

/** The `[turn_retried]` block appended to a retried turn's input. */
export function turnRetriedBlock(lines: readonly string[]): string {
  return ["[turn_retried]", ...lines, "[/turn_retried]"].join("\n");
}

const SYNTHETIC = [
  /^\[(turn_aborted|turn_retried)\]\n?([\s\S]*?)\n?\[\/\1\]\s*$/,
  /^<(turn_aborted|turn_retried)>\n?([\s\S]*?)\n?<\/\1>\s*$/,
];

/**
 * The inner lines of a text that is exactly one `[turn_aborted]` or
 * `[turn_retried]` block (either form), or null for any other text.
 */
export function unwrapSyntheticBlock(text: string): string | null {
  for (const re of SYNTHETIC) {
    const m = re.exec(text);
    if (m) return m[2]!;
  }
  return null;
}

/** A steering message: `[user_steering]\n<text>\n[/user_steering]`. */
export function userSteeringText(text: string): string {
  return markerBlock("user_steering", text);
}

/** The assistant notice of a task stopped by `max_turns`. */
export function maxTurnsText(maxTurns: number): string {
  return `[reached max turns (${maxTurns}); stopping]`;
}

/** Placeholder output for a committed call whose tool never finished because of an abort. */
export const INTERRUPTED_BY_USER = "[interrupted: tool aborted by user]";

/**
 * A goal-round input (`[goal]\nround: N…[/goal]\n\n<body>`) reduced for
 * carry-over once its goal run has ended: one line saying so, then the
 * body, so a later task does not follow the goal protocol. Other text is
 * returned unchanged.
 */
export function downgradeGoalRound(text: string): string {
  const m = splitGoalRound(text);
  if (!m) return text;
  return `[goal round ${m.round} of an ended goal run — protocol omitted; do not act on it]\n${m.body}`;
}
