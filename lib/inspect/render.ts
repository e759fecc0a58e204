/**
 * Terminal rendering of trace records, one record at a time (used by
 * `trace show` and `trace follow`): the session header, request rules, and
 * the lines of each message (lib/inspect/_render_message.ts) and event
 * (lib/inspect/_render_event.ts). Numbers, labels, previews, collapsing and
 * colours are the live renderer's (lib/display). With colour off the output
 * has no ANSI codes at all.
 *
 * @module
 */
import type { OmniMessage, SessionMeta } from "../protocol/types.ts";
import type { Style } from "../display/palette.ts";
import { callNumberTag, createCallNumbers } from "../display/call_numbers.ts";
import { safeText } from "../display/terminal_text.ts";
import { formatClock, formatTime, parseTimestamp } from "./format.ts";
import { messageLines } from "./_render_message.ts";
import { eventLines, type EventState } from "./_render_event.ts";

/** Options of {@linkcode createRenderer}. */
export interface RenderOptions {
  /** Colours. */
  style: Style;
  /** Show tool outputs and multi-line arguments whole. */
  full?: boolean | undefined;
  /** Prefix of every line (children rendered inline are indented). */
  indent?: string | undefined;
  /** Set for a child session rendered inline: tags become `[agent-<sid3> #n]`. */
  childSessionId?: string | undefined;
  /** Start printing at request N (1-based); earlier records are skipped, except the header. */
  fromRequest?: number | undefined;
  /**
   * The call ids the session recorded before the first record given (in
   * trace order): its calls are numbered after them (`trace follow` from
   * the latest file, or with `--new`).
   */
  earlierCallIds?: readonly string[] | undefined;
}

/** A stateful renderer of one session. */
export interface Renderer {
  /** Render the next record; returns the text to print (possibly ""). */
  record(msg: OmniMessage, file?: string): string;
  /** Requests begun so far. */
  readonly requests: number;
}

function metaLines(m: SessionMeta, ts: string, file: string | undefined, s: Style): string[] {
  const head = `session ${m.session_id} · ${m.provider}/${m.model_id} · ${formatTime(ts)}`;
  const facts = [`workspace ${m.workspace}`];
  if (m.source) facts.push(`source ${m.source}`);
  const lin = m.lineage as Record<string, unknown> | undefined;
  if (lin && typeof lin === "object") {
    facts.push(
      `${lin.kind ?? "fork"} of ${lin.parent_session_id} (file _${
        String(lin.trace_index ?? "?").padStart(3, "0")
      }, line ${lin.line ?? "?"})`,
    );
  }
  if (file) facts.push(`file ${file}`);
  return [s.bold(safeText(head)), s.dim(safeText(facts.join(" · ")))];
}

/** A renderer for one session (see the module doc). */
export function createRenderer(options: RenderOptions): Renderer {
  const s = options.style;
  const indent = options.indent ?? "";
  const from = options.fromRequest ?? 1;
  const origin = options.childSessionId !== undefined ? [options.childSessionId] : undefined;
  // Calls are numbered in the order the trace records them (skipped requests too), as live.
  const numbers = createCallNumbers();
  for (const id of options.earlierCallIds ?? []) numbers.of(id);
  const tag = (id: string) => callNumberTag(numbers.of(id), origin);
  const names = new Map<string, string>();
  const msgCtx = { style: s, full: options.full ?? false, names, tag };
  const st: EventState = {
    style: s,
    tag,
    requests: 0,
    beginTs: NaN,
    usage: null,
    retries: 0,
    mcpBeginTs: NaN,
  };
  let metas = 0;
  let pending: string[] = []; // output held back until request `from` begins
  let started = from <= 1;

  const text = (lines: string[]) => lines.map((l) => indent + l + "\n").join("");
  const emit = (lines: string[]) => {
    if (lines.length === 0) return "";
    if (started) return text(lines);
    pending.push(text(lines));
    return "";
  };

  const requestBegin = (ts: string): string => {
    st.requests++;
    st.beginTs = parseTimestamp(ts);
    st.usage = null;
    const rule = [s.dim(`── request ${st.requests} · ${formatClock(ts)} ──`)];
    if (!started && st.requests >= from) {
      started = true;
      const held = pending.join("");
      pending = [];
      return held + emit(rule);
    }
    pending = [];
    return emit(rule);
  };

  const render = (msg: OmniMessage, file?: string): string => {
    if (msg.type === "session_meta") {
      metas++;
      if (metas === 1) return text(metaLines(msg.payload, msg.timestamp, file, s)); // header: always
      return emit([s.dim(`── new context (after compaction) · ${file ?? "next file"} ──`)]);
    }
    if (msg.type === "model_msg") return emit(messageLines(msg, msgCtx));
    if (msg.payload.type === "request_begin") return requestBegin(msg.timestamp);
    const out = emit(eventLines(msg, st));
    if (!started && msg.payload.type === "request_end") pending = [];
    return out;
  };

  return {
    record: render,
    get requests() {
      return st.requests;
    },
  };
}
