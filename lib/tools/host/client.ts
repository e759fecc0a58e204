/**
 * The penguin side of the tool host: runs file-tool calls in a copy of
 * penguin started inside the session's OS sandbox (see `serve.ts`), one host
 * per sandbox policy, started on the first call and stopped when idle or
 * disposed.
 *
 * The host is started through {@linkcode spawnSandboxed} like any model
 * command, with the same mounts (workspace and scratchpad, data root and
 * secrets hidden, `.git` and `penguin.jsonc` protected), no network, and an
 * environment without the vault. So the file tools can reach exactly what a
 * sandboxed command can, and a symlink swapped in at any moment resolves in
 * that view. When the sandbox cannot start, the call fails closed with the
 * same explanation a command gets.
 *
 * @module
 */
import { errorMessage } from "../../protocol/errors.ts";
import { createPolicy, type SandboxPolicy } from "../../sandbox/policy.ts";
import type { SandboxedProcess } from "../../sandbox/_process.ts";
import { spawnSandboxed } from "../../sandbox/spawn.ts";
import { resolvePlan } from "../../sandbox/plan.ts";
import type { FileToolContext, ToolDefinition, ToolEvent } from "../tool.ts";

/** What a call in the tool host is given: the file tools' context with the session's whole sandbox policy. */
export interface HostedToolContext extends Omit<FileToolContext, "sandbox"> {
  /** The confinement the host runs in (default: the strict policy of the workspace). */
  sandbox?: SandboxPolicy;
}
import { fromWireError, type HostMessage, toWireError } from "../worker/_protocol.ts";
import { decodeReply, encodeRequest, lineSplitter } from "./_wire.ts";
import { gitTargetsOf, runRequest } from "../worker/pool.ts";
import {
  callEvents,
  callInbox,
  type CallMessage,
  type RunToolCall,
} from "../worker/_call_messages.ts";
import { onAbort } from "../../protocol/abort.ts";
import { SELF_ENV_NAMES, selfArgv, selfReveal, TOOL_HOST_COMMAND } from "./self.ts";

/** Default idle time before an unused host is stopped (ms). */
export const DEFAULT_HOST_IDLE_MS = 60_000;
/** Lines of non-protocol host output kept for error messages. */
const TAIL_LINES = 8;

/** Options of {@linkcode createToolHost}. */
export interface ToolHostOptions {
  /** The argv that starts a host (default: penguin itself, `__tool-host`). */
  argv?: string[];
  /** Idle time before an unused host is stopped (ms). */
  idleMs?: number;
}

/** Runs tool calls in sandboxed hosts. */
export interface ToolHost {
  /**
   * Run `definition.name` with `args` in the host of `ctx.sandbox` (default:
   * penguin's default policy for the call's workspace), streaming its events.
   * Throws what the tool threw, or a runtime error when the host cannot start.
   */
  run: RunToolCall<HostedToolContext>;
  /** Hosts alive. */
  readonly size: number;
  /** Stop every host; calls in flight fail. The object stays usable. */
  dispose(): Promise<void>;
}

interface Proc {
  key: string;
  /** Identity (device and inode) of the roots when the host started: a replaced root needs a new host. */
  roots: string;
  /** What its sandbox hid ({@linkcode planShape}) when it started. */
  shape: string;
  /** Replaced by a host of another shape: stopped once its calls in flight are done. */
  retired?: boolean;
  child: Promise<SandboxedProcess>;
  ready: Promise<void>;
  sinks: Map<number, (m: CallMessage) => void>;
  tail: string[];
  dead: boolean;
  busy: number;
  idleTimer?: ReturnType<typeof setTimeout>;
}

/**
 * glibc malloc settings of the host. Each tool worker runs on a thread of
 * its own, and a large buffer freed there (a file an edit read) stayed in
 * that thread's arena, out of reach of the next worker: a run of large edits
 * one at a time still took the host from 130 to 370 MB. Buffers of 1 MiB or
 * more are mapped and unmapped on their own (a fixed threshold, not the
 * dynamic one that grows to 32 MiB), and two arenas serve every thread.
 */
export const HOST_MALLOC_ENV: Readonly<Record<string, string>> = {
  MALLOC_MMAP_THRESHOLD_: String(1024 * 1024),
  MALLOC_ARENA_MAX: "2",
};

/** The policy of the host itself: the call's mounts, no network, no vault. */
export function hostPolicy(policy: SandboxPolicy): SandboxPolicy {
  const host = policy.env.host ?? Deno.env.toObject();
  const extra: Record<string, string> = { DENO_NO_UPDATE_CHECK: "1", ...HOST_MALLOC_ENV };
  for (const name of SELF_ENV_NAMES) {
    const v = host[name];
    if (v !== undefined) extra[name] = v;
  }
  return {
    ...policy,
    // penguin's own executable stays reachable even when installed in a hidden directory.
    reveal: [...(policy.reveal ?? []), ...selfReveal(host)],
    network: false,
    env: { allow: Object.keys(extra), vault: {}, host: { ...host, ...extra } },
  };
}

function policyKey(p: SandboxPolicy): string {
  const { env: _env, ...rest } = p;
  return JSON.stringify(rest);
}

/**
 * Device and inode of the workspace, the scratchpad (created when missing, so
 * the sandbox can bind it) and the revealed writable directories: the
 * sandbox binds the directories that exist when it starts, so a root
 * deleted and made anew needs a new host.
 */
async function rootIdentity(p: SandboxPolicy): Promise<string> {
  if (p.scratchpad !== undefined) {
    await Deno.mkdir(p.scratchpad, { recursive: true, mode: 0o700 });
  }
  const ids: string[] = [];
  for (const dir of [p.workspace, p.scratchpad, ...(p.revealWritable ?? [])]) {
    if (dir === undefined) continue;
    const info = await Deno.stat(dir).catch(() => undefined);
    ids.push(info ? `${info.dev}:${info.ino}` : "-");
  }
  return ids.join(",");
}

/** What the client's steps share: the host processes and the request ids. */
interface HostState {
  opts: ToolHostOptions;
  idleMs: number;
  procs: Map<string, Proc>;
  nextId: number;
}

function fail(s: HostState, proc: Proc, why: string): void {
  if (proc.dead) return;
  proc.dead = true;
  clearTimeout(proc.idleTimer);
  if (s.procs.get(proc.key) === proc) s.procs.delete(proc.key);
  const said = proc.tail.join(" | ").trim();
  const message = said ? `${why} (it said: ${said.slice(-600)})` : why;
  for (const sink of [...proc.sinks.values()]) {
    sink({ type: "crash", error: { name: "Error", message } });
  }
  proc.sinks.clear();
  proc.child.then((c) => c.kill(500)).catch(() => {});
}

function start(
  s: HostState,
  key: string,
  ident: { roots: string; shape: string },
  policy: SandboxPolicy,
): Proc {
  const { promise: ready, resolve: onReady, reject: notReady } = Promise.withResolvers<void>();
  ready.catch(() => {});
  const lines = lineSplitter();
  const proc: Proc = {
    key,
    roots: ident.roots,
    shape: ident.shape,
    child: undefined as unknown as Promise<SandboxedProcess>,
    ready,
    sinks: new Map(),
    tail: [],
    dead: false,
    busy: 0,
  };
  const onLine = (line: string) => {
    const m = decodeReply(line);
    if (!m) {
      if (line.trim() !== "") proc.tail = [...proc.tail, line].slice(-TAIL_LINES);
      return;
    }
    if (m.type === "ready") onReady();
    else proc.sinks.get(m.id)?.(m);
  };
  proc.child = spawnSandboxed({
    argv: s.opts.argv ?? selfArgv([TOOL_HOST_COMMAND]),
    policy: hostPolicy(policy),
    stdin: "piped",
    onOutput: (text) => lines.push(text).forEach(onLine),
    killGraceMs: 500,
  });
  proc.child.then(
    (child) => {
      child.outputClosed.then(() => lines.end().forEach(onLine));
      child.status.then((st) => {
        const why = `the sandboxed tool host exited (code ${st.code}${
          st.signal ? `, ${st.signal}` : ""
        })`;
        notReady(new Error(why));
        fail(s, proc, why);
      });
    },
    (err) => {
      notReady(err);
      fail(s, proc, errorMessage(err));
    },
  );
  s.procs.set(key, proc);
  return proc;
}

/**
 * What the sandbox of `policy` hides now, as a plan made for a check sees it:
 * a host keeps the mounts it started with, and one started before the user made a credential
 * store, another data root or a relocated configuration directory in the workspace let the file
 * tools read and write there while every command's sandbox hid it (attack round 32 x02–x04, x10).
 * A call whose shape differs from its host's gets a new host. Undefined when no plan can be made
 * (the host's own start then says why).
 */
async function planShape(policy: SandboxPolicy): Promise<string | undefined> {
  try {
    const plan = await resolvePlan(policy, policy.workspace, { check: true });
    const sorted = (xs: readonly unknown[] | undefined) =>
      (xs ?? []).map((x) => JSON.stringify(x)).sort();
    // What it hides: a command renaming directories in a loop changes what is pinned and kept
    // read-only from one plan to the next, and a new host each call would be refused its plan.
    return JSON.stringify([
      plan.roots,
      sorted(plan.hideDirs),
      sorted(plan.privateDirs),
      sorted(plan.hideFiles),
    ]);
  } catch {
    return undefined;
  }
}

async function acquire(s: HostState, policy: SandboxPolicy): Promise<Proc> {
  const key = policyKey(policy);
  const roots = await rootIdentity(policy);
  const shape = await planShape(hostPolicy(policy));
  let proc = s.procs.get(key);
  if (proc && proc.roots !== roots) {
    fail(s, proc, "the workspace or scratchpad directory was replaced");
    proc = undefined;
  }
  // No plan now (a background command churning the tree): the host keeps serving, as before.
  if (proc && shape !== undefined && proc.shape !== shape) {
    // Calls in flight finish in the old one; this and later calls go to a new one.
    retire(s, proc);
    proc = undefined;
  }
  proc ??= start(s, key, { roots, shape: shape ?? "" }, policy);
  clearTimeout(proc.idleTimer);
  proc.busy++;
  return proc;
}

/** Take `proc` out of use: stopped now when idle, else once its last call in flight is done. */
function retire(s: HostState, proc: Proc): void {
  if (s.procs.get(proc.key) === proc) s.procs.delete(proc.key);
  proc.retired = true;
  if (proc.busy === 0) fail(s, proc, "its sandbox's mounts changed");
}

function release(s: HostState, proc: Proc): void {
  proc.busy--;
  if (proc.retired && proc.busy === 0) return fail(s, proc, "its sandbox's mounts changed");
  if (proc.busy > 0 || proc.dead) return;
  proc.idleTimer = setTimeout(() => fail(s, proc, "idle"), s.idleMs);
  Deno.unrefTimer(proc.idleTimer);
}

async function* run(
  s: HostState,
  definition: ToolDefinition,
  args: Record<string, unknown>,
  ctx: HostedToolContext,
): AsyncGenerator<ToolEvent, void, undefined> {
  const policy = ctx.sandbox ??
    createPolicy({
      workspace: ctx.workspace,
      ...(ctx.scratchpad !== undefined ? { scratchpad: ctx.scratchpad } : {}),
      ...(ctx.readOnlyRoots?.length ? { reveal: ctx.readOnlyRoots } : {}),
    });
  const proc = await acquire(s, policy);
  const id = s.nextId++;
  const inbox = callInbox();
  let finished = false;
  const send = async (m: HostMessage) => {
    if (proc.dead) return;
    const child = await proc.child;
    await child.write(encodeRequest(m));
  };
  // An image the host is about to read is claimed here, in penguin's process-wide ledger.
  const answerClaim = async (bytes: number) => {
    const c = ctx.claimImage ? await ctx.claimImage(bytes).catch(() => "response" as const) : true;
    const bound = c === "process" ? { bound: c } : {};
    await send({ type: "claimed", id, ok: c === true, ...bound }).catch(() => {});
  };
  proc.sinks.set(id, (m) => m.type === "claim" ? void answerClaim(m.bytes) : inbox.push(m));
  const abortCall = () => void send({ type: "abort", id, reason: toWireError(ctx.signal.reason) });
  let stopListening = () => {};
  try {
    try {
      await proc.ready;
    } catch (err) {
      throw new Error(errorMessage(err), { cause: err });
    }
    if (proc.dead) throw fromWireError({ name: "Error", message: "the tool host stopped" });
    const gitTargets = await gitTargetsOf(ctx, ctx.workspace);
    await send(await runRequest(id, definition, args, ctx, ctx.readOnlyRoots ?? [], gitTargets));
    stopListening = onAbort(ctx.signal, abortCall);
    yield* callEvents(inbox, () => (finished = true));
  } finally {
    stopListening();
    proc.sinks.delete(id);
    if (!finished && !proc.dead) {
      void send({
        type: "abort",
        id,
        reason: { name: "AbortError", message: "the call was abandoned" },
      }).catch(() => {});
    }
    release(s, proc);
  }
}

/** A set of sandboxed tool hosts. */
export function createToolHost(opts: ToolHostOptions = {}): ToolHost {
  const s: HostState = {
    opts,
    idleMs: opts.idleMs ?? DEFAULT_HOST_IDLE_MS,
    procs: new Map(),
    nextId: 1,
  };
  return {
    run: (definition, args, ctx) => run(s, definition, args, ctx),
    get size() {
      return s.procs.size;
    },
    async dispose() {
      const all = [...s.procs.values()];
      for (const p of all) fail(s, p, "the tool host was stopped");
      await Promise.allSettled(
        all.map(async (p) => await (await p.child).status),
      );
    },
  };
}
