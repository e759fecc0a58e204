/**
 * The host side of tools that run in a permission-narrowed Worker.
 *
 * {@linkcode createToolWorkerPool} runs each tool call in a Worker loaded
 * from one entry module (which calls `serveTools`), whose Deno permissions
 * are {@linkcode workerPermissions} of the call's roots: read and write of
 * exactly the workspace, the session scratchpad and the revealed writable
 * directories (the agent's memory), and no net, run, env,
 * ffi, sys or import. A worker serves one call at a time; after a call it
 * waits idle for the next call on the same roots and is terminated after
 * `idleMs`. A call that is abandoned, or that does not stop within
 * `abortGraceMs` of an abort, has its worker terminated — a hung tool in a
 * worker can actually be stopped. At most `maxWorkers` workers live at once
 * (each is a JavaScript isolate of its own, some 10 MB): further calls wait
 * for one to come free, so a response of hundreds of calls holds a few
 * workers, not hundreds. The workers share one process, so the file tools
 * also share a budget of file memory (`./_memory_budget.ts`): an edit of a
 * large file waits while others hold the rest of it. A worker whose call held
 * more than {@linkcode RETIRE_AFTER_HOLDING} is terminated, not kept idle: its
 * isolate would keep the garbage of that call (V8 collects an idle heap
 * late), so the memory given back to the budget would stay in use.
 *
 * Needs `--unstable-worker-options` (deno.json `"unstable": ["worker-options"]`,
 * baked into the compiled binary): without it Deno EXITS the process with
 * "Unstable API 'Worker.deno.permissions'" when a worker is created.
 *
 * @module
 */
import { findGitLayout, type GitAccess } from "../../sandbox/git_guard.ts";
import { type ExecTarget, gitConfigTargets } from "../../sandbox/git_config_guard.ts";
import { otherRunDirs } from "../../sandbox/_standin_registry.ts";
import { type ProtectedFileId, protectedFileIds } from "../../sandbox/protected_ids.ts";
import type { SandboxPolicy } from "../../sandbox/policy.ts";
import type { FileToolContext, ToolDefinition, ToolEvent } from "../tool.ts";
import { type StartupFacts, startupFactsFor } from "../_startup_refusal.ts";
import { xdgConfigHomes } from "../../sandbox/_xdg_config.ts";
import { loginValues } from "../../sandbox/_login_values.ts";
import { type HostMessage, toWireError, type WorkerMessage } from "./_protocol.ts";
import { callEvents, callInbox, type CallMessage, type RunToolCall } from "./_call_messages.ts";
import { onAbort } from "../../protocol/abort.ts";
import { createMemoryBudget, type MemoryBudget } from "./_memory_budget.ts";
import { createImageClaims, type ImageClaims } from "./_image_claims.ts";

/** Default idle time before an unused worker is terminated (ms). */
export const DEFAULT_WORKER_IDLE_MS = 30_000;
/** Default time an aborted call gets to stop before its worker is terminated (ms). */
export const DEFAULT_WORKER_ABORT_GRACE_MS = 3_000;
/** Idle workers kept per set of roots at most. */
const MAX_IDLE_PER_ROOTS = 2;
/** A worker whose call held more file memory than this (bytes) is terminated after it. */
export const RETIRE_AFTER_HOLDING = 4 * 1024 * 1024;
/** Default number of workers alive at once (busy or idle). */
export const DEFAULT_MAX_WORKERS = 4;

/**
 * The Deno permissions of a tool worker confined to `roots` (absolute real
 * paths): read and write of exactly those directories, read of the
 * `readOnly` ones, nothing else.
 */
export function workerPermissions(
  roots: readonly string[],
  readOnly: readonly string[] = [],
): Deno.PermissionOptionsObject {
  return {
    read: [...roots, ...readOnly],
    write: [...roots],
    net: false,
    env: false,
    run: false,
    ffi: false,
    sys: false,
    import: false,
  };
}

/** Options of {@linkcode createToolWorkerPool}. */
export interface ToolWorkerPoolOptions {
  /** Idle time before an unused worker is terminated (ms). */
  idleMs?: number;
  /** After an abort, how long a call may take to stop before its worker is terminated (ms). */
  abortGraceMs?: number;
  /** Worker name (shows in Deno's error messages). */
  name?: string;
  /** Workers alive at once at most; further calls wait for one to come free. */
  maxWorkers?: number;
  /** Bytes of file text the calls may hold at once (`./_memory_budget.ts`). */
  fileMemoryBudget?: number;
}

/** Runs tool calls in confined workers. */
export interface ToolWorkerPool {
  /**
   * Run tool `definition.name` from the entry module with `args`, confined to
   * `ctx.workspace` and `ctx.scratchpad` (created when missing), streaming
   * its events. Aborting `ctx.signal` is forwarded to the tool. Throws what
   * the tool threw (as an `Error` with the same name and message).
   */
  run: RunToolCall<FileToolContext>;
  /** Workers alive (busy or idle). */
  readonly size: number;
  /** Terminate every worker; calls in flight fail. The pool stays usable. */
  dispose(): void;
}

interface Slot {
  key: string;
  worker: Worker;
  ready: Promise<void>;
  dead: boolean;
  sink?: ((m: CallMessage) => void) | undefined;
  idleTimer?: ReturnType<typeof setTimeout>;
}

/**
 * The real roots a call is confined to: the workspace, the scratchpad
 * (created when missing) and the revealed writable directories that exist.
 */
async function rootsOf(ctx: FileToolContext): Promise<string[]> {
  const roots = [await Deno.realPath(ctx.workspace)];
  if (ctx.scratchpad !== undefined) {
    await Deno.mkdir(ctx.scratchpad, { recursive: true, mode: 0o700 });
    const sp = await Deno.realPath(ctx.scratchpad);
    if (!roots.includes(sp)) roots.push(sp);
  }
  for (const dir of revealWritableOf(ctx).revealWritable ?? []) {
    const real = await Deno.realPath(dir).catch(() => undefined);
    if (real !== undefined && !roots.includes(real)) roots.push(real);
  }
  return roots;
}

/** The real read-only roots of a call that exist (a missing skills directory is skipped). */
async function readOnlyRootsOf(ctx: FileToolContext): Promise<string[]> {
  const out: string[] = [];
  for (const dir of ctx.readOnlyRoots ?? []) {
    const real = await Deno.realPath(dir).catch(() => undefined);
    if (real !== undefined && !out.includes(real)) out.push(real);
  }
  return out;
}

/**
 * What git's configuration makes read-only in the workspace `workspaceReal`,
 * resolved here: the worker cannot read the user's global and system git
 * configuration, nor includes outside its roots. Empty when it cannot be
 * read (the worker still resolves the repository's own).
 */
export async function gitTargetsOf(
  ctx: { git?: GitAccess; sandbox?: { git?: GitAccess } },
  workspaceReal: string,
): Promise<{ gitTargets?: ExecTarget[] }> {
  try {
    const layout = await findGitLayout(workspaceReal);
    const access = ctx.sandbox?.git ?? ctx.git ?? "read-only";
    const gitTargets = await gitConfigTargets(workspaceReal, layout, access);
    return gitTargets.length > 0 ? { gitTargets } : {};
  } catch {
    return {};
  }
}

/** The git access to pass on: the sandbox's, else the context's own. */
function gitOf(ctx: FileToolContext): { git?: GitAccess } {
  const git = ctx.sandbox?.git ?? ctx.git;
  return git ? { git } : {};
}

/** The other run directories the file tools refuse, for a worker that cannot read their list. */
export async function runDirsOf(
  ctx: Pick<FileToolContext, "runDirs">,
): Promise<{ runDirs?: string[] }> {
  // Always sent, an empty list too: the confined worker cannot look them up itself (no sys access).
  return { runDirs: [...(ctx.runDirs ?? await otherRunDirs())] };
}

/**
 * The protected files outside the roots with other names (hard links) to
 * pass on: the context's own (what the host resolved: a confined worker and
 * the sandboxed tool host cannot read the home), else looked up here over
 * the call's real roots. Always sent, an empty list too.
 */
export async function protectedFilesOf(
  ctx: FileToolContext,
): Promise<{ protectedFiles: ProtectedFileId[] }> {
  if (ctx.protectedFiles !== undefined) return { protectedFiles: [...ctx.protectedFiles] };
  const roots: string[] = [];
  for (
    const dir of [ctx.workspace, ctx.scratchpad, ...revealWritableOf(ctx).revealWritable ?? []]
  ) {
    const real = dir === undefined ? undefined : await Deno.realPath(dir).catch(() => undefined);
    if (real !== undefined && !roots.includes(real)) roots.push(real);
  }
  // The tool host's callers pass the session's whole policy (`HostedToolContext`).
  const policy = ctx.sandbox as Partial<Pick<SandboxPolicy, "home" | "hide" | "env">> | undefined;
  const env = policy?.env;
  const paths = [env?.host?.["PATH"] ?? hostEnv("PATH"), env?.login?.["PATH"]];
  const protectedFiles = await protectedFileIds({
    roots,
    home: policy?.home ?? hostEnv("HOME"),
    hide: policy?.hide,
    pathDirs: paths.flatMap((p) => p?.split(":") ?? []).filter((d) => d.startsWith("/")),
  });
  return { protectedFiles };
}

/**
 * What the home's startup files source or name, and where each leads now,
 * to pass on: the context's own, else looked up here (the sandboxed tool
 * host and a confined worker cannot read the home). Absent when the
 * workspace cannot be resolved.
 */
export async function startupFactsOf(
  ctx: FileToolContext,
): Promise<{ startupFacts?: StartupFacts }> {
  if (ctx.startupFacts !== undefined) return { startupFacts: ctx.startupFacts };
  const policy = ctx.sandbox as Partial<Pick<SandboxPolicy, "home" | "env">> | undefined;
  const home = policy?.home ?? hostEnv("HOME");
  // What the user's startup files export (`~/.profile`), as the shell snapshot found it.
  const exported = await loginValues(policy?.home, "XDG_CONFIG_HOME");
  const xdg = xdgConfigHomes(policy?.env, home, exported);
  const facts = await startupFactsFor(ctx.workspace, home, xdg);
  return facts === undefined ? {} : { startupFacts: facts };
}

/** A variable of penguin's environment, or undefined where it cannot be read (a confined worker). */
function hostEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/** The revealed writable directories to pass on: the sandbox's, else the context's own. */
export function revealWritableOf(
  ctx: Pick<FileToolContext, "sandbox" | "revealWritable">,
): { revealWritable?: string[] } {
  const dirs = ctx.sandbox?.revealWritable ?? ctx.revealWritable;
  return dirs && dirs.length > 0 ? { revealWritable: [...dirs] } : {};
}

/** What the pool's steps share: the workers, the idle timers and the request ids. */
interface PoolState {
  entry: URL;
  opts: ToolWorkerPoolOptions;
  idleMs: number;
  graceMs: number;
  idle: Map<string, Slot[]>;
  alive: Set<Slot>;
  nextId: number;
  /** Workers alive at once at most. */
  maxWorkers: number;
  /** Calls waiting for a worker, woken one at a time as workers come free. */
  waiting: (() => void)[];
  /** The file memory the calls hold, shared by every worker. */
  memory: MemoryBudget;
  /** The image data each model response's calls claimed. */
  images: ImageClaims;
}

function kill(s: PoolState, slot: Slot, why: string): void {
  if (slot.dead) return;
  slot.dead = true;
  clearTimeout(slot.idleTimer);
  s.alive.delete(slot);
  const list = s.idle.get(slot.key);
  if (list) {
    const at = list.indexOf(slot);
    if (at >= 0) list.splice(at, 1);
    if (list.length === 0) s.idle.delete(slot.key);
  }
  slot.worker.terminate();
  slot.sink?.({ type: "crash", error: { name: "Error", message: why } });
  s.waiting.shift()?.();
}

function spawn(s: PoolState, key: string, roots: string[], readOnly: string[]): Slot {
  const worker = new Worker(s.entry.href, {
    type: "module",
    name: s.opts.name ?? "penguin-tools",
    deno: { permissions: workerPermissions(roots, readOnly) },
  });
  let started!: () => void;
  let failed!: (err: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    started = resolve;
    failed = reject;
  });
  ready.catch(() => {}); // observed by the call that awaits it
  const slot: Slot = { key, worker, ready, dead: false };
  s.alive.add(slot);
  worker.onmessage = (e: MessageEvent<WorkerMessage>) => {
    if (e.data.type === "ready") started();
    else slot.sink?.(e.data);
  };
  worker.onerror = (e: ErrorEvent) => {
    e.preventDefault(); // a crashing tool worker must not take penguin down
    const why = `the tool worker stopped: ${e.message}`;
    failed(new Error(why));
    kill(s, slot, why);
  };
  worker.onmessageerror = () => kill(s, slot, "the tool worker sent an unreadable message");
  return slot;
}

/** An idle worker for `key`, else a new one while fewer than `maxWorkers` live, else undefined. */
function take(s: PoolState, key: string, roots: string[], readOnly: string[]): Slot | undefined {
  const list = s.idle.get(key);
  const slot = list?.pop();
  if (list && list.length === 0) s.idle.delete(key);
  if (slot) {
    clearTimeout(slot.idleTimer);
    return slot;
  }
  if (s.alive.size >= s.maxWorkers) {
    // An idle worker of other roots makes room.
    const other = s.idle.values().next().value?.[0];
    if (other === undefined) return undefined;
    kill(s, other, "idle");
  }
  return spawn(s, key, roots, readOnly);
}

/** Wait in `queue` until called from it, or until `signal` aborts (then it leaves the queue). */
function waitTurn(queue: (() => void)[], signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    };
    const onAbort = () => {
      const at = queue.indexOf(done);
      if (at >= 0) queue.splice(at, 1);
      resolve();
    };
    queue.push(done);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** A worker for `key`, waiting while `maxWorkers` are busy; a call aborted while it waits throws. */
async function acquire(
  s: PoolState,
  key: string,
  roots: string[],
  readOnly: string[],
  signal: AbortSignal,
): Promise<Slot> {
  for (;;) {
    const slot = take(s, key, roots, readOnly);
    if (slot) return slot;
    signal.throwIfAborted();
    await waitTurn(s.waiting, signal);
  }
}

function release(s: PoolState, slot: Slot): void {
  slot.sink = undefined;
  const list = s.idle.get(slot.key) ?? [];
  if (list.length >= MAX_IDLE_PER_ROOTS) return kill(s, slot, "idle");
  list.push(slot);
  s.idle.set(slot.key, list);
  const timer = setTimeout(() => kill(s, slot, "idle"), s.idleMs);
  Deno.unrefTimer(timer);
  slot.idleTimer = timer;
  s.waiting.shift()?.();
}

/**
 * The `run` request of call `id`, with the read-only roots `readOnly` and
 * the git targets resolved for it.
 */
export async function runRequest(
  id: number,
  definition: ToolDefinition,
  args: Record<string, unknown>,
  ctx: FileToolContext,
  readOnly: string[],
  gitTargets: { gitTargets?: ExecTarget[] },
): Promise<HostMessage> {
  return {
    type: "run",
    id,
    tool: definition.name,
    definition,
    args,
    ctx: {
      workspace: ctx.workspace,
      ...(ctx.scratchpad !== undefined ? { scratchpad: ctx.scratchpad } : {}),
      ...(readOnly.length > 0 ? { readOnlyRoots: readOnly } : {}),
      sessionId: ctx.sessionId,
      toolCallId: ctx.toolCallId,
      ...(ctx.responseId !== undefined ? { responseId: ctx.responseId } : {}),
      ...gitOf(ctx),
      ...revealWritableOf(ctx),
      ...gitTargets,
      ...await runDirsOf(ctx),
      ...await protectedFilesOf(ctx),
      ...await startupFactsOf(ctx),
    },
  };
}

async function* run(
  s: PoolState,
  definition: ToolDefinition,
  args: Record<string, unknown>,
  ctx: FileToolContext,
): AsyncGenerator<ToolEvent, void, undefined> {
  const signal = ctx.signal;
  const roots = await rootsOf(ctx);
  const readOnly = await readOnlyRootsOf(ctx);
  // What the caller resolved (the tool host cannot read the user's global configuration)
  // is kept, and what can be resolved here added.
  const own = (await gitTargetsOf(ctx, roots[0]!)).gitTargets ?? [];
  const all = [...(ctx.gitTargets ?? []), ...own];
  const gitTargets = all.length > 0 ? { gitTargets: all } : {};
  const slot = await acquire(s, JSON.stringify([roots, readOnly]), roots, readOnly, signal);
  const id = s.nextId++;
  const inbox = callInbox();
  let heldMost = 0;
  const send = (m: HostMessage) => {
    if (!slot.dead) slot.worker.postMessage(m);
  };
  slot.sink = (m) => {
    if (m.type !== "crash" && m.type !== "ready" && m.id !== id) return;
    if (m.type === "hold") {
      heldMost = Math.max(heldMost, m.bytes);
      void s.memory.hold(id, m.bytes, signal).then((ok) => send({ type: "held", id, ok }));
    } else if (m.type === "claim") {
      // The response's bound here, then the caller's (penguin's process-wide ledger, asked across
      // the tool host's wire): an image read by many conversations at once never passes it.
      if (!s.images.claim(ctx.responseId, m.bytes)) send({ type: "claimed", id, ok: false });
      else if (!ctx.claimImage) send({ type: "claimed", id, ok: true });
      else {
        ctx.claimImage(m.bytes).then(
          (c) =>
            send({ type: "claimed", id, ok: c === true, ...(c === "process" ? { bound: c } : {}) }),
          () => send({ type: "claimed", id, ok: false }),
        );
      }
    } else inbox.push(m);
  };
  let finished = false;
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  const abortCall = () => {
    send({ type: "abort", id, reason: toWireError(signal.reason) });
    graceTimer = setTimeout(
      () => kill(s, slot, `the tool did not stop within ${s.graceMs}ms of the abort`),
      s.graceMs,
    );
  };
  let stopListening = () => {};
  try {
    await slot.ready;
    send(await runRequest(id, definition, args, ctx, readOnly, gitTargets));
    stopListening = onAbort(signal, abortCall);
    // A crashed worker is not finished: it is killed, not released.
    yield* callEvents(inbox, (how) => (finished = how !== "crash"));
  } finally {
    stopListening();
    clearTimeout(graceTimer);
    s.memory.release(id);
    if (finished && !slot.dead && heldMost <= RETIRE_AFTER_HOLDING) release(s, slot);
    else kill(s, slot, finished ? "retired after a large file" : "the call was abandoned");
  }
}

/** A pool of confined workers loading `entry` (a module that calls `serveTools`). */
export function createToolWorkerPool(
  entry: URL,
  opts: ToolWorkerPoolOptions = {},
): ToolWorkerPool {
  const s: PoolState = {
    entry,
    opts,
    idleMs: opts.idleMs ?? DEFAULT_WORKER_IDLE_MS,
    graceMs: opts.abortGraceMs ?? DEFAULT_WORKER_ABORT_GRACE_MS,
    idle: new Map(),
    alive: new Set(),
    nextId: 1,
    maxWorkers: Math.max(1, opts.maxWorkers ?? DEFAULT_MAX_WORKERS),
    waiting: [],
    memory: createMemoryBudget(opts.fileMemoryBudget),
    images: createImageClaims(),
  };
  return {
    run: (definition, args, ctx) => run(s, definition, args, ctx),
    get size() {
      return s.alive.size;
    },
    dispose() {
      for (const slot of [...s.alive]) kill(s, slot, "the tool worker pool was disposed");
    },
  };
}
