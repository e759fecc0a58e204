/**
 * Start a job under the supervisor and wrap it in a {@linkcode SandboxedProcess}
 * handle. Internal: `spawn.ts` and `detect.ts` build the job argv.
 *
 * @module
 */
import { errorMessage, PenguinError } from "../protocol/errors.ts";
import { type PinnedPath, READY, supervisorCommand, type SupervisorKind } from "./_supervisor.ts";
import { cgroupJoinEnv } from "./_pids_cgroup.ts";
import { SENT, signallerInOrder, SUPERVISED_SIGNALLER } from "./_signaller.ts";

/** How a child ended. */
export interface ExitStatus {
  /** Exit code; 128+N when the command was killed by signal N. */
  code: number;
  /**
   * The signal that ended the command, or null. The sandbox (bash and bwrap
   * alike) folds "killed by signal N" into exit code 128+N, so an explicit
   * `exit 143` also reads as SIGTERM.
   */
  signal: string | null;
  /**
   * Set when the command was killed after the kernel's out-of-memory killer
   * acted in penguin's memory cgroup (`_memory_cgroup.ts`): the bound it
   * reached, in bytes.
   */
  memoryBound?: number;
}

/**
 * `child` with `status` in place of its own (a promise derived from it: a
 * release run first, a reason added); `kill` and disposal resolve with it.
 */
export function withStatus(
  child: SandboxedProcess,
  status: Promise<ExitStatus>,
): SandboxedProcess {
  return {
    pid: child.pid,
    sandbox: child.sandbox,
    output: child.output,
    outputClosed: child.outputClosed,
    status,
    write: (chars) => child.write(chars),
    closeStdin: () => child.closeStdin(),
    signal: (sig) => child.signal(sig),
    kill: async (graceMs) => {
      await child.kill(graceMs);
      return await status;
    },
    [Symbol.asyncDispose]: async () => {
      await child.kill();
      await status.catch(() => {});
    },
  };
}

/** Signals that are forwarded to the command's process group. SIGKILL means "hard-kill everything". */
export type ForwardSignal = "SIGINT" | "SIGTERM" | "SIGHUP" | "SIGQUIT" | "SIGKILL";

/** What confines a child. */
export type SandboxKind = "bwrap" | "seatbelt" | "none";

/** A running child: output, input, signals, and its exit status. */
export interface SandboxedProcess {
  /** Host PID of the supervisor (the direct child of this process). */
  readonly pid: number;
  /** What confines the child. */
  readonly sandbox: SandboxKind;
  /**
   * stdout and stderr merged in arrival order, decoded as UTF-8. Empty and
   * closed when `onOutput` was given or stdio is inherited. Read it, or the
   * child blocks once the pipe is full.
   */
  readonly output: ReadableStream<string>;
  /** Resolves when the output pipe reaches end of file (every holder closed it). */
  readonly outputClosed: Promise<void>;
  /** Resolves once, when the supervised job has exited. */
  readonly status: Promise<ExitStatus>;
  /** Write to the child's stdin; false when stdin is not piped or is closed (errors are swallowed). */
  write(chars: string): Promise<boolean>;
  /** Close the child's stdin (end of input). */
  closeStdin(): Promise<void>;
  /** Send one signal to the command's process group; SIGKILL tears down the whole sandbox. */
  signal(sig: ForwardSignal): void;
  /** SIGTERM to the process group, then after the grace period SIGKILL to everything; resolves with the status. */
  kill(graceMs?: number): Promise<ExitStatus>;
  /** Same as {@linkcode SandboxedProcess.kill}; for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options of {@linkcode startSupervised}. */
export interface StartOptions {
  /** Absolute bash path (allowed by the run permission). */
  bash: string;
  /** setpriv path when it supports `--pdeathsig`. */
  setpriv?: string | undefined;
  /** How the supervisor reaches the command's process group. */
  kind: SupervisorKind;
  /** The job argv (bwrap …, sandbox-exec …, or the wrapper itself). */
  job: string[];
  /**
   * Feed bwrap's `--seccomp 4`: from the `__PSF` variable (`true`) or from
   * this file (a path no sandbox can write).
   */
  seccomp?: boolean | string;
  /** The roots the supervisor opens and checks for bwrap's `--bind-fd` (the workspace on fd 5). */
  roots?: readonly PinnedPath[] | undefined;
  /**
   * With inherited stdio: the file bwrap's setup messages go to until the
   * wrapper writes its ready line there (see `SUPERVISOR` in `_supervisor.ts`).
   */
  setupLog?: string | undefined;
  /** The supervisor's environment (always spawned with `clearEnv`). */
  env: Record<string, string>;
  /** Directory the supervisor starts in. */
  cwd: string;
  /** stdin of the child. */
  stdin: "piped" | "null" | "inherit";
  /** `merged`: one output pipe plus a control channel; `inherit`: the caller's stdio. */
  stdio: "merged" | "inherit";
  /** Receive output chunks instead of reading `output`. */
  onOutput?: ((chunk: string) => void) | undefined;
  /** Abort: kill the child. */
  signal?: AbortSignal | undefined;
  /** Default grace between SIGTERM and SIGKILL. */
  killGraceMs: number;
  /** What confines the child. */
  sandbox: SandboxKind;
  /** What is being run, for error messages. */
  describe: string;
  /** Appended to a setup-failure message (e.g. how to fix or opt out). */
  hint?: string;
}

/** Signals 0 to 6, numbered alike on Linux and macOS. */
const FIRST_SIGNALS = ["", "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT"];
const LINUX_SIGNALS = [
  ...FIRST_SIGNALS,
  "SIGBUS",
  "SIGFPE",
  "SIGKILL",
  "SIGUSR1",
  "SIGSEGV",
  "SIGUSR2",
  "SIGPIPE",
  "SIGALRM",
  "SIGTERM",
  "SIGSTKFLT",
  "SIGCHLD",
  "SIGCONT",
  "SIGSTOP",
  "SIGTSTP",
  "SIGTTIN",
  "SIGTTOU",
  "SIGURG",
  "SIGXCPU",
  "SIGXFSZ",
  "SIGVTALRM",
  "SIGPROF",
  "SIGWINCH",
  "SIGIO",
  "SIGPWR",
  "SIGSYS",
];
const DARWIN_SIGNALS = [
  ...FIRST_SIGNALS,
  "SIGEMT",
  "SIGFPE",
  "SIGKILL",
  "SIGBUS",
  "SIGSEGV",
  "SIGSYS",
  "SIGPIPE",
  "SIGALRM",
  "SIGTERM",
  "SIGURG",
  "SIGSTOP",
  "SIGTSTP",
  "SIGCONT",
  "SIGCHLD",
  "SIGTTIN",
  "SIGTTOU",
  "SIGIO",
  "SIGXCPU",
  "SIGXFSZ",
  "SIGVTALRM",
  "SIGPROF",
  "SIGWINCH",
  "SIGINFO",
  "SIGUSR1",
  "SIGUSR2",
];

/** The name of signal number `n` on this OS, or undefined. */
export function signalName(n: number): string | undefined {
  const table = Deno.build.os === "darwin" ? DARWIN_SIGNALS : LINUX_SIGNALS;
  return n > 0 ? table[n] : undefined;
}

/** Map the supervisor's status to the command's {@linkcode ExitStatus}. */
export function toExitStatus(s: Deno.CommandStatus): ExitStatus {
  if (s.signal) return { code: s.code, signal: s.signal };
  const name = s.code > 128 ? signalName(s.code - 128) : undefined;
  return { code: s.code, signal: name ?? null };
}

/**
 * How long the supervisor may take, after SIGUSR2, to kill the sandbox and
 * see its PID namespace empty before it is SIGKILLed: killing it earlier
 * would report the command gone while its processes still die.
 */
const TEARDOWN_MS = 65_000;

/** How often the supervisor is asked for the hard kill again until its child is gone. */
const HARD_AGAIN_MS = 1000;

/**
 * The signal that asks the supervisor to forward each {@linkcode ForwardSignal}
 * (SIGKILL: SIGUSR2, the hard kill). SIGINT and SIGQUIT travel as other
 * signals: the supervisor ignores the real ones, which a terminal sends to
 * the whole foreground process group that penguin and a supervisor share.
 */
const WIRE: Record<Exclude<ForwardSignal, "SIGKILL">, Deno.Signal> = {
  SIGINT: "SIGUSR1",
  SIGQUIT: "SIGALRM",
  SIGTERM: "SIGTERM",
  SIGHUP: "SIGHUP",
};

const runnable = new Map<string, boolean>();

/** Whether this process may start `path` itself (the binary's permission set names it). */
export function mayRun(path: string): boolean {
  let ok = runnable.get(path);
  if (ok === undefined) {
    ok = Deno.permissions.querySync({ name: "run", command: path }).state === "granted";
    runnable.set(path, ok);
  }
  return ok;
}

/** Bytes read from a command's output at a time (one buffer, refilled). */
const READ_BUFFER_BYTES = 64 * 1024;

function settled<T>(p: Promise<T>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([p.then(() => true), timeout]).finally(() => clearTimeout(timer));
}

/** Read the control channel: resolve true at the ready line, false at end of file without it. */
function watchControl(
  stream: ReadableStream<Uint8Array>,
): { ready: Promise<boolean>; text: () => string } {
  const { promise: ready, resolve } = Promise.withResolvers<boolean>();
  let text = "";
  (async () => {
    const decoder = new TextDecoder();
    let seen = false;
    try {
      for await (const chunk of stream) {
        if (seen) continue; // keep draining so the supervisor never blocks on a full pipe
        text += decoder.decode(chunk, { stream: true });
        const at = text.indexOf(READY + "\n");
        if (at >= 0) {
          text = text.slice(0, at);
          seen = true;
          resolve(true);
        }
      }
    } catch {
      // A read error ends the channel like end of file.
    }
    if (!seen) {
      text += decoder.decode();
      resolve(false);
    }
  })();
  return { ready, text: () => text };
}

/** A started child, whatever started it: what {@linkcode handleFor} needs of it. */
export interface RawChild {
  /** Host PID of the direct child. */
  pid: number;
  /** Its stdin when piped. */
  stdin: WritableStream<Uint8Array> | null;
  /** Its stdout when piped (merged output). */
  stdout: ReadableStream<Uint8Array> | null;
  /** Its stderr when piped (the control channel). */
  stderr: ReadableStream<Uint8Array> | null;
  /** Resolves once, when the direct child has exited. */
  status: Promise<ExitStatus>;
}

/** How a handle stops its child; each is called only while the child runs. */
export interface Stopper {
  /** Deliver one signal to the command's process group. */
  soft(sig: Exclude<ForwardSignal, "SIGKILL">): void;
  /** Kill everything; the status follows once nothing of the command is left. */
  hard(): void;
  /** SIGKILL the direct child (when the hard kill did not end it in time). */
  last(): void;
  /**
   * Ask for the hard kill again every this many ms until the child is gone
   * (only where asking twice is harmless).
   */
  repeatHardMs?: number;
}

/** What {@linkcode handleFor} needs besides the child. */
export type HandleOptions = Pick<
  StartOptions,
  "stdin" | "stdio" | "onOutput" | "signal" | "killGraceMs" | "sandbox" | "describe" | "hint"
>;

/**
 * Spawn the supervisor running `opts.job` and, in merged mode, wait until
 * the wrapper inside reports ready. Throws a runtime {@linkcode PenguinError}
 * when the process cannot start or the sandbox cannot be set up; the message
 * carries the sandbox's own diagnostics.
 */
export async function startSupervised(opts: StartOptions): Promise<SandboxedProcess> {
  const merged = opts.stdio === "merged";
  let child: Deno.ChildProcess;
  try {
    const start = supervisorCommand(opts.bash, opts.job, {
      setpriv: opts.setpriv,
      direct: opts.setpriv !== undefined && mayRun(opts.setpriv),
      kind: opts.kind,
      seccomp: opts.seccomp,
      roots: opts.roots,
      setupLog: opts.setupLog,
    });
    child = new Deno.Command(start.command, {
      args: start.args,
      cwd: opts.cwd,
      clearEnv: true,
      env: { ...opts.env, ...cgroupJoinEnv() },
      stdin: opts.stdin,
      stdout: merged ? "piped" : "inherit",
      stderr: merged ? "piped" : "inherit",
      // A new session keeps a terminal's job control away from the supervisor, but Deno can
      // only fork (not vfork) to start one, which costs ~1 ms per 5 MB of this process's memory
      // on some machines: only a child that shares the terminal gets one. Others stay in
      // penguin's process group, and the supervisor ignores the terminal's signals (WIRE).
      detached: opts.stdin === "inherit" || opts.stdio === "inherit",
    }).spawn();
  } catch (err) {
    throw new PenguinError("runtime", `Cannot start ${opts.describe}: ${errorMessage(err)}`, {
      cause: err,
    });
  }
  const send = (sig: Deno.Signal) => {
    try {
      child.kill(sig);
    } catch {
      // Already gone: the status promise settles on its own.
    }
  };
  const raw: RawChild = {
    pid: child.pid,
    stdin: opts.stdin === "piped" ? child.stdin : null,
    stdout: merged ? child.stdout : null,
    stderr: merged ? child.stderr : null,
    status: child.status.then(toExitStatus),
  };
  // A soft signal goes to the command's process group by a signaller (Linux), in order; the
  // supervisor is asked to forward it only when the signaller did not find the command.
  const direct = Deno.build.os === "linux"
    ? signallerInOrder(opts.bash, SUPERVISED_SIGNALLER[opts.kind], child.pid)
    : undefined;
  const soft = (sig: Exclude<ForwardSignal, "SIGKILL">) => {
    if (direct === undefined) return send(WIRE[sig]);
    void direct(sig.slice(3)).then((code) => code === SENT || send(WIRE[sig]));
  };
  return await handleFor(raw, {
    soft,
    hard: () => send("SIGUSR2"),
    last: () => send("SIGKILL"),
    // bash can miss a trapped signal that lands just as its `wait` begins (seen once: a kill()
    // that took the whole teardown time). The supervisor's hard kill may run twice.
    repeatHardMs: HARD_AGAIN_MS,
  }, opts);
}

/** Deliver a command's output to `sink` until end of file, through one refilled buffer when the stream allows. */
async function pump(stream: ReadableStream<Uint8Array>, sink: (text: string) => void) {
  const decoder = new TextDecoder();
  const deliver = (text: string) => {
    if (!text) return;
    try {
      sink(text);
    } catch {
      // A failing sink must not stop the pump, or the child blocks on a full pipe.
    }
  };
  try {
    let byob: ReadableStreamBYOBReader | undefined;
    try {
      byob = stream.getReader({ mode: "byob" });
    } catch {
      byob = undefined; // not a byte stream
    }
    if (byob) {
      // A bring-your-own-buffer reader refills one buffer: a fresh buffer per read would
      // leave thousands of dead 64 KiB backing stores waiting for a collection, and a
      // command printing a gigabyte would cost tens of MB of RSS.
      let buffer = new ArrayBuffer(READ_BUFFER_BYTES);
      for (;;) {
        const { done, value } = await byob.read(new Uint8Array(buffer));
        if (done || !value) break;
        deliver(decoder.decode(value, { stream: true }));
        buffer = value.buffer as ArrayBuffer;
      }
    } else {
      for await (const chunk of stream) deliver(decoder.decode(chunk, { stream: true }));
    }
  } catch {
    // A read error ends the output like end of file.
  }
  deliver(decoder.decode());
}

/**
 * The {@linkcode SandboxedProcess} handle of a started child: in merged mode
 * it waits until the wrapper inside reports ready (throwing the sandbox's
 * diagnostics when it never does), then wires output, input and signals.
 * Signals asked for before the ready line wait for it, so none lands while
 * the sandbox is still being set up.
 */
export async function handleFor(
  raw: RawChild,
  stopper: Stopper,
  opts: HandleOptions,
): Promise<SandboxedProcess> {
  // Long because: one closure-based process whose functions share the child, its stdin and the exit
  // state; each function is short.
  const merged = opts.stdio === "merged";
  let exited = false;
  const status = raw.status.then((s) => {
    exited = true;
    return s;
  });

  const writer = opts.stdin === "piped" && raw.stdin ? raw.stdin.getWriter() : undefined;
  let stdinOpen = writer !== undefined;
  const encoder = new TextEncoder();
  const closeStdin = async () => {
    if (!writer || !stdinOpen) return;
    stdinOpen = false;
    await writer.close().catch(() => {});
  };
  status.then(() => closeStdin());

  const control = merged && raw.stderr ? watchControl(raw.stderr) : undefined;
  const gate = control ? control.ready : Promise.resolve(true);
  const when = (act: () => void) => gate.then(() => exited || act());
  let hardAsked = false;
  const hard = () => {
    void when(stopper.hard);
    if (hardAsked || stopper.repeatHardMs === undefined) return;
    hardAsked = true;
    const again = setInterval(() => void when(stopper.hard), stopper.repeatHardMs);
    status.finally(() => clearInterval(again));
  };
  const signal = (sig: ForwardSignal) => {
    if (exited) return;
    if (sig !== "SIGKILL") return void when(() => stopper.soft(sig));
    hard();
    settled(status, TEARDOWN_MS).then((ok) => ok || stopper.last());
  };
  const kill = async (graceMs = opts.killGraceMs) => {
    if (exited) return await status;
    void when(() => stopper.soft("SIGTERM"));
    if (await settled(status, graceMs)) return await status;
    hard();
    if (await settled(status, TEARDOWN_MS)) return await status;
    stopper.last();
    return await status;
  };

  if (opts.signal) {
    const abort = () => void kill();
    if (opts.signal.aborted) abort();
    else {
      opts.signal.addEventListener("abort", abort, { once: true });
      status.then(() => opts.signal?.removeEventListener("abort", abort));
    }
  }

  if (control && !await control.ready) {
    const st = await status;
    await raw.stdout?.cancel().catch(() => {});
    await closeStdin();
    if (opts.signal?.aborted) {
      throw new PenguinError("runtime", `Cannot start ${opts.describe}: aborted while starting`);
    }
    const said = control.text().trim().split("\n").slice(-5).join("; ") || `exit code ${st.code}`;
    const hint = opts.hint ? ` ${opts.hint}` : "";
    throw new PenguinError(
      "runtime",
      `Cannot start ${opts.describe}: the sandbox failed to set up: ${said}.${hint}`,
    );
  }

  let output: ReadableStream<string>;
  let outputClosed: Promise<void>;
  const stdout = merged ? raw.stdout : null;
  if (!stdout) {
    output = new ReadableStream({ start: (c) => c.close() });
    outputClosed = Promise.resolve();
  } else if (opts.onOutput) {
    output = new ReadableStream({ start: (c) => c.close() });
    outputClosed = pump(stdout, opts.onOutput);
  } else {
    let done: () => void = () => {};
    outputClosed = new Promise((resolve) => done = resolve);
    output = stdout.pipeThrough(new TextDecoderStream()).pipeThrough(
      new TransformStream<string, string>({ flush: () => done() }),
    );
  }

  return {
    pid: raw.pid,
    sandbox: opts.sandbox,
    output,
    outputClosed,
    status,
    write: async (chars) => {
      if (!writer || !stdinOpen) return false;
      try {
        await writer.write(encoder.encode(chars));
        return true;
      } catch {
        return false;
      }
    },
    closeStdin,
    signal,
    kill,
    [Symbol.asyncDispose]: async () => {
      await kill();
      await closeStdin();
    },
  };
}
