/**
 * The built-in scripted model: a Chat Completions server on 127.0.0.1 that
 * answers from a fixed script, so `penguin demo` shows the whole agent loop
 * without a key or a network.
 *
 * @module
 */
export type {
  ChatMessageView,
  Script,
  ScriptedCall,
  ScriptedReply,
  ScriptedRequest,
} from "./reply.ts";
export { requestOf } from "./reply.ts";
export { chatCompletionEvents, type ScriptedUsage } from "./chat_sse.ts";
export { type ScriptedModel, startScriptedModel } from "./server.ts";
export {
  DEMO_GREETING,
  DEMO_MODEL_ID,
  DEMO_PROVIDER,
  DEMO_TASK,
  demoScript,
} from "./demo_script.ts";
