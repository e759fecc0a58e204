/**
 * One command started by exec_command: the sandboxed process, its unread
 * output and its end. A session exists from spawn on; the process registry
 * makes it addressable by its `proc-<8hex>` id once it outlives its call.
 *
 * Output is masked (the session's secrets, see `secret_mask.ts`) and pumped
 * into a bounded buffer as it arrives (so the child never blocks on a full
 * pipe, and no dropped or cut text can leave a piece of a secret), and {@linkcode CommandSession.follow} streams it
 * out as tool deltas for a window. The end of a command is the exit of its
 * foreground process, not the end of the pipe: a straggler holding the pipe
 * open gets a drain of at most 50 ms.
 *
 * @module
 */
import { sleep } from "../protocol/sleep.ts";
import type { ExitStatus, SandboxPolicy } from "../sandbox/mod.ts";
import { formatSize } from "../protocol/format_size.ts";
import { createOutputBuffer, DEFAULT_BUFFER_LIMIT, type OutputBuffer } from "./_output_buffer.ts";
import { taskLabel } from "./background_notice.ts";
import { createSecretMasker, type Secret } from "./secret_mask.ts";
import type { ToolEvent } from "./tool.ts";
import { hexOf } from "../protocol/hex.ts";

/** After the foreground process exits, wait at most this long for the rest of its output. */
export const POST_EXIT_DRAIN_MS = 50;

/** Grace between SIGTERM and SIGKILL when a command is killed. */
export const KILL_GRACE_MS = 1000;

/** How a {@linkcode CommandSession.follow} window ended. */
export type FollowEnd = "exited" | "window" | "aborted";

/** A started command. */
export interface CommandSession {
  /** `proc-<8hex>`. */
  readonly id: string;
  /** The command line as given. */
  readonly cmd: string;
  /** First line of the command, at most 120 chars. */
  readonly label: string;
  /** Host PID of the sandbox supervisor. */
  readonly pid: number;
  /** When it started (ms since the epoch). */
  readonly startedAt: number;
  /** Last time a tool touched it (drives LRU eviction and the idle TTL). */
  lastUsed: number;
  /** Whether a background completion notice is armed. */
  notify: boolean;
  /** The exit status once the command has ended and its output drained; undefined while running. */
  readonly exit: ExitStatus | undefined;
  /** Unread characters held. */
  readonly unread: number;
  /** Resolves when the command has exited and the post-exit drain is over. */
  readonly done: Promise<ExitStatus>;
  /** Unread output (with the drop marker when older text was dropped); empties the buffer. */
  take(): string;
  /** Stream new output as deltas until the command ends, `windowMs` passes or `signal` aborts. */
  follow(windowMs: number, signal?: AbortSignal): AsyncGenerator<ToolEvent, FollowEnd, undefined>;
  /** Write to stdin (false when stdin is closed; errors are swallowed). */
  write(chars: string): Promise<boolean>;
  /** SIGINT to the command's process group (Ctrl-C). */
  interrupt(): void;
  /** SIGTERM to the group, SIGKILL after `graceMs` (default 1000); resolves after exit and drain. */
  kill(graceMs?: number): Promise<ExitStatus>;
}

/** Inputs of {@linkcode startCommand}. */
export interface StartCommandOptions {
  /** The session id to use (see {@linkcode newProcessId}). */
  id: string;
  /** Shell command line (`bash -c`, with the session's shell snapshot). */
  cmd: string;
  /** Working directory (must exist; visible in the sandbox). */
  cwd: string;
  /** The confinement. */
  policy: SandboxPolicy;
  /** Unread-output limit in chars (default 1 MiB). */
  bufferLimit?: number;
  /** Values masked in the output before it is buffered. */
  secrets?: readonly Secret[];
}

/** A fresh `proc-<8hex>` id; `taken` rejects ids already in use. */
export function newProcessId(taken: (id: string) => boolean = () => false): string {
  for (;;) {
    const bytes = crypto.getRandomValues(new Uint8Array(4));
    const id = `proc-${hexOf(bytes)}`;
    if (!taken(id)) return id;
  }
}

/** `exit code N` or `terminated by signal SIG` (and why, when penguin's memory bound was reached). */
export function describeExit(status: ExitStatus): string {
  return status.signal
    ? `terminated by signal ${status.signal}${memoryReason(status)}`
    : `exit code ${status.code}`;
}

/**
 * Why a command was killed when the kernel stopped it at penguin's memory bound
 * (`lib/sandbox/_memory_cgroup.ts`), else nothing.
 */
function memoryReason(status: ExitStatus): string {
  if (status.memoryBound === undefined) return "";
  return `: the kernel stopped it when penguin's commands reached their memory bound (${
    formatSize(status.memoryBound)
  }; ` +
    "files in /tmp and /dev/shm count; put large temporary data in the workspace)";
}

/** The note and status of a finished command: nothing on exit 0, else `[exit code: N]` / `[terminated by signal SIG]`. */
export function exitVerdict(
  status: ExitStatus,
): { status: "completed" | "failed"; note?: string } {
  if (status.signal) {
    return {
      status: "failed",
      note: `[terminated by signal ${status.signal}${memoryReason(status)}]`,
    };
  }
  if (status.code !== 0) return { status: "failed", note: `[exit code: ${status.code}]` };
  return { status: "completed" };
}

/**
 * What is unread in `buffer` when the command has ended, piece by piece: no more than was
 * unread then (what a straggler holding the pipe adds later is left).
 */
async function* unreadAtExit(buffer: OutputBuffer): AsyncGenerator<ToolEvent, void, undefined> {
  let owed = buffer.size;
  for (;;) {
    const marker = buffer.dropped > 0; // the drop marker comes first, and is not owed text
    if (!marker && owed <= 0) return;
    const text = buffer.takeNext();
    if (text === undefined) return;
    if (!marker) owed -= text.length;
    yield { type: "delta", text };
  }
}

/**
 * Spawn `cmd` under the sandbox and start collecting its output. Throws the
 * sandbox's runtime error (with its fix-it message) when it cannot start;
 * nothing runs then.
 */
export async function startCommand(opts: StartCommandOptions): Promise<CommandSession> {
  // Long because: one closure-based command session whose methods share the output buffer, the
  // masker and the waiters; each method is short.
  const buffer = createOutputBuffer(opts.bufferLimit ?? DEFAULT_BUFFER_LIMIT);
  const masker = createSecretMasker(opts.secrets ?? []);
  let wake: (() => void)[] = [];
  const notify = () => {
    const waiting = wake;
    wake = [];
    for (const w of waiting) w();
  };
  // Loaded on first use: views that only show calls (trace show) never load the spawner.
  const { loginEnvironment, spawnSandboxed, withLoginEnvironment } = await import(
    "../sandbox/mod.ts"
  );
  // The login shell ran once for this policy; its variables are replayed, its profile is not.
  const login = await loginEnvironment(opts.policy);
  const child = await spawnSandboxed({
    shell: opts.cmd,
    cwd: opts.cwd,
    policy: withLoginEnvironment(opts.policy, login),
    onOutput: (chunk) => {
      buffer.append(masker.push(chunk));
      notify();
    },
    killGraceMs: KILL_GRACE_MS,
    // In the session's sandbox when one is kept (one sandbox start per session, not per command).
    reuse: true,
  });

  let exit: ExitStatus | undefined;
  const done = child.status.then(async (status) => {
    const drain = new AbortController();
    await Promise.race([child.outputClosed, sleep(POST_EXIT_DRAIN_MS, drain.signal)]);
    drain.abort();
    buffer.append(masker.flush());
    exit = status;
    notify();
    return status;
  });

  const changed = () => new Promise<void>((resolve) => wake.push(resolve));

  // What the masker holds in case it starts a secret is decided as if the output ended here
  // before the model sees the output so far: held back, it told the model which of its guesses
  // (`sk-proj-` and more, no newline) start a secret (attack round 26 B-holdback-oracle).
  const settle = (): boolean => {
    if (exit !== undefined || masker.held === 0) return false;
    buffer.append(masker.flush());
    return true;
  };

  async function* follow(
    windowMs: number,
    signal?: AbortSignal,
  ): AsyncGenerator<ToolEvent, FollowEnd, undefined> {
    const deadline = Date.now() + Math.max(0, windowMs);
    let settled = false;
    let aborted: (() => void) | undefined;
    const onAbort = () => aborted?.();
    signal?.addEventListener("abort", onAbort);
    try {
      for (;;) {
        if (exit !== undefined) {
          yield* unreadAtExit(buffer);
          return "exited";
        }
        // One small piece at a time (`takeNext`): the rest stays bytes until its turn, and
        // pieces taken together waited as strings long enough to reach V8's old generation.
        const text = buffer.takeNext();
        if (text !== undefined) yield { type: "delta", text };
        if (signal?.aborted) return "aborted";
        const left = deadline - Date.now();
        if (left <= 0) {
          // What was held goes out with this window (once: output may keep coming).
          if (!settled && (settled = settle())) continue;
          return "window";
        }
        if (text !== undefined) continue; // suspended at the yield: look again before waiting
        const timer = new AbortController();
        const abort = new Promise<void>((resolve) => (aborted = resolve));
        await Promise.race([changed(), sleep(left, timer.signal), abort]);
        timer.abort();
        aborted = undefined;
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  const session: CommandSession = {
    id: opts.id,
    cmd: opts.cmd,
    label: taskLabel(opts.cmd),
    pid: child.pid,
    startedAt: Date.now(),
    lastUsed: Date.now(),
    notify: false,
    get exit() {
      return exit;
    },
    get unread() {
      return buffer.size;
    },
    done,
    take: () => {
      settle();
      return buffer.take();
    },
    follow,
    write: (chars) => exit ? Promise.resolve(false) : child.write(chars),
    interrupt: () => child.signal("SIGINT"),
    kill: async (graceMs = KILL_GRACE_MS) => {
      if (exit === undefined) await child.kill(graceMs);
      return await done;
    },
  };
  return session;
}
