/**
 * The worker side of a {@linkcode ToolWorker}: {@linkcode serveTools} makes
 * the current Worker run tool calls the host sends it and stream their
 * {@linkcode ToolEvent}s back. A worker entry module is one line:
 * `serveTools({read_file: createReadFileTool, …})`.
 *
 * Whatever the tool does runs under the Worker's own Deno permissions (set
 * by the host), so a tool that forgets a check still cannot reach outside
 * them: such attempts throw `NotCapable`, which ends the call as a tool error.
 *
 * @module
 */
import type { FileToolContext, ImageClaim, ToolFactory } from "../tool.ts";
import { fromWireError, type HostMessage, toWireError, type WorkerMessage } from "./_protocol.ts";

/** The worker global scope, typed narrowly (this module is type-checked with the window lib). */
interface WorkerScope {
  postMessage(message: WorkerMessage): void;
  addEventListener(type: "message", fn: (e: MessageEvent<HostMessage>) => void): void;
}

/**
 * Serve `factories` (tool name → factory) to the host. Call once, at the top
 * level of a worker entry module.
 */
export function serveTools(
  factories: Readonly<Record<string, ToolFactory<FileToolContext>>>,
): void {
  const scope = globalThis as unknown as WorkerScope;
  const running = new Map<number, AbortController>();
  const holding = new Map<number, (answer: { ok: boolean; bound?: "process" }) => void>();
  const post = (m: WorkerMessage) => scope.postMessage(m);

  async function run(m: Extract<HostMessage, { type: "run" }>): Promise<void> {
    const ctl = new AbortController();
    running.set(m.id, ctl);
    try {
      const factory = Object.hasOwn(factories, m.tool) ? factories[m.tool] : undefined;
      if (!factory) throw new Error(`the tool worker does not serve "${m.tool}"`);
      const tool = factory(m.definition);
      // A call waits for one answer at a time: a share of the memory budget, or an image claim.
      const ask = (type: "hold" | "claim", bytes: number) =>
        new Promise<{ ok: boolean; bound?: "process" }>((resolve) => {
          holding.set(m.id, resolve);
          post({ type, id: m.id, bytes });
        });
      const ctx = {
        ...m.ctx,
        signal: ctl.signal,
        holdMemory: async (bytes: number) => (await ask("hold", bytes)).ok,
        claimImage: async (bytes: number): Promise<ImageClaim> => {
          const a = await ask("claim", bytes);
          return a.ok ? true : a.bound ?? "response";
        },
      };
      for await (const event of tool.run(m.args, ctx)) {
        post({ type: "event", id: m.id, event });
      }
      post({ type: "done", id: m.id });
    } catch (err) {
      post({ type: "error", id: m.id, error: toWireError(err) });
    } finally {
      running.delete(m.id);
      holding.get(m.id)?.({ ok: false });
      holding.delete(m.id);
    }
  }

  scope.addEventListener("message", (e) => {
    const m = e.data;
    if (m.type === "run") void run(m);
    else if (m.type === "abort") running.get(m.id)?.abort(fromWireError(m.reason));
    else if (m.type === "held" || m.type === "claimed") {
      const resolve = holding.get(m.id);
      holding.delete(m.id);
      resolve?.(m);
    }
  });
  post({ type: "ready" });
}
