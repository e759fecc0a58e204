/**
 * The scripted parent's `run_subagent` calls: a child named by the
 * `[[name]]` marker its prompt starts with, in the foreground or the
 * background.
 *
 * @module
 */
import { item } from "../support/model_server.ts";

/** A `run_subagent` call `id` of `description` and `prompt`, in the background when `background`. */
export function runSubagent(
  id: string,
  description: string,
  prompt: string,
  background = false,
): ReturnType<typeof item.toolCall> {
  const args = background
    ? { description, prompt, run_in_background: true }
    : { description, prompt };
  return item.toolCall("run_subagent", args, { id });
}
