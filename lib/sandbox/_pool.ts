/**
 * The sandboxes kept for a session: each a bubblewrap sandbox whose init is
 * the launcher of `_launcher.ts`, keyed by everything that makes it what it
 * is (bwrap's arguments, the roots it pins, the environment, the filter), so
 * a command goes to a live sandbox only when a new one would be the same.
 *
 * One command at a time per sandbox: a command that starts while every
 * sandbox of its key is busy gets a new one. A sandbox whose command ended
 * goes back to the pool only once its launcher has reported that nothing of
 * the command is left, and `after` (the post-command walk) has run; it is
 * retired (its launcher's stdin closed, its stand-ins let go) when another
 * key took its place, when more than {@linkcode MAX_IDLE} of its key are
 * idle, after {@linkcode IDLE_MS} unused, when its command closed stdin,
 * or when no session keeps stand-ins any more. A sandbox that dies is never
 * used again; a command it was running is reported failed (never run
 * elsewhere), and one it had not acknowledged yet is started in a new one.
 *
 * @module
 */
import { errorMessage, PenguinError } from "../protocol/errors.ts";
import {
  type ExitStatus,
  type ForwardSignal,
  handleFor,
  type HandleOptions,
  type RawChild,
  type SandboxedProcess,
  toExitStatus,
} from "./_process.ts";
import { OPEN_AND_EXEC } from "./_direct.ts";
import { NO_COMMAND, signallerInOrder } from "./_signaller.ts";
import { LAUNCHER_SIGNALLER, READY } from "./_launcher.ts";
import { type PinnedPath, pinnedRootArgs } from "./_supervisor.ts";
import { cgroupJoinEnv } from "./_pids_cgroup.ts";
import { forgetOldest } from "../protocol/forget_oldest.ts";
import { hexOf } from "../protocol/hex.ts";

/** Idle sandboxes kept per key. */
export const MAX_IDLE = 2;
/** An idle sandbox is retired after this long unused (ms). */
export const IDLE_MS = 60_000;

/** How to start a sandbox (as `_direct.ts` starts one, with the launcher as its init). */
export interface SandboxStart {
  bash: string;
  sh: string;
  bwrap: string;
  args: string[];
  filter: string;
  roots: readonly PinnedPath[];
  env: Record<string, string>;
  detached: boolean;
  /** Let go of what the sandbox holds for its lifetime (its stand-ins). */
  release: () => Promise<void>;
}

interface Live {
  key: string;
  child: Deno.ChildProcess;
  writer: WritableStreamDefaultWriter<Uint8Array>;
  reader: ReadableStreamBYOBReader;
  /** The buffer its output is read into, reused from read to read (empty once lost to an error). */
  readBuffer: ArrayBuffer;
  /** Sync token the next request starts with (undefined before the first). */
  token: string | undefined;
  busy: boolean;
  dead: boolean;
  /** A command closed the launcher's stdin: no request can follow. */
  closed: boolean;
  retired: boolean;
  release: () => Promise<void>;
  exited: Promise<Deno.CommandStatus>;
  idleTimer?: ReturnType<typeof setTimeout>;
  /** Commands run in it (tests). */
  runs: number;
}

const pool = new Set<Live>();
const NOTHING = new Uint8Array(0);
/** Bytes read from a sandbox's output at a time. */
const READ_BYTES = 64 * 1024;
let latestKey: string | undefined;
const encoder = new TextEncoder();

/** What {@linkcode poolFacts} tells tests. */
export interface PoolFacts {
  live: number;
  idle: number;
  pids: number[];
  /** Sandboxes started and commands run in them since the process started. */
  started: number;
  commands: number;
  /** Requests a launcher ended without acknowledging (the command then went to a new sandbox). */
  unacknowledged: number;
}

let started = 0;
let commands = 0;
let unacknowledged = 0;
/** The keys of the last sandboxes started, by launcher PID (tests: why a sandbox was new). */
const recentKeys = new Map<number, string>();

/**
 * The key a recent sandbox was started for, by its launcher's PID (tests): a
 * command that got a new sandbox got it because its plan changed (another
 * key) or because the old one could not go on (the same key).
 */
export function sandboxKeyOf(pid: number): string | undefined {
  return recentKeys.get(pid);
}

/** The live sandboxes (tests). */
export function poolFacts(): PoolFacts {
  const live = [...pool].filter((l) => !l.dead && !l.retired);
  return {
    live: live.length,
    idle: live.filter((l) => !l.busy).length,
    pids: live.map((l) => l.child.pid),
    started,
    commands,
    unacknowledged,
  };
}

function hex(bytes: number): string {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  return hexOf(b);
}

/** Start a sandbox and wait for its launcher's ready line; throws the sandbox's diagnostics. */
async function startLive(key: string, s: SandboxStart, what: string): Promise<Live> {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(s.sh, {
      args: ["-c", OPEN_AND_EXEC, s.filter, ...pinnedRootArgs(s.roots), s.bwrap, ...s.args],
      cwd: "/",
      clearEnv: true,
      env: { ...s.env, ...cgroupJoinEnv() },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: s.detached,
    }).spawn();
  } catch (err) {
    throw new PenguinError("runtime", `Cannot start ${what}: ${errorMessage(err)}`, { cause: err });
  }
  const exited = child.status;
  const errs = child.stderr.getReader();
  const decoder = new TextDecoder();
  let said = "";
  let ready = false;
  for (;;) {
    const { done, value } = await errs.read().catch(() => ({ done: true, value: undefined }));
    if (done || !value) break;
    said += decoder.decode(value, { stream: true });
    if (said.includes(READY + "\n")) {
      ready = true;
      break;
    }
  }
  // The launcher's stderr goes to /dev/null after the ready line: nothing more to read.
  await errs.cancel().catch(() => {});
  const writer = child.stdin.getWriter();
  const reader = child.stdout.getReader({ mode: "byob" });
  if (!ready) {
    await writer.close().catch(() => {});
    await reader.cancel().catch(() => {});
    const st = await exited;
    throw new PenguinError(
      "runtime",
      `Cannot start ${what}: the sandbox failed to set up: ${
        said.trim().split("\n").slice(-5).join("; ") || `exit code ${st.code}`
      }.`,
    );
  }
  const live: Live = {
    key,
    child,
    writer,
    reader,
    readBuffer: new ArrayBuffer(READ_BYTES),
    token: undefined,
    busy: false,
    dead: false,
    closed: false,
    retired: false,
    release: s.release,
    exited,
    runs: 0,
  };
  exited.then(() => {
    live.dead = true;
    if (!live.busy) void retire(live);
  });
  pool.add(live);
  started++;
  recentKeys.set(child.pid, key);
  forgetOldest(recentKeys, 16);
  return live;
}

/** Stop a sandbox (its launcher ends at end of input) and let go of its stand-ins. */
async function retire(live: Live): Promise<void> {
  if (live.retired) return;
  live.retired = true;
  clearTimeout(live.idleTimer);
  pool.delete(live);
  // Awaited by whoever retires it (a session's end): its exit must keep penguin running.
  live.child.ref();
  await live.writer.close().catch(() => {});
  await live.reader.cancel().catch(() => {});
  await live.exited.catch(() => {});
  await live.release().catch(() => {});
}

/** Retire every idle sandbox (a session ends); busy ones retire when their command ends. */
export async function retireIdle(): Promise<void> {
  await Promise.all([...pool].filter((l) => !l.busy).map(retire));
}

function idle(live: Live, keep: boolean): void {
  live.busy = false;
  // An idle sandbox keeps no read pending and must not keep penguin running.
  live.child.unref();
  const same = [...pool].filter((l) => l !== live && l.key === live.key && !l.busy && !l.dead);
  if (!keep || live.dead || live.closed || live.key !== latestKey || same.length >= MAX_IDLE) {
    void retire(live);
    return;
  }
  const timer = setTimeout(() => void retire(live), IDLE_MS);
  Deno.unrefTimer(timer);
  live.idleTimer = timer;
}

/** What a pooled command is. */
export interface PooledCommand {
  key: string;
  argv: string[];
  cwd: string;
  stdin: "piped" | "null";
  /** Start a new sandbox for the key (called only when no idle one is left). */
  start: () => Promise<SandboxStart>;
  /** Run after the command ended and before its status is reported (the post-command walk). */
  after: () => Promise<void>;
  /** Whether its sandbox may wait for the next command (a session keeps stand-ins). */
  keep: () => boolean;
  bash: string;
  handle: HandleOptions;
}

function indexOf(hay: Uint8Array, needle: Uint8Array, from = 0): number {
  outer: for (let i = from; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** The length of the longest end of `buf` that begins `marker` (and could be completed by what follows). */
function heldBack(buf: Uint8Array, marker: Uint8Array): number {
  for (let k = Math.min(buf.length, marker.length - 1); k > 0; k--) {
    let match = true;
    for (let j = 0; j < k && match; j++) match = buf[buf.length - k + j] === marker[j];
    if (match) return k;
  }
  return 0;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/**
 * Take a sandbox of `cmd.key` (an idle one, else a new one), send it the
 * command and resolve once the launcher acknowledged it. Throws a runtime
 * {@linkcode PenguinError} when no sandbox could be started.
 */
export async function runPooled(cmd: PooledCommand): Promise<SandboxedProcess> {
  latestKey = cmd.key;
  for (let attempt = 0;; attempt++) {
    let live = [...pool].find((l) => l.key === cmd.key && !l.busy && !l.dead && !l.retired);
    const fresh = live === undefined;
    if (live === undefined) {
      const s = await cmd.start();
      for (const other of [...pool]) if (other.key !== cmd.key && !other.busy) void retire(other);
      try {
        live = await startLive(cmd.key, s, cmd.handle.describe);
      } catch (err) {
        await s.release().catch(() => {});
        throw err;
      }
    }
    clearTimeout(live.idleTimer);
    live.busy = true;
    live.child.ref();
    const started = await send(live, cmd);
    if (started !== undefined) return started;
    // It died before it acknowledged: the command did not run. A new sandbox, once.
    unacknowledged++;
    live.busy = false;
    void retire(live);
    if (attempt >= 1 || fresh) {
      throw new PenguinError(
        "runtime",
        `Cannot start ${cmd.handle.describe}: the sandbox ended before the command started.`,
      );
    }
  }
}

/** Send the request; undefined when the launcher never acknowledged it. */
/** Bytes read from a launcher's stdout, and how to read more. */
interface Pending {
  buf: Uint8Array;
  more: () => Promise<boolean>;
}

/**
 * The next bytes of a sandbox's output, read into its reused buffer (a view
 * of it, valid until the next read); undefined at its end or on an error.
 */
async function readLive(live: Live): Promise<Uint8Array | undefined> {
  const buffer = live.readBuffer.byteLength > 0 ? live.readBuffer : new ArrayBuffer(READ_BYTES);
  live.readBuffer = new ArrayBuffer(0); // the read takes it over until it returns it
  try {
    const { done, value } = await live.reader.read(new Uint8Array(buffer));
    if (value) live.readBuffer = value.buffer as ArrayBuffer;
    return done || !value || value.length === 0 ? undefined : value;
  } catch {
    return undefined;
  }
}

/** Copy what fits of `bytes` into the buffer of the read waiting on `c`; how many bytes it took. */
function deliver(c: ReadableByteStreamController, bytes: Uint8Array): number {
  const view = c.byobRequest?.view;
  if (!view) {
    c.enqueue(bytes.slice());
    return bytes.length;
  }
  const n = Math.min(view.byteLength, bytes.length);
  new Uint8Array(view.buffer, view.byteOffset, n).set(bytes.subarray(0, n));
  c.byobRequest!.respond(n);
  return n;
}

/** Close `c`, ending the read waiting on it. */
function closeBytes(c: ReadableByteStreamController): void {
  c.close();
  c.byobRequest?.respond(0);
}

/** Write the request and read the acknowledgement; undefined when the launcher never gave it. */
async function request(
  live: Live,
  cmd: PooledCommand,
  nonce: string,
): Promise<Pending | undefined> {
  const next = hex(16);
  const fields = [
    ...(live.token !== undefined ? [live.token] : []),
    nonce,
    next,
    cmd.cwd,
    cmd.stdin === "piped" ? "1" : "0",
    String(cmd.argv.length),
    ...cmd.argv,
  ];
  live.token = next;
  live.runs++;
  commands++;
  try {
    await live.writer.write(encoder.encode(fields.map((f) => f + "\0").join("")));
  } catch {
    return undefined;
  }
  const ack = encoder.encode(nonce + "\n");
  const p: Pending = {
    buf: new Uint8Array(0),
    more: async () => {
      // The read refills the sandbox's buffer: what is left of the last read is copied out first.
      const kept = p.buf.length > 0 ? p.buf.slice() : NOTHING;
      p.buf = kept;
      const got = await readLive(live);
      if (got === undefined) return false;
      p.buf = concat(kept, got);
      return true;
    },
  };
  while (p.buf.length < ack.length) if (!await p.more()) return undefined;
  if (indexOf(p.buf.subarray(0, ack.length), ack) !== 0) {
    // Never happens with a working launcher: it prints nothing else before the acknowledgement.
    live.dead = true;
    live.child.kill("SIGKILL");
    return undefined;
  }
  p.buf = p.buf.subarray(ack.length);
  return p;
}

/**
 * The command's output: the launcher's stdout up to the end marker `end`
 * (then `finish` with the status it carries), or up to the sandbox's end
 * (then `finish` with a failure, and a line saying so unless `killed()`).
 */
function outputUntilEnd(
  live: Live,
  p: Pending,
  end: Uint8Array,
  finish: (st: ExitStatus) => Promise<void>,
  killed: () => boolean,
): ReadableStream<Uint8Array> {
  // A byte stream: each read's bytes are copied into the reader's own buffer (the sandbox's is
  // refilled by the next read), so streaming output allocates no buffer per read; a fresh one
  // per read left a dead 64 KiB buffer behind each for a collection to free (attack round 24).
  return new ReadableStream({
    type: "bytes",
    autoAllocateChunkSize: READ_BYTES,
    pull: async (c) => {
      for (;;) {
        const at = indexOf(p.buf, end);
        const nl = at >= 0 ? p.buf.indexOf(10, at + end.length) : -1;
        if (nl >= 0) {
          if (at > 0) {
            // The output before the marker, as much as the read takes; the marker waits.
            p.buf = p.buf.subarray(deliver(c, p.buf.subarray(0, at)));
            return;
          }
          const code = Number(new TextDecoder().decode(p.buf.subarray(end.length, nl)));
          p.buf = new Uint8Array(0);
          closeBytes(c);
          return await finish(toExitStatus({ code, signal: null, success: code === 0 }));
        }
        // Keep back what could be the start of the end marker.
        const safe = at >= 0 ? at : p.buf.length - heldBack(p.buf, end);
        if (safe > 0) {
          p.buf = p.buf.subarray(deliver(c, p.buf.subarray(0, safe)));
          return;
        }
        if (await p.more()) continue;
        if (p.buf.length > 0) c.enqueue(p.buf.slice());
        p.buf = new Uint8Array(0);
        const st = toExitStatus(await live.exited);
        live.dead = true;
        if (!killed()) {
          c.enqueue(encoder.encode(
            "\npenguin: the sandbox ended before the command's status arrived\n",
          ));
        }
        closeBytes(c);
        return await finish(st.code === 0 && st.signal === null ? { code: 125, signal: null } : st);
      }
    },
  });
}

/** Send the request; undefined when the launcher never acknowledged it. */
async function send(live: Live, cmd: PooledCommand): Promise<SandboxedProcess | undefined> {
  const nonce = hex(16);
  const p = await request(live, cmd, nonce);
  if (p === undefined) return undefined;
  let active = true;
  let hardAsked = false;
  const { promise: status, resolve } = Promise.withResolvers<ExitStatus>();
  const finish = async (st: ExitStatus) => {
    active = false;
    await cmd.after().catch(() => {});
    idle(live, cmd.keep());
    resolve(st);
  };
  const stdout = outputUntilEnd(live, p, encoder.encode(nonce + " "), finish, () => hardAsked);
  const stdin = new WritableStream<Uint8Array>({
    write: async (chunk) => {
      if (!active) throw new Error("the command has ended");
      await live.writer.write(chunk);
    },
    close: async () => {
      if (!active) return;
      live.closed = true;
      await live.writer.close().catch(() => {});
    },
  });
  const sendSig = signallerInOrder(cmd.bash, LAUNCHER_SIGNALLER, live.child.pid, () => active);
  const last = () => {
    live.dead = true;
    try {
      live.child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  };
  const raw: RawChild = {
    pid: live.child.pid,
    stdin: cmd.stdin === "piped" ? stdin : null,
    stdout,
    stderr: null,
    status,
  };
  return await handleFor(raw, {
    soft: (sig: Exclude<ForwardSignal, "SIGKILL">) => void sendSig(WIRE[sig]),
    hard: () => {
      hardAsked = true;
      live.dead = true;
      void sendSig("KILL").then((code) => code === NO_COMMAND && last());
    },
    last,
  }, cmd.handle);
}

/** The signal the launcher takes for each forwarded one (see `_launcher.ts`). */
const WIRE: Record<Exclude<ForwardSignal, "SIGKILL">, string> = {
  SIGINT: "USR1",
  SIGQUIT: "ALRM",
  SIGTERM: "TERM",
  SIGHUP: "HUP",
};
