/**
 * MCP servers as tool sources: configuration comes from `lib/state`
 * (`tools.mcpServers`), stdio servers run confined through `lib/sandbox`,
 * and each server's tools become penguin tools named `mcp__<server>__<tool>`.
 * The client is the official `@modelcontextprotocol/sdk`, with a stdio
 * transport of penguin's own.
 *
 * @module
 */
export {
  type ConnectContext,
  connectServer,
  type ListedTool,
  type McpConnection,
  serverPolicy,
  stderrLogPath,
} from "./connect.ts";
export { closeAll, connectAll, type ConnectAllResult } from "./connect_all.ts";
export { MCP_TOOL_NAME, mcpPermission, mcpToolName, mcpTools } from "./tools.ts";
export { renderCallResult, type RenderedResult } from "./result.ts";
export { launchArgv, sandboxedStdioTransport, type StdioLaunch } from "./stdio_transport.ts";
export { type McpSourceOptions, mcpToolSource } from "./source.ts";
export { diagnoseStdioFailure, findOnHost, hiddenIn, packageRunner } from "./diagnose.ts";
export { headerSecretValue, mcpSecrets } from "./secrets.ts";
