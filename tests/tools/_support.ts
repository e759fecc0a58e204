// Shared helpers for the tool tests: temp directory layouts and a runner that
// executes a tool through the real framing and checks the stream invariants.
import assert from "node:assert/strict";
import { join } from "node:path";
import { toolCall } from "../../lib/protocol/builders.ts";
import type {
  PartialToolCallOutput,
  StopReason,
  ToolCallOutputMessage,
} from "../../lib/protocol/types.ts";
import {
  type ExecuteOptions,
  executeTool,
  type ExecutionContext,
  type ToolExecutionItem,
} from "../../lib/tools/environment.ts";
import type { Tool } from "../../lib/tools/tool.ts";

/** The built-in tools' names, in their order. */
export const BUILTIN_NAMES: readonly string[] = [
  "read_file",
  "edit_file",
  "write_file",
  "exec_command",
  "input_command",
  "kill_command",
  "read_image",
];

/** A temp layout: `<root>/ws` (workspace), `<root>/outside`, `<root>/scratch` (scratchpad, not created). */
export interface Dirs {
  root: string;
  ws: string;
  outside: string;
  scratch: string;
}

/** Run `fn` with a fresh layout (all real paths); removes everything afterwards. */
export async function withDirs(fn: (d: Dirs) => Promise<void>): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "penguin-tools-" }));
  const d = {
    root,
    ws: join(root, "ws"),
    outside: join(root, "outside"),
    scratch: join(root, "scratch", "sid"),
  };
  await Deno.mkdir(d.ws);
  await Deno.mkdir(d.outside);
  try {
    await fn(d);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** What one framed execution produced. */
export interface Run {
  items: ToolExecutionItem[];
  partials: PartialToolCallOutput[];
  final: ToolCallOutputMessage;
  output: string;
  status: StopReason;
  deltas: string;
}

let counter = 0;

/**
 * Execute `tool` with `args` (an object, or a raw argument string) through
 * `executeTool`, and assert the framing invariants every call must satisfy:
 * start first, complete output last, concatenated deltas == output, stop
 * status == final status, output never empty.
 */
export async function run(
  tool: Tool | undefined,
  args: Record<string, unknown> | string,
  d: { ws: string; scratch?: string },
  opts: ExecuteOptions & {
    signal?: AbortSignal;
    name?: string;
    id?: string;
    ctx?: Pick<ExecutionContext, "vault" | "secrets" | "sandbox">;
  } = {},
): Promise<Run> {
  const name = opts.name ?? tool?.definition.name ?? "missing_tool";
  const id = opts.id ?? `call_${++counter}`;
  const raw = typeof args === "string" ? args : JSON.stringify(args);
  const items: ToolExecutionItem[] = [];
  for await (
    const item of executeTool(tool, toolCall(name, raw, id), {
      workspace: d.ws,
      scratchpad: d.scratch,
      sessionId: "session-test",
      signal: opts.signal,
      ...opts.ctx,
    }, { warn: () => {}, ...opts })
  ) items.push(item);
  const own = items.filter((i) => i.type !== "forwarded");
  const partials = own.filter((i): i is PartialToolCallOutput =>
    i.type === "partial_tool_call_output"
  );
  const final = own[own.length - 1] as ToolCallOutputMessage;
  assert.equal(final.type, "tool_call_output");
  assert.equal(final.tool_call_id, id);
  assert.equal(partials[0]?.event_type, "start");
  const stop = partials[partials.length - 1]!;
  assert.equal(stop.event_type, "stop");
  assert.equal(stop.stop_reason, final.stop_reason);
  assert.ok(partials.slice(1, -1).every((p) => p.event_type === "delta"));
  assert.ok(partials.every((p) => p.tool_call_id === id));
  const deltas = partials.map((p) => p.output).join("");
  assert.equal(deltas, final.output, "concatenated deltas must equal the final output");
  assert.notEqual(final.output, "");
  const imgs = partials.flatMap((p) => p.images ?? []);
  assert.deepEqual(imgs, final.images ?? []);
  return { items, partials, final, output: final.output, status: final.stop_reason, deltas };
}

/** Read a file as text, or undefined when it does not exist. */
export async function readOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

/** The names in a directory, sorted. */
export { dirNames as entries } from "../support/dir_names.ts";
