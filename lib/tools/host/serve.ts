/**
 * The tool host: the process that serves the file tools from inside the
 * session's OS sandbox (started by `client.ts` as `penguin __tool-host`).
 *
 * It reads requests, one JSON line each, from its input and runs every call
 * in a confined tool worker (`../worker/pool.ts`: Deno read/write of exactly
 * the call's workspace and scratchpad, nothing else), streaming the events
 * back as prefixed lines. Because the whole process lives in the sandbox's
 * mount namespace, every path a tool opens — symlinks included, resolved at
 * the moment of the open — resolves in the view a sandboxed command has: the
 * data root, the home secrets and everything hidden do not exist there, and
 * read-only mounts refuse writes in the kernel. End of input ends the host.
 *
 * @module
 */
import { FILE_WORKER_URL } from "../worker/file_worker_url.ts";
import { createToolWorkerPool } from "../worker/pool.ts";
import { fromWireError, type HostMessage, toWireError } from "../worker/_protocol.ts";
import { decodeRequest, encodeReply, lineSplitter } from "./_wire.ts";

/** Where the host reads requests and writes replies. */
export interface ToolHostIo {
  /** Requests, one JSON line each. */
  input: ReadableStream<Uint8Array>;
  /** Write one reply line, given in pieces; must not interleave with other writes. */
  write(line: Iterable<string>): void;
}

/** Serve tool calls until the input ends. */
export async function serveToolHost(io: ToolHostIo): Promise<void> {
  const pool = createToolWorkerPool(FILE_WORKER_URL, { name: "penguin-tool-host" });
  const running = new Map<number, AbortController>();
  const calls = new Set<Promise<void>>();

  async function run(m: Extract<HostMessage, { type: "run" }>): Promise<void> {
    const ctl = new AbortController();
    running.set(m.id, ctl);
    try {
      const ctx = { ...m.ctx, signal: ctl.signal };
      for await (const event of pool.run(m.definition, m.args, ctx)) {
        io.write(encodeReply({ type: "event", id: m.id, event }));
      }
      io.write(encodeReply({ type: "done", id: m.id }));
    } catch (err) {
      io.write(encodeReply({ type: "error", id: m.id, error: toWireError(err) }));
    } finally {
      running.delete(m.id);
    }
  }

  io.write(encodeReply({ type: "ready" }));
  const lines = lineSplitter();
  const dispatch = (line: string) => {
    const m = decodeRequest(line);
    if (!m) return;
    if (m.type === "run") {
      const p = run(m);
      calls.add(p);
      p.finally(() => calls.delete(p));
    } else if (m.type === "abort") running.get(m.id)?.abort(fromWireError(m.reason));
  };
  try {
    for await (const text of io.input.pipeThrough(new TextDecoderStream())) {
      for (const line of lines.push(text)) dispatch(line);
    }
    for (const line of lines.end()) dispatch(line);
  } finally {
    for (const ctl of running.values()) {
      ctl.abort(new DOMException("the tool host is shutting down", "AbortError"));
    }
    await Promise.allSettled([...calls]);
    pool.dispose();
  }
}
