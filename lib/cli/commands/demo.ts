/**
 * `penguin demo`: the whole agent loop with no key. A built-in scripted model
 * (lib/models/scripted, a Chat Completions server on 127.0.0.1) is added to a
 * `demo` project as the pair (scripted, penguin-demo), and a real
 * `penguin run` drives it in a fresh workspace: the tools really run under the
 * sandbox and the trace is a real one. Only the model's replies are fixed.
 *
 * @module
 */
import { join } from "node:path";
import { addModel } from "../../state/project_config.ts";
import { projectConfigPath, tracesDir } from "../../state/paths.ts";
import { DEFAULT_AGENT_ID } from "../../state/ids.ts";
import { listSessionFiles, parseTraceFileName } from "../../trace/paths.ts";
import {
  DEMO_MODEL_ID,
  DEMO_PROVIDER,
  DEMO_TASK,
  demoScript,
  startScriptedModel,
} from "../../models/scripted/mod.ts";
import { PenguinError } from "../../protocol/errors.ts";
import { type Flag, flagHelp, flagValue, parseDeclared } from "../args.ts";
import { SANDBOX, WORKSPACE } from "./_session_flags.ts";
import type { Command, CommandContext } from "../command.ts";
import { runCommand } from "./run.ts";

/** The project the demo's model entry and sessions live in. */
export const DEMO_PROJECT_ID = "demo";

/** The flags of `penguin demo`: two of run's, passed on to it. */
const DEMO_FLAGS: readonly Flag<unknown>[] = [
  {
    ...WORKSPACE,
    help:
      "run in this existing directory (the model writes\nhello.txt there) instead of a new temporary one",
  },
  { ...SANDBOX, help: "passed to run: workspace-write (default), read-only, off" },
];

const HELP = `Usage: penguin demo [--workspace <dir>] [--sandbox <mode>]

Show the whole agent loop without a key: a real "penguin run" against
penguin's built-in SCRIPTED model, which answers from a fixed script on
127.0.0.1 (no network, no key). The scripted model lists the workspace,
writes hello.txt with write_file, runs "cat hello.txt" with exec_command and
answers with what the command printed. The tools really run, confined like
any run, and the session is recorded in a real trace.

By default everything goes to a new temporary directory (a data root and a
workspace), which is kept so you can inspect the trace; the last lines print
its path and the commands to look at it. With --root, the session is
recorded in that data root under the project "${DEMO_PROJECT_ID}", whose model table
gets the entry (${DEMO_PROVIDER}, ${DEMO_MODEL_ID}).

Flags:
${flagHelp(DEMO_FLAGS, 28)}

Exit status: that of the run: 0 completed, 1 failed, 2 usage error.

Example:
  penguin demo
`;

/** The trace files of the sessions in `dir` that are not in `before`. */
async function newTraceFiles(dir: string, before: Set<string>): Promise<string[]> {
  const out: string[] = [];
  for (const id of await sessionIds(dir)) {
    if (before.has(id)) continue;
    out.push(...(await listSessionFiles(dir, id)).map((r) => r.path));
  }
  return out;
}

async function* readDirOrEmpty(dir: string): AsyncGenerator<Deno.DirEntry> {
  try {
    for await (const e of Deno.readDir(dir)) yield e;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
}

async function sessionIds(dir: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const day of readDirOrEmpty(dir)) {
    if (!day.isDirectory) continue;
    for await (const f of readDirOrEmpty(join(dir, day.name))) {
      const parsed = f.isFile ? parseTraceFileName(f.name) : null;
      if (parsed) ids.add(parsed.sessionId);
    }
  }
  return ids;
}

/**
 * The run's "To continue this conversation" line, dropped: the scripted model
 * stops with the demo, so a resumed session would only find a closed port.
 */
function withoutResumeHint(text: string): string {
  return text.replace(/^To continue this conversation: .*\n?/m, "");
}

/** The data root and the workspace of the demo, in a new temporary directory (`tmp`) when not given. */
async function demoPlaces(
  ctx: CommandContext,
  given: string | undefined,
): Promise<{ root: string; workspace: string; tmp?: string }> {
  let workspace = given;
  if (
    workspace !== undefined &&
    !(await Deno.stat(workspace).then((s) => s.isDirectory, () => false))
  ) {
    throw new PenguinError("usage", `demo: the workspace is not a directory: ${workspace}`);
  }
  let tmp: string | undefined;
  if (ctx.root === undefined || workspace === undefined) {
    tmp = await Deno.makeTempDir({ prefix: "penguin-demo-" });
  }
  const root = ctx.root ?? join(tmp!, "data");
  if (workspace === undefined) {
    workspace = join(tmp!, "workspace");
    await Deno.mkdir(workspace);
  }
  return { root, workspace, ...(tmp !== undefined ? { tmp } : {}) };
}

async function run(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("demo", args, DEMO_FLAGS, 0);
  const { io } = ctx;
  const { root, workspace, tmp } = await demoPlaces(ctx, flagValue(p, WORKSPACE));
  const model = startScriptedModel(demoScript);
  try {
    await addModel(projectConfigPath({ root, projectId: DEMO_PROJECT_ID }), {
      provider: DEMO_PROVIDER,
      model_id: DEMO_MODEL_ID,
      base_url: model.baseUrl,
      client_type: "openai-chat",
      display_name: "penguin's built-in scripted demo model",
    });
    const traces = tracesDir({ root, projectId: DEMO_PROJECT_ID, agentId: DEFAULT_AGENT_ID });
    const before = await sessionIds(traces);
    io.out(
      `[scripted] penguin demo: a real "penguin run" against the built-in SCRIPTED model\n` +
        `[scripted] (${DEMO_PROVIDER}, ${DEMO_MODEL_ID}) on ${
          model.baseUrl.replace(/\/v1$/, "")
        }: its replies are fixed, no key and no network are used.\n` +
        `[scripted] task: ${DEMO_TASK}\n\n`,
    );
    const sandbox = flagValue(p, SANDBOX);
    const code = await runCommand.run([
      "--project-id",
      DEMO_PROJECT_ID,
      "--provider",
      DEMO_PROVIDER,
      "--model-id",
      DEMO_MODEL_ID,
      "--workspace",
      workspace,
      "--max-turns",
      "8",
      ...(sandbox !== undefined ? ["--sandbox", sandbox] : []),
      "-m",
      DEMO_TASK,
    ], { ...ctx, root, io: { ...io, err: (text) => io.err(withoutResumeHint(text)) } });
    const files = await newTraceFiles(traces, before);
    const trace = files[0];
    io.out(`\n[scripted] the model answered ${model.requests()} request(s).\n`);
    io.out(`Workspace: ${workspace}\n`);
    if (trace !== undefined) {
      io.out(
        `Trace: ${trace}\n\nLook at it offline:\n` +
          `  penguin trace show ${trace}\n` +
          `  penguin trace stats ${trace}\n` +
          `  penguin trace export ${trace} --format html -o demo.html\n`,
      );
    }
    io.out(
      "\nThe scripted model stopped with the demo, so this session cannot be continued; " +
        "configure a real model to go on (see 'A first real task' in the README).\n",
    );
    if (tmp !== undefined) {
      io.out(
        `${ctx.root === undefined ? "Everything" : "The workspace"} is in ${tmp} ` +
          "(remove it when done).\n",
      );
    }
    return code;
  } finally {
    await model.close();
  }
}

/** The `demo` command. */
export const demoCommand: Command = {
  path: ["demo"],
  summary: "run one real task against the built-in scripted model (no key needed)",
  help: HELP,
  run,
};
