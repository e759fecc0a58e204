/**
 * What the live renderer (`penguin run`, `penguin chat`) and the offline
 * views (`trace show|follow|stats|diff|export`, `sessions`) print alike: one
 * rule each for numbers, the colour palette, event labels, tool-call
 * previews, output collapsing, and making untrusted text terminal-safe.
 *
 * @module
 */
export { formatDuration, formatTokens, formatUsd, plural, signed } from "./numbers.ts";
export { makeStyle, paint, type Palette, paletteFor, type Style } from "./palette.ts";
export {
  abortLabel,
  approvalLabel,
  compactionBeginLabel,
  compactionEndLabel,
  type FailedRequest,
  failedRequestLabel,
  goalFinishedLabel,
  goalRoundLabel,
  goalStartLabel,
  mcpBeginLabel,
  mcpEndLabel,
  modelSwitchedLabel,
  requestFailedLabel,
  retryLabel,
  short3,
  workspaceMovedLabel,
} from "./labels.ts";
export {
  cap,
  type DescribedCall,
  describeToolCall,
  type Field,
  filePreview,
  inputPreview,
  NO_PAYLOAD,
  parseToolArgs,
  PREVIEW_COMMAND_MAX,
  PREVIEW_PAYLOAD_MAX,
  type PreviewInput,
  type PreviewOptions,
  type PreviewPart,
  readField,
  shortPath,
  singleLine,
  toolCallPreview,
  type ToolPreviewFn,
  type ToolPreviews,
  visibleControls,
} from "./tool_preview.ts";
export {
  type CallNumbers,
  callNumberTag,
  createCallNumbers,
  parseCallNumber,
} from "./call_numbers.ts";
export {
  collapseLines,
  type Collapser,
  type CollapseTail,
  collapseText,
  createCollapser,
  elidedLabel,
  HEAD_LINES,
  TAIL_LINES,
} from "./collapse.ts";
export {
  createSafeTextStream,
  escapeControls,
  safeText,
  type SafeTextStream,
} from "./terminal_text.ts";
