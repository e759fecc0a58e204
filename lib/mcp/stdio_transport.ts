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
 * @module
 */
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { type SandboxedProcess, type SandboxPolicy, spawnSandboxed } from "../sandbox/mod.ts";

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

/** Longest line accepted from a server before it is treated as broken (bytes of UTF-16 text). */
export const MAX_MESSAGE_CHARS = 64 * 1024 * 1024;

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
}

/**
 * The argv that runs the server with its environment and its stderr
 * redirected, without any shell parsing of the user's command: `sh -c`
 * gets a fixed script, everything else is a separate argument.
 */
export function launchArgv(launch: StdioLaunch): string[] {
  const pairs = Object.entries(launch.env).map(([k, v]) => `${k}=${v}`);
  return [
    "/bin/sh",
    "-c",
    'log=$1; shift; exec "$@" 2>>"$log"',
    "mcp-server",
    launch.stderrLog ?? "/dev/null",
    "env",
    ...pairs,
    launch.command,
    ...launch.args,
  ];
}

/** A Transport over a sandboxed child process. Starting it spawns the server. */
export function sandboxedStdioTransport(launch: StdioLaunch): Transport {
  // Long because: one closure-based transport whose methods share the child process and the line
  // buffer; each method is short.
  let child: SandboxedProcess | undefined;
  let closed = false;
  let buffer = "";
  const transport: Transport = {
    async start() {
      if (child) throw new Error("the stdio transport is already started");
      child = await spawnSandboxed({
        argv: launchArgv(launch),
        policy: launch.policy,
        ...(launch.cwd !== undefined ? { cwd: launch.cwd } : {}),
        stdin: "piped",
        onOutput: receive,
        killGraceMs: 500,
      });
      child.status.then((status) => {
        if (!closed) {
          const how = status.signal
            ? `was killed by ${status.signal}`
            : `exited with code ${status.code}`;
          transport.onerror?.(new Error(`the MCP server ${how}`));
        }
        finish();
      });
    },
    async send(message: JSONRPCMessage) {
      if (!child || closed) throw new Error("the MCP server is not running");
      const ok = await child.write(JSON.stringify(message) + "\n");
      if (!ok) throw new Error("the MCP server closed its input");
    },
    async close() {
      if (closed) return;
      closed = true;
      const c = child;
      if (c) {
        await c.closeStdin();
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
    transport.onclose?.();
  }

  function receive(chunk: string): void {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl).replace(/\r$/, "");
      buffer = buffer.slice(nl + 1);
      if (line.trim() !== "") deliver(line);
    }
    if (buffer.length > MAX_MESSAGE_CHARS) {
      buffer = "";
      transport.onerror?.(new Error("the MCP server sent a line longer than 64 MiB"));
      void transport.close();
    }
  }

  function deliver(line: string): void {
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line));
    } catch {
      // Servers print banners and logs on stdout by mistake; those are not messages.
      transport.onerror?.(
        new Error(`the MCP server wrote a line that is not JSON-RPC: ${line.slice(0, 200)}`),
      );
      return;
    }
    transport.onmessage?.(message);
  }

  return transport;
}
