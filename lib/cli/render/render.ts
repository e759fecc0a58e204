/**
 * The live terminal renderer of the OmniMessage stream.
 *
 * Only streaming partials are drawn (complete messages repeat what their
 * partials showed): text raw, thinking dim, tool calls cyan
 * `[#n] <preview>`, tool outputs as dim `[#n] <tool> -> `
 * gutter lines (optionally collapsed). Events print one line each
 * (approvals, abort, retry, compaction, MCP, goal); `token_usage` feeds the
 * `[stats]` line printed by {@linkcode Renderer.endTask}. Messages forwarded
 * from child sessions show only their tool calls
 * (`[agent-<sid3> #n]`) and approvals, and count toward tokens.
 *
 * Concurrency: a streaming segment (the model's text/thinking/tool-call
 * stream, or one tool's output stream) holds the screen from its first
 * fragment to its `stop`; other messages queue and keep their order (a
 * child's messages that draw nothing and count nothing are not kept). A
 * prompt ({@linkcode Renderer.beginPrompt}) or {@linkcode Renderer.pause}
 * locks the screen entirely until released.
 *
 * @module
 */
import type {
  ApprovalDecision,
  EventMsgEnvelope,
  ModelMsgEnvelope,
  OmniMessage,
  PartialToolCall,
  PartialToolCallOutput,
  ToolCallMessage,
} from "../../protocol/types.ts";
import { paletteFor } from "../../display/palette.ts";
import type { ToolPreviews } from "../../display/tool_preview.ts";
import { createSpinner, type Spinner } from "./spinner.ts";
import { renderHistory } from "./history.ts";
import { createCallNumbers } from "../../display/call_numbers.ts";
import { createScreen, type Screen } from "./_screen.ts";
import { createStats, type Stats, type StatsStyle } from "./_stats.ts";
import type { MarkdownStreamOptions } from "./markdown.ts";

/** Options of {@linkcode createRenderer}. */
export interface RendererOptions {
  /** Where text goes (synchronously). */
  write(text: string): void;
  /** Emit ANSI colour codes. */
  color: boolean;
  /** Collapse long tool outputs (chat default; `penguin run` never does). */
  collapse: boolean;
  /** Show a spinner until the first token (TTY only; default false). */
  spinner?: boolean;
  /** The spinner's progress text, e.g. `waiting for deepseek/deepseek-chat…` (default: none). */
  spinnerLabel?: string;
  /** How the `[stats]` line reads (default: session figures with per-task deltas). */
  stats?: StatsStyle | undefined;
  /**
   * Print `✓ [approved]` for calls nobody was asked about (default true).
   * Off, only answered prompts, denials and policy verdicts print a line.
   */
  autoApprovals?: boolean;
  /** How the elision marker of a collapsed output says to see it all (default `/verbose`). */
  fullOutputHint?: string;
  /**
   * Draw the model's text (live and in history) as Markdown; only honoured
   * with `color` (otherwise the text stays raw). Default: raw.
   */
  markdown?: MarkdownStreamOptions;
  /** Clock for elapsed-time fallbacks (default `Date.now`). */
  now?: () => number;
  /** How the tools' calls show (the tools' own previews; others the generic form). */
  toolPreviews: ToolPreviews;
}

/** A live renderer. All methods are synchronous. */
export interface Renderer {
  /** Render (or queue) one message of a run stream. */
  push(msg: OmniMessage): void;
  /** A task starts: reset per-task counters, start the spinner. */
  beginTask(): void;
  /** A task ended: flush everything and print the `[stats]` line (when usage was seen). */
  endTask(): void;
  /** Release any hold, render everything queued, settle collapsed outputs, end the line. */
  flush(): void;
  /**
   * Lock the screen for an approval prompt. With `toolCall`, first make sure
   * its call line is the line right above the cursor (drawn in place from the
   * complete message if needed). The caller then writes its prompt. `origin`
   * is the child-session chain of a forwarded call (absent for the main session).
   */
  beginPrompt(toolCall?: ToolCallMessage, origin?: readonly string[]): void;
  /**
   * Unlock after a prompt (the caller has ended its line). With a decision,
   * print its approval line first, with `reason` for a denial (the later
   * `approval_decision` event is then not printed again).
   */
  endPrompt(
    toolCall?: ToolCallMessage,
    decision?: ApprovalDecision,
    origin?: readonly string[],
    reason?: string,
  ): void;
  /** Lock the screen while the user composes input; end the current line. */
  pause(): void;
  /** Undo {@linkcode Renderer.pause} and render what queued meanwhile. */
  resume(): void;
  /** Print one notice line now (ends the current line first); dim unless `plain`. */
  line(text: string, style?: "dim" | "plain"): void;
  /** Toggle output collapsing (applies to outputs that start afterwards). */
  setCollapse(on: boolean): void;
  /**
   * Render complete history messages statically and seed the stats counters
   * and the call numbers from them (the next call is numbered after theirs).
   */
  history(messages: readonly OmniMessage[]): void;
  /**
   * Another session goes on from here (a resumed one, `/clear`): its calls
   * are numbered from `#1`, after the calls it recorded (`recordedCallIds`,
   * in trace order) when given. Nothing is drawn.
   */
  startSession(recordedCallIds?: Iterable<string>): void;
  /** The context size of the session's last request, in tokens (0 before any). */
  contextTokens(): number;
  /**
   * Print a collapsed output of this renderer whole: the one whose short id
   * (`#3` or `3` of `[#3]`) is `tag`, else the latest; false when none is kept.
   */
  expand(tag?: string): boolean;
}

/** The spinner `opts` ask for, if any. */
function spinnerOf(
  opts: RendererOptions,
  palette: ReturnType<typeof paletteFor>,
  now: () => number,
): Spinner | undefined {
  if (!opts.spinner) return undefined;
  return createSpinner({
    write: opts.write,
    dim: palette.dim,
    reset: palette.reset,
    ...(opts.spinnerLabel !== undefined ? { label: opts.spinnerLabel } : {}),
    now,
  });
}

/** The streaming segment a message belongs to, or null for atomic messages. */
function ownerOf(msg: OmniMessage): string | null {
  if (msg.type !== "model_msg" || (msg.origin && msg.origin.length > 0)) return null;
  const t = msg.payload.type;
  if (t === "partial_text" || t === "partial_thinking" || t === "partial_tool_call") {
    return "llm";
  }
  if (t === "partial_tool_call_output") {
    return `out:${(msg.payload as PartialToolCallOutput).tool_call_id}`;
  }
  return null;
}

const endsRequest = (msg: OmniMessage) =>
  msg.type === "event_msg" && !(msg.origin && msg.origin.length > 0) &&
  (msg.payload.type === "request_end" || msg.payload.type === "abort");
const isStop = (msg: OmniMessage) => (msg.payload as { event_type?: string }).event_type === "stop";

/**
 * One pass over `pending` while the segment `holder` holds the screen: its
 * messages are drawn, the others kept, until it ends or the screen locks.
 */
function drainHeld(
  pending: readonly OmniMessage[],
  holder: string | null,
  locked: () => boolean,
  render: (msg: OmniMessage) => void,
): { keep: OmniMessage[]; holder: string | null; progressed: boolean } {
  const keep: OmniMessage[] = [];
  let progressed = false;
  for (let i = 0; i < pending.length; i++) {
    if (locked() || holder === null) {
      keep.push(...pending.slice(i));
      break;
    }
    const msg = pending[i]!;
    if (holder === "llm" && endsRequest(msg)) {
      // The request is over: a segment that never sent its stop holds nothing.
      holder = null;
      keep.push(...pending.slice(i));
      progressed = true;
      break;
    }
    if (ownerOf(msg) === holder) {
      if (isStop(msg)) holder = null;
      render(msg);
      progressed = true;
    } else {
      keep.push(msg);
    }
  }
  return { keep, holder, progressed };
}

/** Draw a model message of the main session. */
function renderModel(screen: Screen, m: ModelMsgEnvelope["payload"]): void {
  switch (m.type) {
    case "partial_text":
      screen.text(m.event_type, m.text);
      return;
    case "partial_thinking":
      screen.thinking(m.event_type, m.thinking);
      return;
    case "partial_tool_call":
      screen.toolCallFragment(m as PartialToolCall);
      return;
    case "partial_tool_call_output":
      screen.toolOutputFragment(m as PartialToolCallOutput);
      return;
    case "tool_call":
      screen.completeToolCall(m, undefined);
      return;
    case "text":
      if (m.role === "user") screen.userText(m.text);
      return;
    default:
      return;
  }
}

/** Draw an event of the main session. */
function renderEvent(
  msg: EventMsgEnvelope,
  screen: Screen,
  stats: Stats,
  autoApprovals: boolean,
  maybeSpin: () => void,
): void {
  const e = msg.payload;
  switch (e.type) {
    case "request_begin": {
      const retry = stats.retryToAnnounce("begin");
      if (retry) screen.notice(retry);
      maybeSpin();
      return;
    }
    case "approval_decision":
      if (e.decision === "allow" && !autoApprovals) return;
      screen.decision(e.tool_call_id, undefined, e.decision, false, e.reason);
      return;
    case "tool_list_ready":
      screen.toolList(e.tools);
      return;
    case "request_end": {
      // Counted by stats.seen; a planned retry is announced with its cause now.
      const retry = stats.retryToAnnounce("end");
      if (retry) screen.notice(retry);
      return;
    }
    case "subagent":
    case "token_usage":
      return; // counted by stats.seen
    default: {
      const line = stats.eventLine(msg);
      if (line !== null) screen.notice(line);
    }
  }
}

/** Draw what a subagent's message shows in the parent: its tool calls and their decisions. */
function nestedLine(msg: OmniMessage, screen: Screen, autoApprovals: boolean): void {
  if (msg.type === "model_msg" && msg.payload.type === "tool_call") {
    screen.completeToolCall(msg.payload, msg.origin);
  } else if (msg.type === "event_msg" && msg.payload.type === "approval_decision") {
    const e = msg.payload;
    if (e.decision === "allow" && !autoApprovals) return;
    screen.decision(e.tool_call_id, msg.origin, e.decision, false, e.reason);
  }
}

/**
 * A subagent's message that draws nothing ({@linkcode nestedLine}) and counts
 * nothing (its token usage counts): it need not queue behind the segment
 * holding the screen. Queued, every text delta and answer of subagents that
 * stream beside the one holding it stayed in memory until that one ended.
 */
function inert(msg: OmniMessage): boolean {
  if (!msg.origin || msg.origin.length === 0) return false;
  if (msg.type === "model_msg") return msg.payload.type !== "tool_call";
  if (msg.type === "event_msg") {
    return msg.payload.type !== "approval_decision" && msg.payload.type !== "token_usage";
  }
  return true;
}

/** The options of the history drawn when a session is resumed. */
function historyOptions(
  opts: RendererOptions,
  palette: ReturnType<typeof paletteFor>,
  collapse: boolean,
  numbers: ReturnType<typeof createCallNumbers>,
  screen: Screen,
): Parameters<typeof renderHistory>[1] {
  const markdown = opts.color ? opts.markdown : undefined;
  return {
    palette,
    collapse,
    toolPreviews: opts.toolPreviews,
    numbers,
    // A collapsed output of the history can be expanded as a live one can.
    fullOutputHint: (id) => screen.hintFor(id),
    onCollapsed: (o) => screen.keepCollapsed(o),
    ...(markdown
      ? {
        markdown: {
          columns: markdown.columns?.() ?? 80,
          ...(markdown.mask ? { mask: markdown.mask } : {}),
        },
      }
      : {}),
  };
}

/** The queueing state the renderer's steps share: open segments, pending approvals, spinner. */
interface RendererState {
  opts: RendererOptions;
  palette: ReturnType<typeof paletteFor>;
  collapse: boolean;
  spinner: Spinner | undefined;
  write: (text: string) => void;
  numbers: ReturnType<typeof createCallNumbers>;
  screen: Screen;
  stats: ReturnType<typeof createStats>;
  autoApprovals: boolean;
  pending: OmniMessage[];
  holder: string | null;
  prompting: boolean;
  paused: boolean;
  draining: boolean;
  taskActive: boolean;
}

const locked = (s: RendererState) => s.prompting || s.paused;

function maybeSpin(s: RendererState) {
  if (s.spinner && s.taskActive && !locked(s) && s.holder === null && !s.screen.midLine()) {
    s.spinner.start();
  }
}

function render(s: RendererState, msg: OmniMessage) {
  if (msg.type === "session_meta") return;
  s.stats.seen(msg);
  if (msg.origin && msg.origin.length > 0) {
    nestedLine(msg, s.screen, s.autoApprovals);
    return;
  }
  if (msg.type === "model_msg") {
    s.spinner?.stop(); // the first token ends the wait, even before anything is drawn
    renderModel(s.screen, msg.payload);
    return;
  }
  renderEvent(msg, s.screen, s.stats, s.autoApprovals, () => maybeSpin(s));
}

function drain(s: RendererState) {
  if (s.draining) return;
  s.draining = true;
  try {
    while (!locked(s) && s.pending.length > 0) {
      if (s.holder === null) {
        // First in, first out, until a segment takes the screen.
        let i = 0;
        while (i < s.pending.length && s.holder === null && !locked(s)) {
          const msg = s.pending[i++]!;
          const owner = ownerOf(msg);
          if (owner !== null && !isStop(msg)) s.holder = owner;
          render(s, msg);
        }
        s.pending = i === s.pending.length ? [] : s.pending.slice(i);
        continue;
      }
      const held = drainHeld(s.pending, s.holder, () => locked(s), (m) => render(s, m));
      s.holder = held.holder;
      s.pending = held.keep;
      if (!held.progressed) break;
    }
  } finally {
    s.draining = false;
  }
}

function flush(s: RendererState) {
  s.spinner?.stop();
  s.prompting = false;
  s.paused = false;
  s.holder = null;
  drain(s);
  s.screen.settleOutputs();
  s.screen.endLine();
}

/** Queue or draw one message (see `Renderer.push`). */
function push(s: RendererState, msg: OmniMessage) {
  if (inert(msg)) return render(s, msg);
  // Fast paths keep the cost per message constant. Invariant: while the
  // screen is unlocked, nothing queued belongs to the segment holding it.
  if (!locked(s) && !s.draining) {
    if (s.holder === null && s.pending.length === 0) {
      const owner = ownerOf(msg);
      if (owner !== null && !isStop(msg)) s.holder = owner;
      render(s, msg);
      return;
    }
    if (s.holder !== null && !(s.holder === "llm" && endsRequest(msg))) {
      if (ownerOf(msg) !== s.holder) {
        s.pending.push(msg);
        return;
      }
      if (!isStop(msg)) return render(s, msg);
      s.holder = null;
      render(s, msg);
      drain(s);
      return;
    }
  }
  s.pending.push(msg);
  drain(s);
}

/** The renderer's state, its screen and counters made. */
function rendererState(opts: RendererOptions): RendererState {
  const palette = paletteFor(opts.color);
  const now = opts.now ?? Date.now;
  const spinner: Spinner | undefined = spinnerOf(opts, palette, now);
  const write = (text: string) => {
    spinner?.stop();
    opts.write(text);
  };
  const markdown = opts.color ? opts.markdown : undefined;
  // One numbering per session: the history's calls first, then the live ones.
  const numbers = createCallNumbers();
  const s: RendererState = {
    opts,
    palette,
    collapse: opts.collapse,
    spinner,
    write,
    numbers,
    screen: createScreen({
      write,
      palette,
      numbers,
      collapse: () => s.collapse,
      toolPreviews: opts.toolPreviews,
      ...(opts.fullOutputHint !== undefined ? { fullOutputHint: opts.fullOutputHint } : {}),
      ...(markdown ? { markdown } : {}),
    }),
    stats: createStats(now, opts.stats),
    autoApprovals: opts.autoApprovals ?? true,
    pending: [],
    holder: null,
    prompting: false,
    paused: false,
    draining: false,
    taskActive: false,
  };
  return s;
}

/** Create a renderer. */
export function createRenderer(opts: RendererOptions): Renderer {
  const s = rendererState(opts);
  const { screen, stats } = s;
  return {
    push: (msg) => push(s, msg),
    beginTask() {
      s.taskActive = true;
      stats.beginTask();
      maybeSpin(s);
    },
    endTask() {
      flush(s);
      s.taskActive = false;
      const line = stats.endTask();
      if (line !== null) screen.notice(line);
      screen.endTask();
    },
    flush: () => flush(s),
    beginPrompt(toolCall, origin) {
      s.spinner?.stop();
      if (toolCall) screen.ensureCallLine(toolCall, origin);
      screen.endLine();
      s.prompting = true;
    },
    endPrompt(toolCall, decision, origin, reason) {
      if (toolCall && decision) {
        screen.decision(toolCall.tool_call_id, origin, decision, true, reason);
      }
      s.prompting = false;
      drain(s);
      maybeSpin(s);
    },
    pause() {
      s.spinner?.stop();
      screen.endLine();
      s.paused = true;
    },
    resume() {
      s.paused = false;
      drain(s);
      maybeSpin(s);
    },
    line(text, style = "dim") {
      s.spinner?.stop();
      if (style === "plain") screen.plain(text);
      else screen.notice(text);
    },
    setCollapse(on) {
      s.collapse = on;
    },
    history(messages) {
      screen.endLine();
      s.write(
        renderHistory(messages, historyOptions(opts, s.palette, s.collapse, s.numbers, screen)),
      );
      stats.seed(messages);
    },
    startSession(recorded) {
      s.numbers.reset();
      for (const id of recorded ?? []) s.numbers.of(id);
    },
    contextTokens: () => stats.context(),
    expand: (tag) => screen.expand(tag),
  };
}
