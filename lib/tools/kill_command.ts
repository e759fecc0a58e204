/**
 * kill_command: end a command session — disarm its completion
 * notice, SIGTERM its process group, SIGKILL everything after 1000 ms —
 * return the output not yet delivered and remove it from the registry.
 *
 * Notes: `[process <id> killed (<how>)]`, or for a session that had
 * already ended `[process <id> had already exited (<status>); session
 * removed]`. The kill is not abortable once started.
 *
 * @module
 */
import { z } from "zod";
import type { ExitStatus } from "../sandbox/mod.ts";
import { pendingOutput } from "./_args.ts";
import { descriptionArg, processIdArg } from "./_command_args.ts";
import { processFacts } from "./process_facts.ts";
import { onFoundSession } from "./input_command.ts";
import type { ToolDefinition } from "./tool.ts";
import { type DefinedTool, defineTool } from "./define.ts";
import type { ProcessToolContext } from "./command_context.ts";

const schema = z.object({
  description: descriptionArg,
  process_id: processIdArg,
});

/** How a kill ended (`graceMs`: the wait before SIGKILL), for the `[process <id> killed (…)]` note. */
export function describeKill(status: ExitStatus, graceMs: number): string {
  if (status.signal === "SIGTERM") return "SIGTERM";
  if (status.signal === "SIGKILL") return `SIGKILL after SIGTERM was ignored for ${graceMs} ms`;
  if (status.signal) return `terminated by signal ${status.signal} after SIGTERM`;
  return `exited with code ${status.code} after SIGTERM`;
}

const runKill = onFoundSession(async function* (
  { id, registry, session },
  _args: z.infer<typeof schema>,
) {
  // Loaded on use: the offline views load this file for its preview only.
  const { describeExit, KILL_GRACE_MS } = await import("./command_session.ts");
  session.notify = false;
  const already = session.exit;
  const status = already ?? await session.kill(KILL_GRACE_MS);
  registry.remove(id);
  yield* pendingOutput(session.take());
  const note = already
    ? `[process ${id} had already exited (${describeExit(already)}); session removed]`
    : `[process ${id} killed (${describeKill(status, KILL_GRACE_MS)})]`;
  yield {
    type: "result",
    status: "completed",
    note,
    process: processFacts(session, already ? "exited" : "killed"),
  };
});

/** kill_command, declared once: schema, limits, permission and implementation. */
export const killCommandTool: DefinedTool<ProcessToolContext> = defineTool({
  name: "kill_command",
  description:
    "Stop a command that exec_command left running (identified by its process_id): its whole " +
    "process group gets SIGTERM, then SIGKILL after a second. Returns the output you have not " +
    "seen yet. Also clears away a session that has already exited.",
  args: schema,
  permission: "rw",
  timeoutMs: 30_000,
  maxOutputLength: 16_000,
  callDescription: true,
  run: runKill,
});

/** The default kill_command definition. */
export const KILL_COMMAND_DEFINITION: ToolDefinition = killCommandTool.definition;

/** Build kill_command from a (possibly config-overridden) definition. */
export const createKillCommandTool: DefinedTool<ProcessToolContext>["create"] =
  killCommandTool.create;
