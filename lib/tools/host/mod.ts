/**
 * The file tools served from inside the OS sandbox: the client that starts
 * and talks to a sandboxed copy of penguin, and the host loop it runs.
 *
 * @module
 */
export { createToolHost, DEFAULT_HOST_IDLE_MS, hostPolicy, type ToolHost } from "./client.ts";
export type { ToolHostOptions } from "./client.ts";
export { serveToolHost, type ToolHostIo } from "./serve.ts";
export { selfArgv, TOOL_HOST_COMMAND } from "./self.ts";
