/**
 * The scripted model server every model and agent end-to-end test uses.
 *
 * ```ts
 * const server = await startModelServer({ turns: [turn.text("hi"), turn.toolCall("exec_command", { cmd: "ls" })] });
 * try {
 *   // point a ModelEndpoint at server.endpoint("openai-chat")
 * } finally {
 *   await server.close();
 * }
 * ```
 *
 * @module
 */
export {
  MALFORMED_CHUNK,
  type ModelServer,
  type ModelServerOptions,
  type RecordedRequest,
  startModelServer,
  type TurnHandler,
  withModelServer,
} from "./model_server/server.ts";
export {
  DEFAULT_USAGE,
  type Encoder,
  item,
  type ScriptedFinish,
  type ScriptedHttpError,
  type ScriptedItem,
  type ScriptedStreamError,
  type ScriptedText,
  type ScriptedThinking,
  type ScriptedToolCall,
  type ScriptedTurn,
  type ScriptedUsage,
  turn,
} from "./model_server/script.ts";
export { ENCODERS } from "./model_server/encoders.ts";
