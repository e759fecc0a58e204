// Shared helpers for the command tool tests: a workspace visible inside the
// sandbox, a session context (policy + registry), a framed runner that checks
// the executeTool invariants and the process id in a note (/proc probes and
// waits are in _process_probes.ts).
import assert from "node:assert/strict";
import { eventually, pidsWithArg } from "./_process_probes.ts";
import { toolCall } from "../../lib/protocol/builders.ts";
import type { StopReason, ToolCallOutputMessage } from "../../lib/protocol/types.ts";
import { createPolicy, type SandboxPolicy } from "../../lib/sandbox/mod.ts";
import {
  builtinTools,
  createProcessRegistry,
  executeTool,
  type ExecutionContext,
  type ProcessRegistry,
  type ProcessRegistryOptions,
  type Tool,
  type ToolExecutionItem,
} from "../../lib/tools/mod.ts";

/** The built-in tools, by name. */
export const TOOLS: Map<string, Tool> = builtinTools();

/** A session as the command tools see it. */
export interface Session {
  ws: string;
  policy: SandboxPolicy;
  processes: ProcessRegistry;
  ctx: ExecutionContext;
}

/**
 * Run `fn` with a fresh workspace under /var/tmp (the sandbox has a private
 * /tmp), a policy whose HOME is the empty workspace, and a registry; every
 * process is killed and the workspace removed afterwards.
 */
export async function withSession(
  fn: (s: Session) => Promise<void>,
  opts: {
    registry?: ProcessRegistryOptions;
    policy?: Partial<SandboxPolicy>;
    vault?: Record<string, string>;
  } = {},
): Promise<void> {
  const base = await Deno.stat("/var/tmp").then((s) => s.isDirectory, () => false);
  const ws = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "penguin-cmd-test-", ...(base ? { dir: "/var/tmp" } : {}) }),
  );
  const policy = {
    ...createPolicy({
      workspace: ws,
      home: "",
      hostEnv: { PATH: Deno.env.get("PATH") ?? "", HOME: ws },
    }),
    ...opts.policy,
  };
  const processes = createProcessRegistry(opts.registry);
  const ctx: ExecutionContext = {
    workspace: ws,
    sessionId: "session-cmd-test",
    sandbox: policy,
    processes,
    ...(opts.vault ? { vault: opts.vault } : {}),
  };
  try {
    await fn({ ws, policy, processes, ctx });
  } finally {
    await processes.disposeAll();
    await Deno.remove(ws, { recursive: true });
  }
}

/** What one framed call produced. */
export interface Call {
  output: string;
  status: StopReason;
  deltas: string[];
  final: ToolCallOutputMessage;
}

let counter = 0;

/**
 * Execute `name` through `executeTool` with `ctx`, checking the framing
 * invariants (start first, deltas concatenate to the output, stop status ==
 * final status, never empty). `onDelta` sees each delta as it streams.
 */
export async function call(
  ctx: ExecutionContext,
  name: string,
  args: Record<string, unknown>,
  opts: { tool?: Tool; signal?: AbortSignal; onDelta?: (text: string) => void } = {},
): Promise<Call> {
  const id = `call_cmd_${++counter}`;
  const items: ToolExecutionItem[] = [];
  const tool = opts.tool ?? TOOLS.get(name);
  const context = opts.signal ? { ...ctx, signal: opts.signal } : ctx;
  for await (
    const item of executeTool(tool, toolCall(name, JSON.stringify(args), id), context, {
      warn: () => {},
    })
  ) {
    items.push(item);
    if (item.type === "partial_tool_call_output" && item.event_type === "delta") {
      opts.onDelta?.(item.output);
    }
  }
  const partials = items.filter((i) => i.type === "partial_tool_call_output");
  const final = items[items.length - 1] as ToolCallOutputMessage;
  assert.equal(final.type, "tool_call_output");
  assert.equal(partials[0]?.event_type, "start");
  const stop = partials[partials.length - 1]!;
  assert.equal(stop.event_type, "stop");
  assert.equal(stop.stop_reason, final.stop_reason);
  const deltas = partials.filter((p) => p.event_type === "delta").map((p) => p.output);
  assert.equal(deltas.join(""), final.output, "concatenated deltas must equal the final output");
  assert.notEqual(final.output, "");
  return { output: final.output, status: final.stop_reason, deltas, final };
}

/** exec_command starting `cmd` in the background. */
export function inBackground(
  ctx: ExecutionContext,
  cmd: string,
  description = "bg",
): Promise<Call> {
  return call(ctx, "exec_command", { description, cmd, run_in_background: true });
}

/**
 * exec_command running `cmd` (whose `sleep <nap>` shows it runs) in the
 * foreground with a long window, aborted once the sleep has started.
 */
export async function abortOnceRunning(
  ctx: ExecutionContext,
  cmd: string,
  nap: string,
): Promise<Call> {
  const controller = new AbortController();
  const running = call(ctx, "exec_command", { description: "long", cmd, yield_time_ms: 60_000 }, {
    signal: controller.signal,
  });
  assert.ok(await eventually(() => pidsWithArg(nap).length > 0), "the sleep never started");
  controller.abort();
  return await running;
}

/** The `proc-<8hex>` id in a note. */
export function procId(output: string): string {
  const m = output.match(/process_id (proc-[0-9a-f]{8})/);
  assert.ok(m, `no process_id in ${JSON.stringify(output)}`);
  return m[1]!;
}
