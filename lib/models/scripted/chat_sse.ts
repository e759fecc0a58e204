/**
 * A {@linkcode ScriptedReply} as a Chat Completions stream: one SSE event per
 * chunk (role, text deltas, tool-call deltas, finish, usage), then `[DONE]`,
 * the way OpenAI-compatible servers stream.
 *
 * @module
 */
import type { ScriptedReply } from "./reply.ts";

/** Characters per streamed text delta. */
const DELTA = 12;

/** Token counts the scripted model reports: a rough length estimate, labelled as such. */
export interface ScriptedUsage {
  /** Prompt tokens (estimated from the request size). */
  prompt: number;
  /** Completion tokens (estimated from the reply size). */
  completion: number;
}

function pieces(s: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += DELTA) out.push(s.slice(i, i + DELTA));
  return out;
}

/**
 * The SSE events of `reply` for `model`. `turn` makes tool-call ids unique
 * across the turns of one task (`call_<turn>_<n>`).
 */
export function chatCompletionEvents(
  reply: ScriptedReply,
  model: string,
  turn: number,
  usage: ScriptedUsage,
): string[] {
  const base = {
    id: `chatcmpl-scripted-${turn}`,
    object: "chat.completion.chunk",
    created: 0,
    model,
  };
  const event = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
  const delta = (d: Record<string, unknown>, finish: string | null = null) =>
    event({ ...base, choices: [{ index: 0, delta: d, finish_reason: finish }] });
  const out = [delta({ role: "assistant", content: "" })];
  for (const p of pieces(reply.text ?? "")) out.push(delta({ content: p }));
  const calls = reply.calls ?? [];
  calls.forEach((call, index) => {
    out.push(delta({
      tool_calls: [{
        index,
        id: `call_${turn}_${index}`,
        type: "function",
        function: { name: call.name, arguments: "" },
      }],
    }));
    for (const p of pieces(JSON.stringify(call.arguments))) {
      out.push(delta({ tool_calls: [{ index, function: { arguments: p } }] }));
    }
  });
  out.push(delta({}, calls.length > 0 ? "tool_calls" : "stop"));
  out.push(event({
    ...base,
    choices: [],
    usage: {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      total_tokens: usage.prompt + usage.completion,
    },
  }));
  out.push("data: [DONE]\n\n");
  return out;
}
