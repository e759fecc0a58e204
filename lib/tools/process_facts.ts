/**
 * The `penguin_process` facts of a command tool's output: which process the
 * call concerns, whether it still runs, and its exit code. Hosts and the
 * restore after a restart read these instead of the wording of the notes.
 *
 * @module
 */
import type { ToolProcessFacts } from "../protocol/types.ts";

/** The facts of `session` in `state`; the exit code is the one it recorded, null while it runs. */
export function processFacts(
  session: { readonly id: string; readonly exit: { code: number } | undefined },
  state: ToolProcessFacts["state"],
): ToolProcessFacts {
  return {
    id: session.id,
    state,
    exit_code: state === "running" ? null : session.exit?.code ?? null,
  };
}
