/**
 * Offline trace inspection: resolve targets (files, directories, session
 * ids), render a conversation for the terminal, statistics with cost,
 * exports (HTML, Markdown, JSON) with secret redaction, following a live
 * trace, and diffing two sessions. Everything here only reads traces.
 *
 * @module
 */
export {
  findSessionInRoot,
  resolveTarget,
  resolveTargets,
  type SessionFiles,
  type TargetOptions,
  type TraceFile,
} from "./targets.ts";
export { createRenderer, type Renderer, type RenderOptions } from "./render.ts";
export { type ShowOptions, showSessions } from "./show.ts";
export {
  collectStats,
  type FailureRow,
  STATS_GROUPS,
  type StatsGroup,
  type StatsOptions,
  type StatsReport,
  type StatsRow,
  type ToolRow,
} from "./stats.ts";
export { describeCost, renderStatsCsv, renderStatsText, renderTotal } from "./stats_render.ts";
export { costOf, createPriceBook, type Price, type PriceBook, type Tokens } from "./pricing.ts";
export {
  type Conversation,
  type ConvItem,
  loadConversation,
  type LoadOptions,
  type Relative,
  type RequestSummary,
  type RequestTokens,
} from "./conversation.ts";
export { renderHtml } from "./export_html.ts";
export { renderMarkdown } from "./export_md.ts";
export {
  redactConversation,
  redactDeep,
  redactionMarker,
  redactSecrets,
  type SecretKind,
} from "./redact.ts";
export { type FollowOptions, followTrace } from "./follow.ts";
export { type DiffEntry, type DiffReport, diffSessions, type DiffSide, summarize } from "./diff.ts";
export * from "./format.ts";
export { toolPreview } from "./conversation.ts";
