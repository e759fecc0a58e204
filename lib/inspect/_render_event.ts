/**
 * The lines of one `event_msg` record in `trace show` / `trace follow`:
 * request ends with their latency and tokens, and the event labels shared
 * with the live renderer (lib/display/labels.ts) for approvals, aborts,
 * retries, compactions, MCP connects, goals and workspace moves.
 * `request_begin` is the session renderer's (it starts printing there).
 *
 * @module
 */
import type { EventMsgEnvelope, RequestEndEvent, TokenCounts } from "../protocol/types.ts";
import { formatDuration, formatTokens } from "../display/numbers.ts";
import type { Style } from "../display/palette.ts";
import { safeText } from "../display/terminal_text.ts";
import {
  abortLabel,
  approvalLabel,
  compactionBeginLabel,
  compactionEndLabel,
  failedRequestLabel,
  goalFinishedLabel,
  mcpBeginLabel,
  mcpEndLabel,
  modelSwitchedLabel,
  workspaceMovedLabel,
} from "../display/labels.ts";
import { parseTimestamp } from "./format.ts";

/** The per-session state the event lines read and update. */
export interface EventState {
  /** Colours. */
  style: Style;
  /** The pairing tag of a call id. */
  tag(id: string): string;
  /** Requests begun so far. */
  requests: number;
  /** Time of the open request_begin (epoch ms; NaN when none). */
  beginTs: number;
  /** Usage of the open request. */
  usage: TokenCounts | null;
  /** Failed requests since the last one that completed. */
  retries: number;
  /** Time of the open mcp_connect_begin (epoch ms; NaN when none). */
  mcpBeginTs: number;
}

function requestEndLine(e: RequestEndEvent, ts: string, st: EventState): string {
  const s = st.style;
  const ms = parseTimestamp(ts) - st.beginTs;
  const took = Number.isFinite(ms) ? ` · ${formatDuration(ms)}` : "";
  if (e.status === "completed") {
    st.retries = 0;
    const u = st.usage;
    const tokens = u
      ? ` · tokens ${formatTokens(u.total ?? 0)} (cached ${formatTokens(u.cache_read ?? 0)}, ` +
        `uncached ${formatTokens(u.cache_write ?? 0)}, output ${formatTokens(u.output ?? 0)})`
      : "";
    return s.dim(`── request ${st.requests} completed${took}${tokens} ──`);
  }
  st.retries++;
  return s.yellow(`${failedRequestLabel(e, st.retries)}${took}`);
}

/** The lines of one `event_msg` record other than `request_begin`. */
export function eventLines(msg: EventMsgEnvelope, st: EventState): string[] {
  const s = st.style;
  const e = msg.payload;
  switch (e.type) {
    case "token_usage":
      st.usage = e.request;
      return [];
    case "request_end":
      return [requestEndLine(e, msg.timestamp, st)];
    case "approval_decision": {
      const color = e.decision === "allow" ? s.green : s.red;
      return [color(approvalLabel(e.decision, e.reason, st.tag(e.tool_call_id)))];
    }
    case "abort":
      st.retries = 0;
      return [s.red(abortLabel(e))];
    case "compaction_begin":
      return [s.yellow(compactionBeginLabel(e))];
    case "compaction_end":
      return [s.yellow(compactionEndLabel(e))];
    case "subagent":
      return [s.cyan(`[subagent] ${safeText(String(e.session_id))}`)];
    case "tool_list_ready": {
      const tools = e.tools.map((t) => safeText(String(t.name)));
      return [s.dim(`[tools] ${tools.length}: ${tools.join(", ")}`)];
    }
    case "mcp_connect_begin":
      st.mcpBeginTs = parseTimestamp(msg.timestamp);
      return [s.dim(mcpBeginLabel(e.servers))];
    case "mcp_connect_end": {
      const elapsed = parseTimestamp(msg.timestamp) - st.mcpBeginTs;
      st.mcpBeginTs = NaN;
      const ms = Number.isFinite(elapsed)
        ? elapsed
        : Math.max(0, ...e.results.map((r) => r.duration_ms ?? 0));
      return [s.dim(mcpEndLabel(e.status, e.results, ms))];
    }
    case "goal_finished":
      return [s.yellow(goalFinishedLabel(e))];
    case "workspace_moved":
      return [s.yellow(workspaceMovedLabel(e.from, e.to))];
    case "model_switched":
      return [
        s.yellow(modelSwitchedLabel(
          { provider: e.previous_provider, model_id: e.previous_model_id },
          e,
        )),
      ];
    default: {
      const other: { type?: unknown } = e;
      return [s.dim(`[${String(other.type)}] ${safeText(JSON.stringify(other))}`)];
    }
  }
}
