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
import type { ImageClaim } from "../tool.ts";

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
  // A call's image claim waiting for penguin's answer (one at a time per call).
  const claims = new Map<number, (answer: ImageClaim) => void>();

  /** Ask penguin whether call `id` may read `bytes` of image data (its process-wide bound). */
  function claimImage(id: number, signal: AbortSignal, bytes: number): Promise<ImageClaim> {
    if (signal.aborted) return Promise.resolve("response");
    const { promise, resolve } = Promise.withResolvers<ImageClaim>();
    claims.set(id, resolve);
    const off = () => resolve("response");
    signal.addEventListener("abort", off, { once: true });
    io.write(encodeReply({ type: "claim", id, bytes }));
    return promise.finally(() => {
      claims.delete(id);
      signal.removeEventListener("abort", off);
    });
  }

  async function run(m: Extract<HostMessage, { type: "run" }>): Promise<void> {
    const ctl = new AbortController();
    running.set(m.id, ctl);
    try {
      const ctx = {
        ...m.ctx,
        signal: ctl.signal,
        claimImage: (bytes: number) => claimImage(m.id, ctl.signal, bytes),
      };
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
    else if (m.type === "claimed") claims.get(m.id)?.(m.ok ? true : m.bound ?? "response");
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
