/**
 * input_command: drive a command session that outlived its
 * exec_command call — write to its stdin, send Ctrl-C (a lone `\u0003` is
 * SIGINT to its process group), or just poll — and return the output that
 * arrives during the yield window.
 *
 * Still running at the window end → `[process still running with
 * process_id <id>]`; exited → the session is removed and the exit verdict
 * of exec_command applies. An abort only ends the poll.
 *
 * @module
 */
import { z } from "zod";
import { fail } from "./_args.ts";
import { descriptionArg, millisArg, processIdArg } from "./_command_args.ts";
import { clampYield } from "./yield_window.ts";
import { processFacts } from "./process_facts.ts";
import type { ProcessRegistry } from "./processes.ts";
import type { ToolDefinition, ToolEvent } from "./tool.ts";
import { type DefinedTool, defineTool } from "./define.ts";
import { inputPreview, visibleControls } from "../display/tool_preview.ts";
import type { ProcessToolContext } from "./command_context.ts";

/** Ctrl-C: sent alone, it becomes SIGINT to the process group. */
export const CTRL_C = "\u0003";

/** Default window after writing characters (ms). */
export const INPUT_WRITE_YIELD_MS = 250;

/** Default window of an empty poll (ms). */
export const INPUT_POLL_YIELD_MS = 120_000;

const schema = z.object({
  description: descriptionArg,
  process_id: processIdArg,
  chars: z.string().describe(
    'Characters for stdin (include "\\n" to end a line). "\\u0003" alone sends Ctrl-C (SIGINT to ' +
      "the process group) and cannot be combined with other characters. Empty or absent: write " +
      "nothing, just poll.",
  ).optional(),
  yield_time_ms: millisArg(
    `How long to collect output before returning, in ms: default ${INPUT_WRITE_YIELD_MS} after ` +
      `writing, ${INPUT_POLL_YIELD_MS} for an empty poll (it returns early when the command exits; ` +
      "pass less to peek at a long-lived process). At least 250; capped 1 s below the tool timeout.",
  ),
});

/** The note when the command had not taken all of `chars` by the end of the window. */
export const UNREAD_NOTE =
  "[the command has not read all of chars yet; the rest is written as it reads its input]";

/** The note of a session still running after a poll. */
export function stillRunningNote(id: string): string {
  return `[process still running with process_id ${id}]`;
}

/** A live command session found by the id a call named, with the registry holding it. */
export interface FoundSession {
  /** The id, trimmed. */
  id: string;
  /** The registry that holds it. */
  registry: ProcessRegistry;
  /** The session. */
  session: NonNullable<ReturnType<ProcessRegistry["get"]>>;
}

/**
 * The session `processId` names in `registry`, or the failure text for `tool` when the registry
 * does not hold it (it may have exited and been collected, or been killed).
 */
export function findSession(
  tool: string,
  processId: string,
  registry: ProcessRegistry | undefined,
): FoundSession | { failure: string } {
  const id = processId.trim();
  const session = registry?.get(id);
  if (registry && session) return { id, registry, session };
  const live = registry?.ids() ?? [];
  const known = live.length === 0
    ? "There are no command sessions in this session."
    : `Live process ids: ${live.join(", ")}.`;
  return {
    failure:
      `${tool} was not run: no command session has process_id "${id}" (it may have exited and been collected, or been killed). ${known}`,
  };
}

/**
 * A process tool's `run` from `run`, which gets the session the call's `process_id` names; a call
 * naming no live session fails with {@linkcode findSession}'s text instead.
 */
export function onFoundSession<A extends { process_id: string }>(
  run: (
    found: FoundSession,
    args: A,
    ctx: ProcessToolContext,
    definition: ToolDefinition,
  ) => AsyncGenerator<ToolEvent>,
): (args: A, ctx: ProcessToolContext, definition: ToolDefinition) => AsyncGenerator<ToolEvent> {
  return async function* (args, ctx, definition) {
    const found = findSession(definition.name, args.process_id, ctx.processes);
    if ("failure" in found) return yield* fail(found.failure);
    return yield* run(found, args, ctx, definition);
  };
}

const runInput = onFoundSession(async function* (
  { id, registry, session },
  args: z.infer<typeof schema>,
  ctx,
  definition,
) {
  const chars = args.chars ?? "";
  if (chars.includes(CTRL_C) && chars !== CTRL_C) {
    return yield* fail(
      'input_command was not run: "\\u0003" (Ctrl-C) must be sent alone, as the whole of chars. Send it in one call and the other characters in another.',
    );
  }

  // The write is not awaited before the window: a command that does not read its input (a full
  // pipe) held the call to the tool's timeout, whatever yield_time_ms said (attack round 21).
  let unwritten = false;
  if (session.exit === undefined) {
    if (chars === CTRL_C) session.interrupt();
    else if (chars !== "") {
      unwritten = true;
      void session.write(chars).finally(() => unwritten = false);
    }
  }
  const windowMs = clampYield(
    args.yield_time_ms,
    chars === "" ? INPUT_POLL_YIELD_MS : INPUT_WRITE_YIELD_MS,
    definition.timeoutMs,
  );
  const end = yield* session.follow(windowMs, ctx.signal);
  // An abort ends only the poll: the command runs on.
  if (end === "aborted") {
    return yield { type: "result", status: "aborted", process: processFacts(session, "running") };
  }
  if (end === "window") {
    return yield {
      type: "result",
      status: "completed",
      note: unwritten ? `${UNREAD_NOTE}\n${stillRunningNote(id)}` : stillRunningNote(id),
      process: processFacts(session, "running"),
    };
  }
  registry.remove(id);
  // Loaded on use: the offline views load this file for its preview only.
  const { exitVerdict } = await import("./command_session.ts");
  yield { type: "result", ...exitVerdict(session.exit!), process: processFacts(session, "exited") };
});

/** input_command, declared once: schema, limits, permission, preview and implementation. */
export const inputCommandTool: DefinedTool<ProcessToolContext> = defineTool({
  name: "input_command",
  description:
    "Talk to a command that exec_command left running (identified by its process_id): write " +
    "characters to its stdin, interrupt it with Ctrl-C, or poll for new output and its exit.",
  args: schema,
  permission: "rw",
  timeoutMs: 130_000,
  maxOutputLength: 16_000,
  callDescription: true,
  // `<process_id>`, or `<process_id> << <chars>` (controls made visible) when it writes.
  preview: inputPreview("process_id", "chars", visibleControls),
  run: runInput,
});

/** The default input_command definition. */
export const INPUT_COMMAND_DEFINITION: ToolDefinition = inputCommandTool.definition;

/** Build input_command from a (possibly config-overridden) definition. */
export const createInputCommandTool: DefinedTool<ProcessToolContext>["create"] =
  inputCommandTool.create;
