/**
 * Tools in a permission-narrowed Worker: the generic pool and serve pair,
 * and the confined file tools built on them.
 *
 * @module
 */
export {
  createToolWorkerPool,
  DEFAULT_WORKER_ABORT_GRACE_MS,
  DEFAULT_WORKER_IDLE_MS,
  type ToolWorkerPool,
  type ToolWorkerPoolOptions,
  workerPermissions,
} from "./pool.ts";
export { serveTools } from "./serve.ts";
export {
  CONFINED_FILE_TOOLS,
  type ConfinedFileTools,
  confinedFileTools,
  type ConfinedFileToolsOptions,
  FILE_WORKER_URL,
  proxyTool,
} from "./confined.ts";
export type { HostMessage, WireError, WorkerMessage, WorkerToolContext } from "./_protocol.ts";
