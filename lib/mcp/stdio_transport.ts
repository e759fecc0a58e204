/**
 * The stdio transport of penguin's MCP client: the server runs through
 * `lib/sandbox` (confined like the model's commands), messages are JSON-RPC
 * objects, one per line, on its stdin and stdout. Its stderr goes to a log
 * file (under the data root, in a directory only the server's sandbox
 * sees), never to the model.
 *
 * The SDK's own stdio transport starts the server as an ordinary process
 * with the user's full rights; penguin never uses it (an architecture test
 * keeps it that way).
 *
 * What the server writes is bounded before it is parsed: a line longer
 * than {@linkcode MAX_MESSAGE_CHARS}, or one whose JSON would hold more
 * values or nest deeper than `jsonShapeProblem` allows, is refused unparsed;
 * the server is then stopped (its whole sandbox) and the transport closes,
 * which fails every request under way. {@linkcode BoundedTransport.refusal}
 * says why, naming the server and the bound.
 *
 * A line that grows past `LARGE_ANSWER_CHARS` waits for the process's
 * answer gate (lib/mcp/answer_gate.ts) before more is read: the server
 * waits on its full pipe while another large answer is handled.
 *
 * @module
 */
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { jsonShapeProblem } from "../protocol/json_shape.ts";
import { type SandboxedProcess, type SandboxPolicy, spawnSandboxed } from "../sandbox/mod.ts";
import {
  type AnswerDesk,
  type AnswerGate,
  createAnswerDesk,
  LARGE_ANSWER_CHARS,
  MCP_ANSWER_GATE,
  type Release,
} from "./answer_gate.ts";
import { boundedLines } from "./bounded_lines.ts";

/**
 * The part of the SDK's transport interface penguin's transports implement
 * (the SDK's `Client.connect` accepts it structurally).
 */
export interface Transport {
  /** Start receiving (for stdio: start the server). */
  start(): Promise<void>;
  /** Send one message. */
  send(message: JSONRPCMessage): Promise<void>;
  /** Stop; `onclose` follows. */
  close(): Promise<void>;
  /** Set by the client: the connection ended. */
  onclose?: (() => void) | undefined;
  /** Set by the client: something went wrong (the connection may go on). */
  onerror?: ((error: Error) => void) | undefined;
  /** Set by the client: a message arrived. */
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
}

/**
 * Longest line (one JSON-RPC message) accepted from a server, in
 * characters: 16 Mi. The largest real messages are tool results carrying
 * images or files as base64, a few MB; a line past this is a broken or
 * hostile server, and is never assembled or parsed.
 */
export const MAX_MESSAGE_CHARS = 16 * 1024 * 1024;

/** A transport that refuses over-large answers, and says why. */
export interface BoundedTransport extends Transport {
  /** Why the server was stopped for what it sent (names the server and the bound); else undefined. */
  readonly refusal: string | undefined;
  /** Where the slot of a large answer just delivered waits for the call it answers. */
  readonly desk: AnswerDesk;
}

/** What {@linkcode sandboxedStdioTransport} starts. */
export interface StdioLaunch {
  /** Program and its arguments. */
  command: string;
  args: readonly string[];
  /** Variables set for the server on top of the sandbox's environment. */
  env: Readonly<Record<string, string>>;
  /** Working directory (default: the policy's workspace). */
  cwd?: string;
  /** The confinement. */
  policy: SandboxPolicy;
  /** File that receives the server's stderr (appended); absent: discarded. */
  stderrLog?: string;
  /** The server's name, for messages (default `stdio`). */
  name?: string;
  /** The gate large answers wait for (default: the process's). */
  gate?: AnswerGate;
}

/**
 * The argv that runs the server with its stderr redirected, without any
 * shell parsing of the user's command: `sh -c` gets a fixed script,
 * everything else is a separate argument. Its environment is no part of it
 * ({@linkcode withServerEnv}): an argument is in the process list, which
 * every user of the machine reads (`env TOKEN=…` was, attack round 20
 * mcpsecrets #3).
 */
export function launchArgv(launch: StdioLaunch): string[] {
  return [
    "/bin/sh",
    "-c",
    'log=$1; shift; exec "$@" 2>>"$log"',
    "mcp-server",
    launch.stderrLog ?? "/dev/null",
    launch.command,
    ...launch.args,
  ];
}

/**
 * `policy` with the server's `env` given to its process the way vault
 * values are given to commands: through the sandbox's environment, which
 * only this user reads, never its arguments.
 */
export function withServerEnv(policy: SandboxPolicy, env: Record<string, string>): SandboxPolicy {
  if (Object.keys(env).length === 0) return policy;
  return { ...policy, env: { ...policy.env, vault: { ...policy.env.vault, ...env } } };
}

/** How long a failed write waits for the server's exit status, to report how it ended. */
const EXIT_WAIT_MS = 2000;

/** "exited with code N" or "was killed by SIG…". */
function howItEnded(status: { code: number; signal?: string | null }): string {
  return status.signal ? `was killed by ${status.signal}` : `exited with code ${status.code}`;
}

/** `promise`'s value when it settles within `ms`, else undefined (the timer is cleared). */
async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Read `output` into `feed`; a line growing past `LARGE_ANSWER_CHARS`
 * first waits for `gate` (the server waits on its full pipe). The slot is
 * kept in `slot` until the line's receiver hands it on; what is held when
 * reading ends is given back.
 */
async function readGated(
  output: ReadableStream<string>,
  feed: ReturnType<typeof boundedLines>,
  gate: AnswerGate,
  signal: AbortSignal,
  slot: { lease?: Release | undefined },
): Promise<void> {
  const reader = output.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (slot.lease === undefined && feed.pending() + value.length > LARGE_ANSWER_CHARS) {
        slot.lease = await gate.acquire(signal);
        if (slot.lease === undefined) break;
      }
      feed(value);
    }
  } catch {
    // The output failed (the server was stopped): its status says how.
  } finally {
    slot.lease?.();
    slot.lease = undefined;
    await reader.cancel().catch(() => {});
  }
}

/** A Transport over a sandboxed child process. Starting it spawns the server. */
export function sandboxedStdioTransport(launch: StdioLaunch): BoundedTransport {
  // Long because: one closure-based transport whose methods share the child process and the line
  // buffer; each method is short.
  let child: SandboxedProcess | undefined;
  let closed = false;
  let refusal: string | undefined;
  const who = `MCP server ${JSON.stringify(launch.name ?? "stdio")}`;
  const gate = launch.gate ?? MCP_ANSWER_GATE;
  const desk = createAnswerDesk();
  const stopped = new AbortController();
  /** The gate's slot, while a large line is under way. */
  const slot: { lease?: Release | undefined } = {};
  const transport: BoundedTransport = {
    get refusal() {
      return refusal;
    },
    desk,
    async start() {
      if (child) throw new Error("the stdio transport is already started");
      child = await spawnSandboxed({
        argv: launchArgv(launch),
        policy: withServerEnv(launch.policy, launch.env),
        ...(launch.cwd !== undefined ? { cwd: launch.cwd } : {}),
        stdin: "piped",
        killGraceMs: 500,
      });
      void readGated(child.output, receive, gate, stopped.signal, slot);
      if (closed) {
        // Closed while its sandbox was being set up (a connect attempt given up): stop it now.
        await child.kill(500);
        throw new Error("the MCP server was closed while it started");
      }
      child.status.then((status) => {
        if (!closed) transport.onerror?.(new Error(`the MCP server ${howItEnded(status)}`));
        finish();
      });
    },
    async send(message: JSONRPCMessage) {
      if (!child || closed) throw new Error("the MCP server is not running");
      const ok = await child.write(JSON.stringify(message) + "\n");
      if (!ok) {
        // A server that exits at once closes its input first: say how it ended when it has.
        const status = await settledWithin(child.status, EXIT_WAIT_MS);
        throw new Error(
          status ? `the MCP server ${howItEnded(status)}` : "the MCP server closed its input",
        );
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      stopped.abort();
      const c = child;
      if (c) {
        // Not awaited before the kill: a server that stopped reading its input must not hold it up.
        void c.closeStdin();
        await c.kill(500);
      }
      finish();
    },
  };

  let finished = false;
  function finish(): void {
    if (finished) return;
    finished = true;
    closed = true;
    stopped.abort();
    transport.onclose?.();
  }

  const receive = boundedLines(MAX_MESSAGE_CHARS, {
    onLine: (line) => {
      if (refusal === undefined && line.trim() !== "") deliver(line);
      // Delivered: the call it answered takes the slot (see lib/mcp/answer_gate.ts).
      if (slot.lease !== undefined) desk.offer(slot.lease);
      slot.lease = undefined;
    },
    onTooLong: () =>
      refuse(
        `sent a line longer than ${
          MAX_MESSAGE_CHARS / 1024 / 1024
        } Mi characters (the limit of one message)`,
      ),
  });

  /** Stop the server for what it sent: the pending requests fail with `refusal`. */
  function refuse(what: string): void {
    if (refusal !== undefined) return;
    refusal = `${who} ${what}; the server was stopped`;
    transport.onerror?.(new Error(refusal));
    void transport.close();
  }

  function deliver(line: string): void {
    const problem = jsonShapeProblem(line);
    if (problem !== undefined) return refuse(`sent a message with ${problem} (penguin's limit)`);
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line));
    } catch {
      // Servers print banners and logs on stdout by mistake; those are not messages.
      transport.onerror?.(
        new Error(`${who} wrote a line that is not JSON-RPC: ${line.slice(0, 200)}`),
      );
      return;
    }
    transport.onmessage?.(message);
  }

  return transport;
}
