/**
 * The drawing half of the renderer: cursor-line bookkeeping, tool-call
 * previews, output gutters and collapsing, approval lines. It draws what it
 * is told, in the order told; queueing is the renderer's job. An output sits
 * under its call line behind a gutter (./_gutter.ts); the full text of a
 * collapsed output is kept (bounded) so it can be expanded afterwards.
 *
 * Everything that comes from the model or a tool (text, thinking, tool
 * names and arguments, outputs, notices carrying error messages) is made
 * terminal-safe here (lib/display/terminal_text.ts) before penguin adds its
 * own colours: streams through one sanitizer per stream, so an escape
 * sequence cut between two fragments is still recognized.
 *
 * @module
 */
import type {
  ApprovalDecision,
  PartialEventType,
  PartialToolCall,
  PartialToolCallOutput,
  ToolCallMessage,
  ToolSpec,
} from "../../protocol/types.ts";
import { approvalLabel, goalRoundLabel } from "../../display/labels.ts";
import { type CallNumbers, callNumberTag, parseCallNumber } from "../../display/call_numbers.ts";
import { paint, type Palette } from "../../display/palette.ts";
import { type Collapser, createCollapser, elidedLabel } from "../../display/collapse.ts";
import { goalRound, steeringBody, steeringLines } from "./history.ts";
import { GUTTER, gutterLine, isDiffTool } from "./_gutter.ts";
import {
  describeToolCall,
  toolCallPreview,
  type ToolPreviews,
} from "../../display/tool_preview.ts";
import {
  createMarkdownStream,
  type MarkdownStream,
  type MarkdownStreamOptions,
} from "./markdown.ts";
import {
  createSafeTextStream,
  escapeControls,
  safeText,
  type SafeTextStream,
} from "../../display/terminal_text.ts";

/** Options of {@linkcode createScreen}. */
export interface ScreenOptions {
  /** Raw output. */
  write(text: string): void;
  /** Colours. */
  palette: Palette;
  /** Whether outputs starting now are collapsed. */
  collapse(): boolean;
  /**
   * How the elision marker says to see everything (default `/verbose`);
   * `/expand` names the output's short id (`/expand #3`).
   */
  fullOutputHint?: string;
  /** Draw the model's text as Markdown (colour terminals only; default: raw). */
  markdown?: MarkdownStreamOptions;
  /** How the tools' calls show (the tools' own previews; others the generic form). */
  toolPreviews: ToolPreviews;
  /** The session's call numbers (shared with the history the renderer re-renders). */
  numbers: CallNumbers;
}

/** The drawing surface the renderer drives. */
export interface Screen {
  /** Cursor is not at the start of a line. */
  midLine(): boolean;
  /** End the current line (closing an open dim span). */
  endLine(): void;
  /** A `partial_text` fragment. */
  text(ev: PartialEventType, text: string): void;
  /** A `partial_thinking` fragment. */
  thinking(ev: PartialEventType, text: string): void;
  /** A main-session `partial_tool_call` fragment. */
  toolCallFragment(p: PartialToolCall): void;
  /** A main-session `partial_tool_call_output` fragment. */
  toolOutputFragment(p: PartialToolCallOutput): void;
  /** A complete tool call: drawn only when no line was drawn for it yet. */
  completeToolCall(m: ToolCallMessage, origin: readonly string[] | undefined): void;
  /** Draw the call line of `m` right here unless it is already the last line. */
  ensureCallLine(m: ToolCallMessage, origin: readonly string[] | undefined): void;
  /** An approval line; `inPlace` ones suppress the later event's line. */
  decision(
    id: string,
    origin: readonly string[] | undefined,
    d: ApprovalDecision,
    inPlace?: boolean,
    reason?: string,
  ): void;
  /** A main-session user text in the stream (steering, goal rounds). */
  userText(text: string): void;
  /** Learn which tools take a `description` argument. */
  toolList(tools: readonly ToolSpec[]): void;
  /** A dim notice line. */
  notice(text: string): void;
  /** A plain line. */
  plain(text: string): void;
  /** Print what collapsed outputs still hold (aborted streams). */
  settleOutputs(): void;
  /**
   * Print a collapsed output whole, under a header: the one whose short id
   * (`#3` or `3` of `[#3]`) is `tag`, else the latest; false when none is kept.
   */
  expand(tag?: string): boolean;
  /** Keep an output shown collapsed elsewhere (a resumed history) for {@linkcode Screen.expand}. */
  keepCollapsed(output: { id: string; label: string; text: string; diff: boolean }): void;
  /** The marker hint of call `id`'s collapsed output (`/verbose`, or `/expand #n`). */
  hintFor(id: string): string | undefined;
  /** Forget per-task bookkeeping. */
  endTask(): void;
}

interface PreviewState {
  name: string;
  args: string;
  shown: string;
  /** The preview shown cannot change before the arguments are final. */
  fixed: boolean;
  /** Argument length at the last preview computation (throttles long arguments). */
  computedAt: number;
}

/** Arguments longer than this are previewed again only after growing by a quarter. */
const THROTTLE_FROM = 4096;

const keyOf = (id: string, origin?: readonly string[]) => `${origin?.join("/") ?? ""}:${id}`;

/** Collapsed outputs kept whole for `/expand`, and the characters kept of each. */
const EXPANDABLE_KEPT = 50;
const EXPANDABLE_CHARS = 1 << 20;

/** A collapsed output kept whole. */
interface Expandable {
  id: string;
  label: string;
  text: string;
  cut: boolean;
  diff: boolean;
}

/** The drawing state shared by the steps below: cursor line, open previews, collapsers. */
interface ScreenState {
  opts: ScreenOptions;
  p: Palette;
  mid: boolean;
  dimOpen: boolean;
  thinkingOpen: boolean;
  callOpen: string | null;
  outOpen: string | null;
  lastCallKey: string | null;
  previews: Map<string, PreviewState>;
  names: Map<string, string>;
  drawn: Set<string>;
  ensured: Set<string>;
  decided: Set<string>;
  collapsers: Map<string, { c: Collapser; label: string; full: string; cut: boolean }>;
  expandable: Expandable[];
  /** The key of the call whose call line or output was drawn last (its output needs no header). */
  block: string | null;
  expectDesc: Map<string, boolean>;
  /** One sanitizer per live stream: `text`, `thinking`, `out:<id>`. */
  streams: Map<string, SafeTextStream>;
  /** The Markdown stream of the text segment being drawn, if any. */
  md: MarkdownStream | undefined;
  /** Colour of the output line being written (a diff line's), or "" for none. */
  lineCode: string;
}

function clean(s: ScreenState, key: string, chunk: string): string {
  let st = s.streams.get(key);
  if (!st) s.streams.set(key, st = createSafeTextStream());
  return st.push(chunk);
}

function cleanEnd(s: ScreenState, key: string): string {
  const st = s.streams.get(key);
  s.streams.delete(key);
  return st ? st.end() : "";
}

const setName = (s: ScreenState, key: string, name: string) =>
  s.names.set(key, escapeControls(name));

function mdWrite(s: ScreenState, text: string, stream: MarkdownStream) {
  if (text !== "") {
    s.opts.write(text);
    s.lastCallKey = null;
  }
  s.mid = stream.midLine();
}

function raw(s: ScreenState, text: string) {
  if (text === "") return;
  s.opts.write(text);
  s.mid = !text.endsWith("\n");
  s.lastCallKey = null;
  s.block = null;
}

function endLine(s: ScreenState) {
  if (s.md) {
    const stream = s.md;
    s.md = undefined;
    mdWrite(s, stream.end(), stream);
  }
  if (s.dimOpen) s.opts.write(s.p.reset);
  s.dimOpen = false;
  s.thinkingOpen = false;
  if (s.mid) {
    s.opts.write("\n");
    s.mid = false;
  }
  s.callOpen = null;
  s.outOpen = null;
}

function lineOf(s: ScreenState, text: string, code = "") {
  endLine(s);
  raw(s, paint(code, text, s.p));
  raw(s, "\n");
}

const fullPreview = (s: ScreenState, m: ToolCallMessage) =>
  toolCallPreview(m.name, m.arguments, { final: true, previews: s.opts.toolPreviews }) ?? m.name;

const tagOf = (s: ScreenState, id: string, origin?: readonly string[]) =>
  callNumberTag(s.opts.numbers.of(id, origin), origin);

function labelOf(s: ScreenState, id: string) {
  const name = s.names.get(keyOf(id));
  return name ? `${tagOf(s, id)} ${name}` : tagOf(s, id);
}

function drawCall(s: ScreenState, m: ToolCallMessage, origin: readonly string[] | undefined) {
  const key = keyOf(m.tool_call_id, origin);
  setName(s, key, m.name);
  lineOf(s, `${tagOf(s, m.tool_call_id, origin)} ${fullPreview(s, m)}`, s.p.cyan);
  s.drawn.add(key);
  s.lastCallKey = key;
  s.block = key;
}

/** Start a line of `id`'s output: its header first when its call line is not the block above. */
function outputLineStart(s: ScreenState, id: string, label: string) {
  endLine(s);
  const key = keyOf(id);
  if (s.block !== key) lineOf(s, `${label} ->`, s.p.dim);
  s.block = key;
}

/** A whole line of `id`'s output behind the gutter. */
function outputLine(s: ScreenState, id: string, label: string, line: string, diff: boolean) {
  outputLineStart(s, id, label);
  raw(s, `${gutterLine(line, s.p, diff)}\n`);
  s.block = keyOf(id);
}

const diffOf = (s: ScreenState, id: string) => isDiffTool(s.names.get(keyOf(id)));

function writeOut(s: ScreenState, id: string, label: string, chunk: string) {
  const p = s.p;
  const diff = diffOf(s, id);
  let i = 0;
  while (i < chunk.length) {
    if (s.outOpen !== id) {
      outputLineStart(s, id, label);
      raw(s, paint(p.dim, GUTTER, p));
      s.outOpen = id;
      const first = chunk[i];
      s.lineCode = !diff
        ? ""
        : chunk.startsWith("@@", i)
        ? p.cyan
        : first === "+"
        ? p.green
        : first === "-"
        ? p.red
        : "";
    }
    const nl = chunk.indexOf("\n", i);
    if (nl === -1) {
      raw(s, paint(s.lineCode, chunk.slice(i), p));
      s.block = keyOf(id);
      break;
    }
    raw(s, `${paint(s.lineCode, chunk.slice(i, nl), p)}\n`);
    s.block = keyOf(id);
    s.outOpen = null;
    i = nl + 1;
  }
}

function keep(s: ScreenState, e: Expandable) {
  s.expandable.push(e);
  if (s.expandable.length > EXPANDABLE_KEPT) s.expandable.shift();
}

const hintFor = (s: ScreenState, id: string) =>
  s.opts.fullOutputHint === "/expand" ? `/expand #${s.opts.numbers.of(id)}` : s.opts.fullOutputHint;

function settle(s: ScreenState, id: string) {
  const col = s.collapsers.get(id);
  if (!col) return;
  s.collapsers.delete(id);
  const tail = col.c.finish();
  if (tail.hidden > 0) {
    keep(s, { id, label: col.label, text: col.full, cut: col.cut, diff: diffOf(s, id) });
  }
  if (tail.hidden === 0 && tail.lines.length === 0) return;
  endLine(s);
  if (tail.hidden > 0) {
    outputLineStart(s, id, col.label);
    raw(s, `${paint(s.p.dim, `${GUTTER}${elidedLabel(tail.hidden, hintFor(s, id))}`, s.p)}\n`);
    s.block = keyOf(id);
  }
  for (const l of tail.lines) outputLine(s, id, col.label, l, diffOf(s, id));
}

/** Print a kept output whole (see `Screen.expand`). */
function expand(s: ScreenState, tag?: string): boolean {
  const n = tag === undefined ? undefined : parseCallNumber(tag);
  const e = tag === undefined
    ? s.expandable.at(-1)
    : s.expandable.findLast((x) => x.id === tag || s.opts.numbers.of(x.id) === n);
  if (!e) return false;
  endLine(s);
  lineOf(s, `${e.label} -> (full output)`, s.p.dim);
  const lines = e.text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  for (const l of lines) raw(s, `${gutterLine(l, s.p, e.diff)}\n`);
  if (e.cut) {
    lineOf(s, `${GUTTER}… (only the first ${EXPANDABLE_CHARS} characters are kept)`, s.p.dim);
  }
  return true;
}

/** A `partial_text` fragment (see `Screen.text`). */
function drawText(s: ScreenState, ev: PartialEventType, chunk: string) {
  if (ev === "start") s.streams.delete("text");
  const text = ev === "stop" ? cleanEnd(s, "text") : clean(s, "text", chunk);
  if (s.opts.markdown) {
    if (text !== "") {
      if (!s.md) {
        endLine(s);
        s.md = createMarkdownStream(s.opts.markdown);
      }
      mdWrite(s, s.md.push(text), s.md);
    }
    if (ev === "stop") endLine(s);
    return;
  }
  if (text !== "") {
    if (s.thinkingOpen || s.callOpen !== null || s.outOpen !== null) endLine(s);
    raw(s, text);
  }
  if (ev === "stop") endLine(s);
}

/** A `partial_thinking` fragment (see `Screen.thinking`). */
function drawThinking(s: ScreenState, ev: PartialEventType, chunk: string) {
  if (ev === "start") s.streams.delete("thinking");
  const text = ev === "stop" ? cleanEnd(s, "thinking") : clean(s, "thinking", chunk);
  if (text === "") {
    if (ev === "stop") endLine(s);
    return;
  }
  if (!s.thinkingOpen) {
    endLine(s);
    if (s.p.dim !== "") {
      s.opts.write(s.p.dim);
      s.dimOpen = true;
    }
    s.thinkingOpen = true;
  }
  raw(s, text);
  if (ev === "stop") endLine(s);
}

/** A main-session `partial_tool_call` fragment (see `Screen.toolCallFragment`). */
function drawToolCallFragment(s: ScreenState, f: PartialToolCall) {
  const p = s.p;
  const id = f.tool_call_id;
  const key = keyOf(id);
  const stop = f.event_type === "stop";
  if (s.ensured.has(key)) {
    if (stop) s.previews.delete(id);
    return;
  }
  let st = s.previews.get(id);
  if (!st) {
    if (stop) return;
    st = { name: f.name, args: "", shown: "", fixed: false, computedAt: 0 };
    s.previews.set(id, st);
  }
  if (f.name) st.name = f.name;
  if (st.name) setName(s, key, st.name);
  st.args += f.arguments;
  const skip = !stop && (
    (st.shown !== "" && (st.fixed || st.shown.endsWith("…"))) ||
    (st.args.length > THROTTLE_FROM && st.args.length < st.computedAt * 1.25)
  );
  if (skip) return;
  st.computedAt = st.args.length;
  const described = describeToolCall(st.name, st.args, {
    final: stop,
    previews: s.opts.toolPreviews,
    ...(s.expectDesc.has(st.name) ? { expectDescription: s.expectDesc.get(st.name)! } : {}),
  });
  if (described !== null && described.text !== st.shown) {
    const preview = described.text;
    st.fixed = described.fixed;
    if (s.callOpen === id && st.shown !== "" && preview.startsWith(st.shown)) {
      raw(s, paint(p.cyan, preview.slice(st.shown.length), p));
    } else {
      endLine(s);
      raw(s, paint(p.cyan, `${tagOf(s, id)} ${preview}`, p));
      s.callOpen = id;
    }
    s.block = key;
    st.shown = preview;
  }
  if (stop) {
    if (s.callOpen === id) endLine(s);
    if (st.shown !== "") {
      s.drawn.add(key);
      s.lastCallKey = key;
    }
    s.previews.delete(id);
  }
}

/** A main-session `partial_tool_call_output` fragment (see `Screen.toolOutputFragment`). */
function drawToolOutputFragment(s: ScreenState, f: PartialToolCallOutput) {
  const id = f.tool_call_id;
  const label = labelOf(s, id);
  if (!s.collapsers.has(id) && f.event_type !== "stop" && s.opts.collapse()) {
    s.collapsers.set(id, { c: createCollapser(), label, full: "", cut: false });
  }
  const stream = `out:${id}`;
  if (f.event_type === "start") s.streams.delete(stream);
  const output = (f.output ? clean(s, stream, f.output) : "") +
    (f.event_type === "stop" ? cleanEnd(s, stream) : "");
  if (output) {
    const col = s.collapsers.get(id);
    if (col && !col.cut) {
      col.full += output;
      if (col.full.length > EXPANDABLE_CHARS) {
        col.full = col.full.slice(0, EXPANDABLE_CHARS);
        col.cut = true;
      }
    }
    writeOut(s, id, label, col ? col.c.push(output) : output);
  }
  for (const _ of f.images ?? []) outputLine(s, id, label, paint(s.p.dim, "[image]", s.p), false);
  if (f.event_type === "stop") {
    settle(s, id);
    if (s.outOpen === id) endLine(s);
  }
}

/** Draw the call line of `m` unless it is already the last line (see `Screen.ensureCallLine`). */
function ensureCallLine(s: ScreenState, m: ToolCallMessage, origin: readonly string[] | undefined) {
  const key = keyOf(m.tool_call_id, origin);
  s.ensured.add(key);
  if (s.lastCallKey === key) return;
  const st = origin ? undefined : s.previews.get(m.tool_call_id);
  const full = fullPreview(s, m);
  if (st && s.callOpen === m.tool_call_id && full.startsWith(st.shown) && st.shown !== "") {
    raw(s, paint(s.p.cyan, full.slice(st.shown.length), s.p));
    endLine(s);
    s.drawn.add(key);
    s.lastCallKey = key;
    s.block = key;
    return;
  }
  drawCall(s, m, origin);
}

/** A main-session user text in the stream (see `Screen.userText`). */
function drawUserText(s: ScreenState, text: string) {
  const steer = steeringBody(text);
  if (steer !== null) {
    endLine(s);
    raw(s, steeringLines(steer, s.p));
    return;
  }
  const round = goalRound(text);
  if (round !== null) lineOf(s, goalRoundLabel(round), s.p.dim);
}

/** Create a screen. */
export function createScreen(opts: ScreenOptions): Screen {
  const s: ScreenState = {
    opts,
    p: opts.palette,
    mid: false,
    dimOpen: false,
    thinkingOpen: false,
    callOpen: null,
    outOpen: null,
    lastCallKey: null,
    previews: new Map(),
    names: new Map(),
    drawn: new Set(),
    ensured: new Set(),
    decided: new Set(),
    collapsers: new Map(),
    expandable: [],
    block: null,
    expectDesc: new Map(),
    streams: new Map(),
    md: undefined,
    lineCode: "",
  };
  return {
    midLine: () => s.mid,
    endLine: () => endLine(s),
    text: (ev, chunk) => drawText(s, ev, chunk),
    thinking: (ev, chunk) => drawThinking(s, ev, chunk),
    toolCallFragment: (f) => drawToolCallFragment(s, f),
    toolOutputFragment: (f) => drawToolOutputFragment(s, f),
    completeToolCall(m, origin) {
      const key = keyOf(m.tool_call_id, origin);
      setName(s, key, m.name);
      if (s.drawn.has(key) || s.ensured.has(key)) return;
      if (!origin && s.previews.has(m.tool_call_id)) return;
      drawCall(s, m, origin);
    },
    ensureCallLine: (m, origin) => ensureCallLine(s, m, origin),
    decision(id, origin, d, inPlace = false, reason) {
      const key = keyOf(id, origin);
      if (inPlace) s.decided.add(key);
      else if (s.decided.delete(key)) return;
      // The decision belongs to the call above: its output still needs no header.
      const above = s.block;
      lineOf(s, approvalLabel(d, reason), d === "allow" ? s.p.green : s.p.red);
      s.block = above;
    },
    userText: (text) => drawUserText(s, text),
    toolList(tools) {
      for (const t of tools) {
        const props = (t.parameters as { properties?: Record<string, unknown> } | undefined)
          ?.properties;
        s.expectDesc.set(t.name, props !== undefined && "description" in props);
      }
    },
    notice: (text) => lineOf(s, safeText(text), s.p.dim),
    plain: (text) => lineOf(s, safeText(text)),
    settleOutputs() {
      for (const id of [...s.collapsers.keys()]) settle(s, id);
    },
    expand: (tag) => expand(s, tag),
    keepCollapsed({ id, label, text, diff }) {
      const cut = text.length > EXPANDABLE_CHARS;
      keep(s, { id, label, text: cut ? text.slice(0, EXPANDABLE_CHARS) : text, cut, diff });
    },
    hintFor: (id) => hintFor(s, id),
    endTask() {
      s.streams.clear();
      s.previews.clear();
      s.names.clear();
      s.drawn.clear();
      s.ensured.clear();
      s.decided.clear();
    },
  };
}
