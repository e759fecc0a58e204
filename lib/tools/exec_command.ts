/**
 * exec_command: run `bash -c <cmd>` under the sandbox, with the
 * session's login environment replayed (the shell snapshot), stream its
 * merged output for a yield window, and hand a command that outlives the
 * window to the session's process registry as `proc-<8hex>`.
 *
 * Verdicts: exit 0 → completed; non-zero → `[exit code: N]` (failed);
 * signal → `[terminated by signal SIG]` (failed); the sandbox cannot start
 * → `[spawn error: <why and how to fix>]` (failed, nothing ran); still
 * running at the window end → registered, `[process running with
 * process_id <id>; …]` (completed). `run_in_background` registers at once
 * and arms a completion notice. An abort during the window kills the
 * command; a command that is not registered never outlives the call.
 *
 * @module
 */
import { z } from "zod";
import { errorMessage } from "../protocol/errors.ts";
import { fail, pendingOutput } from "./_args.ts";
import { commandPolicy, descriptionArg, flagArg, millisArg } from "./_command_args.ts";
import { clampYield } from "./yield_window.ts";
import type { CommandSession } from "./command_session.ts";
import { processFacts } from "./process_facts.ts";
import type { ToolDefinition, ToolEvent } from "./tool.ts";
import { type DefinedTool, defineTool } from "./define.ts";
import {
  PREVIEW_COMMAND_MAX,
  readField,
  singleLine,
  type ToolPreviewFn,
} from "../display/tool_preview.ts";
import type { CommandToolContext } from "./command_context.ts";
import { resolveWorkspacePath } from "./workspace_path.ts";
import { enterCommandGates } from "./command_gate.ts";

/** Default yield window of exec_command (ms). */
export const EXEC_DEFAULT_YIELD_MS = 60_000;

const schema = z.object({
  description: descriptionArg,
  cmd: z.string().min(1).describe("The command line to run with `bash -c`."),
  workdir: z.string().describe(
    "Directory to run in: relative to the workspace, or an absolute path inside it. Default: the workspace.",
  ).optional(),
  yield_time_ms: millisArg(
    `How long to wait for the command before returning, in ms (default ${EXEC_DEFAULT_YIELD_MS}; ` +
      "at least 250; capped 1 s below the tool timeout). If it is still running then, you get " +
      "the output so far and a process_id, and it keeps running.",
  ),
  run_in_background: flagArg(
    "Return a process_id at once instead of waiting. When the command exits, its result " +
      "arrives as an automatic message, so there is no need to poll. Default false.",
  ),
});

/** The note of a command registered after its window. */
export function runningNote(id: string): string {
  return `[process running with process_id ${id}; use input_command to send input or poll for output]`;
}

/** The note of a command started with `run_in_background`. */
export function backgroundNote(id: string): string {
  return `[process running in the background with process_id ${id}; its result will arrive as a message when it exits, so there is no need to poll — input_command sends input or peeks, kill_command stops it]`;
}

async function workingDirectory(
  workdir: string | undefined,
  ctx: CommandToolContext,
): Promise<{ ok: true; cwd: string } | { ok: false; message: string }> {
  if (workdir === undefined || workdir === "") return { ok: true, cwd: ctx.workspace };
  const refuse = (why: string) => ({
    ok: false as const,
    message: `exec_command was not run: cannot use workdir "${workdir}": ${why}`,
  });
  const at = await resolveWorkspacePath(workdir, ctx, "read");
  if (!at.ok) return refuse(at.message);
  try {
    const info = await Deno.stat(at.real);
    if (!info.isDirectory) return refuse("it is not a directory.");
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return refuse("it does not exist.");
    }
    return refuse(`${errorMessage(err)}.`);
  }
  return { ok: true, cwd: at.real };
}

/** Run one call once it holds a slot of its session's gate and of the process's (`command_gate.ts`). */
async function* runExec(
  args: z.infer<typeof schema>,
  ctx: CommandToolContext,
  definition: ToolDefinition,
): AsyncGenerator<ToolEvent> {
  const leave = await enterCommandGates(ctx.processes, ctx.signal);
  if (leave === undefined || ctx.signal.aborted) {
    leave?.();
    return yield { type: "result", status: "aborted" };
  }
  try {
    return yield* runCommand(args, ctx, definition, leave);
  } finally {
    leave();
  }
}

/** One command call; `leave` gives its slot back once it started (background) or its window ended. */
async function* runCommand(
  args: z.infer<typeof schema>,
  ctx: CommandToolContext,
  definition: ToolDefinition,
  leave: () => void,
): AsyncGenerator<ToolEvent> {
  // Long because: one command call (resolve its directory, start it, then wait, move it to the
  // background or kill it); the steps share the session and whether it was registered.
  const { cmd, run_in_background: background } = args;
  const registry = ctx.processes;
  if (background && !registry) {
    return yield* fail(
      "exec_command was not run: run_in_background needs a session that keeps background processes, and this one does not. Run the command in the foreground.",
    );
  }
  const dir = await workingDirectory(args.workdir, ctx);
  if (!dir.ok) return yield* fail(dir.message);
  if (ctx.signal.aborted) return yield { type: "result", status: "aborted" };

  // Loaded on the first call: the offline views load this file for its preview only.
  const { exitVerdict, newProcessId, startCommand } = await import("./command_session.ts");
  const { secretsOf } = await import("./environment.ts");
  let session: CommandSession;
  try {
    session = await startCommand({
      id: registry ? registry.newId() : newProcessId(),
      cmd,
      cwd: dir.cwd,
      policy: commandPolicy(ctx),
      secrets: secretsOf(ctx),
      ...(registry ? { bufferLimit: registry.bufferLimit } : {}),
    });
  } catch (err) {
    return yield { type: "result", status: "failed", note: `[spawn error: ${errorMessage(err)}]` };
  }

  if (background && registry) {
    leave();
    if (!await registry.register(session, { notify: true })) {
      return yield {
        type: "result",
        status: "failed",
        note: "[process killed: the session is closing]",
        process: processFacts(session, "killed"),
      };
    }
    return yield {
      type: "result",
      status: "completed",
      note: backgroundNote(session.id),
      process: processFacts(session, "running"),
    };
  }

  const windowMs = clampYield(
    args.yield_time_ms,
    EXEC_DEFAULT_YIELD_MS,
    definition.timeoutMs,
  );
  const release = registry?.track(session);
  let registered = false;
  try {
    const end = yield* session.follow(windowMs, ctx.signal);
    // Exited, aborted, or running on past its window: it no longer holds a slot.
    leave();
    if (end === "exited") {
      const verdict = exitVerdict(session.exit!);
      return yield { type: "result", ...verdict, process: processFacts(session, "exited") };
    }
    if (end === "aborted") {
      await session.kill();
      yield* pendingOutput(session.take());
      return yield { type: "result", status: "aborted", process: processFacts(session, "killed") };
    }
    if (!registry) {
      await session.kill();
      yield* pendingOutput(session.take());
      return yield {
        type: "result",
        status: "failed",
        note:
          `[process killed at the end of its ${windowMs} ms window: this session keeps no background processes]`,
        process: processFacts(session, "killed"),
      };
    }
    registered = await registry.register(session);
    if (!registered) {
      return yield {
        type: "result",
        status: "failed",
        note: "[process killed: the session is closing]",
        process: processFacts(session, "killed"),
      };
    }
    yield {
      type: "result",
      status: "completed",
      note: runningNote(session.id),
      process: processFacts(session, "running"),
    };
  } finally {
    release?.();
    // An unregistered command never outlives its call (abandoned, aborted, or finished with stragglers).
    if (!registered) void session.kill();
  }
}

/** `$ <cmd>`, led by the call's description when it has one: `<description> ($ <cmd>)`. */
const previewExec: ToolPreviewFn = ({ json, settled }) => {
  const cmd = readField(json, "cmd");
  if (!cmd) return { payload: "", complete: settled, description: true };
  const text = singleLine(cmd.value);
  const shown = text.length > PREVIEW_COMMAND_MAX ? `${text.slice(0, PREVIEW_COMMAND_MAX)}…` : text;
  return { payload: `$ ${shown}`, complete: cmd.complete, description: true };
};

/** exec_command, declared once: schema, limits, permission, preview and implementation. */
export const execCommandTool: DefinedTool<CommandToolContext> = defineTool({
  name: "exec_command",
  description:
    "Run a shell command (`bash -c`, with your login shell's environment) in the workspace, inside penguin's sandbox: builds, tests, " +
    "searches, installs — whatever the file tools do not cover. stdout and stderr come back merged. " +
    "A command still running after yield_time_ms keeps running under a process_id: poll it or " +
    "send it input with input_command, stop it with kill_command. Start servers and watchers " +
    "that way, not with a trailing `&`: background jobs of a finished command are killed with it.",
  args: schema,
  permission: "rw",
  timeoutMs: 120_000,
  maxOutputLength: 16_000,
  callDescription: true,
  preview: previewExec,
  run: runExec,
});

/** The default exec_command definition. */
export const EXEC_COMMAND_DEFINITION: ToolDefinition = execCommandTool.definition;

/** Build exec_command from a (possibly config-overridden) definition. */
export const createExecCommandTool: DefinedTool<CommandToolContext>["create"] =
  execCommandTool.create;
