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

/** Create a screen. */
export function createScreen(opts: ScreenOptions): Screen {
  // Long by design: one closure-based object whose methods share the drawing state
  // (cursor line, open previews, collapsers); each method is short.
  const p = opts.palette;
  let mid = false;
  let dimOpen = false;
  let thinkingOpen = false;
  let callOpen: string | null = null;
  let outOpen: string | null = null;
  let lastCallKey: string | null = null;
  const previews = new Map<string, PreviewState>();
  const names = new Map<string, string>();
  const drawn = new Set<string>();
  const ensured = new Set<string>();
  const decided = new Set<string>();
  const collapsers = new Map<string, { c: Collapser; label: string; full: string; cut: boolean }>();
  const expandable: Expandable[] = [];
  /** The key of the call whose call line or output was drawn last (its output needs no header). */
  let block: string | null = null;
  const expectDesc = new Map<string, boolean>();
  /** One sanitizer per live stream: `text`, `thinking`, `out:<id>`. */
  const streams = new Map<string, SafeTextStream>();
  const clean = (key: string, chunk: string): string => {
    let s = streams.get(key);
    if (!s) streams.set(key, s = createSafeTextStream());
    return s.push(chunk);
  };
  const cleanEnd = (key: string): string => {
    const s = streams.get(key);
    streams.delete(key);
    return s ? s.end() : "";
  };
  const setName = (key: string, name: string) => names.set(key, escapeControls(name));
  /** The Markdown stream of the text segment being drawn, if any. */
  let md: MarkdownStream | undefined;
  const mdWrite = (text: string, stream: MarkdownStream) => {
    if (text !== "") {
      opts.write(text);
      lastCallKey = null;
    }
    mid = stream.midLine();
  };

  const raw = (text: string) => {
    if (text === "") return;
    opts.write(text);
    mid = !text.endsWith("\n");
    lastCallKey = null;
    block = null;
  };
  const endLine = () => {
    if (md) {
      const stream = md;
      md = undefined;
      mdWrite(stream.end(), stream);
    }
    if (dimOpen) opts.write(p.reset);
    dimOpen = false;
    thinkingOpen = false;
    if (mid) {
      opts.write("\n");
      mid = false;
    }
    callOpen = null;
    outOpen = null;
  };
  const lineOf = (text: string, code = "") => {
    endLine();
    raw(paint(code, text, p));
    raw("\n");
  };
  const fullPreview = (m: ToolCallMessage) =>
    toolCallPreview(m.name, m.arguments, { final: true, previews: opts.toolPreviews }) ?? m.name;
  const tagOf = (id: string, origin?: readonly string[]) =>
    callNumberTag(opts.numbers.of(id, origin), origin);
  const labelOf = (id: string) => {
    const name = names.get(keyOf(id));
    return name ? `${tagOf(id)} ${name}` : tagOf(id);
  };

  const drawCall = (m: ToolCallMessage, origin: readonly string[] | undefined) => {
    const key = keyOf(m.tool_call_id, origin);
    setName(key, m.name);
    lineOf(`${tagOf(m.tool_call_id, origin)} ${fullPreview(m)}`, p.cyan);
    drawn.add(key);
    lastCallKey = key;
    block = key;
  };
  /** Start a line of `id`'s output: its header first when its call line is not the block above. */
  const outputLineStart = (id: string, label: string) => {
    endLine();
    const key = keyOf(id);
    if (block !== key) lineOf(`${label} ->`, p.dim);
    block = key;
  };
  /** A whole line of `id`'s output behind the gutter. */
  const outputLine = (id: string, label: string, line: string, diff: boolean) => {
    outputLineStart(id, label);
    raw(`${gutterLine(line, p, diff)}\n`);
    block = keyOf(id);
  };
  const diffOf = (id: string) => isDiffTool(names.get(keyOf(id)));

  /** Colour of the output line being written (a diff line's), or "" for none. */
  let lineCode = "";
  const writeOut = (id: string, label: string, chunk: string) => {
    const diff = diffOf(id);
    let i = 0;
    while (i < chunk.length) {
      if (outOpen !== id) {
        outputLineStart(id, label);
        raw(paint(p.dim, GUTTER, p));
        outOpen = id;
        const first = chunk[i];
        lineCode = !diff
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
        raw(paint(lineCode, chunk.slice(i), p));
        block = keyOf(id);
        break;
      }
      raw(`${paint(lineCode, chunk.slice(i, nl), p)}\n`);
      block = keyOf(id);
      outOpen = null;
      i = nl + 1;
    }
  };

  const keep = (e: Expandable) => {
    expandable.push(e);
    if (expandable.length > EXPANDABLE_KEPT) expandable.shift();
  };
  const hintFor = (id: string) =>
    opts.fullOutputHint === "/expand" ? `/expand #${opts.numbers.of(id)}` : opts.fullOutputHint;

  const settle = (id: string) => {
    const col = collapsers.get(id);
    if (!col) return;
    collapsers.delete(id);
    const tail = col.c.finish();
    if (tail.hidden > 0) {
      keep({ id, label: col.label, text: col.full, cut: col.cut, diff: diffOf(id) });
    }
    if (tail.hidden === 0 && tail.lines.length === 0) return;
    endLine();
    if (tail.hidden > 0) {
      outputLineStart(id, col.label);
      raw(`${paint(p.dim, `${GUTTER}${elidedLabel(tail.hidden, hintFor(id))}`, p)}\n`);
      block = keyOf(id);
    }
    for (const l of tail.lines) outputLine(id, col.label, l, diffOf(id));
  };

  /** Print a kept output whole (see `Screen.expand`). */
  const expand = (tag?: string): boolean => {
    const n = tag === undefined ? undefined : parseCallNumber(tag);
    const e = tag === undefined
      ? expandable.at(-1)
      : expandable.findLast((x) => x.id === tag || opts.numbers.of(x.id) === n);
    if (!e) return false;
    endLine();
    lineOf(`${e.label} -> (full output)`, p.dim);
    const lines = e.text.split("\n");
    if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
    for (const l of lines) raw(`${gutterLine(l, p, e.diff)}\n`);
    if (e.cut) lineOf(`${GUTTER}… (only the first ${EXPANDABLE_CHARS} characters are kept)`, p.dim);
    return true;
  };

  return {
    midLine: () => mid,
    endLine,
    text(ev, chunk) {
      if (ev === "start") streams.delete("text");
      const text = ev === "stop" ? cleanEnd("text") : clean("text", chunk);
      if (opts.markdown) {
        if (text !== "") {
          if (!md) {
            endLine();
            md = createMarkdownStream(opts.markdown);
          }
          mdWrite(md.push(text), md);
        }
        if (ev === "stop") endLine();
        return;
      }
      if (text !== "") {
        if (thinkingOpen || callOpen !== null || outOpen !== null) endLine();
        raw(text);
      }
      if (ev === "stop") endLine();
    },
    thinking(ev, chunk) {
      if (ev === "start") streams.delete("thinking");
      const text = ev === "stop" ? cleanEnd("thinking") : clean("thinking", chunk);
      if (text === "") {
        if (ev === "stop") endLine();
        return;
      }
      if (!thinkingOpen) {
        endLine();
        if (p.dim !== "") {
          opts.write(p.dim);
          dimOpen = true;
        }
        thinkingOpen = true;
      }
      raw(text);
      if (ev === "stop") endLine();
    },
    toolCallFragment(f) {
      const id = f.tool_call_id;
      const key = keyOf(id);
      const stop = f.event_type === "stop";
      if (ensured.has(key)) {
        if (stop) previews.delete(id);
        return;
      }
      let st = previews.get(id);
      if (!st) {
        if (stop) return;
        st = { name: f.name, args: "", shown: "", fixed: false, computedAt: 0 };
        previews.set(id, st);
      }
      if (f.name) st.name = f.name;
      if (st.name) setName(key, st.name);
      st.args += f.arguments;
      const skip = !stop && (
        (st.shown !== "" && (st.fixed || st.shown.endsWith("…"))) ||
        (st.args.length > THROTTLE_FROM && st.args.length < st.computedAt * 1.25)
      );
      if (skip) return;
      st.computedAt = st.args.length;
      const described = describeToolCall(st.name, st.args, {
        final: stop,
        previews: opts.toolPreviews,
        ...(expectDesc.has(st.name) ? { expectDescription: expectDesc.get(st.name)! } : {}),
      });
      if (described !== null && described.text !== st.shown) {
        const preview = described.text;
        st.fixed = described.fixed;
        if (callOpen === id && st.shown !== "" && preview.startsWith(st.shown)) {
          raw(paint(p.cyan, preview.slice(st.shown.length), p));
        } else {
          endLine();
          raw(paint(p.cyan, `${tagOf(id)} ${preview}`, p));
          callOpen = id;
        }
        block = key;
        st.shown = preview;
      }
      if (stop) {
        if (callOpen === id) endLine();
        if (st.shown !== "") {
          drawn.add(key);
          lastCallKey = key;
        }
        previews.delete(id);
      }
    },
    toolOutputFragment(f) {
      const id = f.tool_call_id;
      const label = labelOf(id);
      if (!collapsers.has(id) && f.event_type !== "stop" && opts.collapse()) {
        collapsers.set(id, { c: createCollapser(), label, full: "", cut: false });
      }
      const stream = `out:${id}`;
      if (f.event_type === "start") streams.delete(stream);
      const output = (f.output ? clean(stream, f.output) : "") +
        (f.event_type === "stop" ? cleanEnd(stream) : "");
      if (output) {
        const col = collapsers.get(id);
        if (col && !col.cut) {
          col.full += output;
          if (col.full.length > EXPANDABLE_CHARS) {
            col.full = col.full.slice(0, EXPANDABLE_CHARS);
            col.cut = true;
          }
        }
        writeOut(id, label, col ? col.c.push(output) : output);
      }
      for (const _ of f.images ?? []) outputLine(id, label, paint(p.dim, "[image]", p), false);
      if (f.event_type === "stop") {
        settle(id);
        if (outOpen === id) endLine();
      }
    },
    completeToolCall(m, origin) {
      const key = keyOf(m.tool_call_id, origin);
      setName(key, m.name);
      if (drawn.has(key) || ensured.has(key)) return;
      if (!origin && previews.has(m.tool_call_id)) return;
      drawCall(m, origin);
    },
    ensureCallLine(m, origin) {
      const key = keyOf(m.tool_call_id, origin);
      ensured.add(key);
      if (lastCallKey === key) return;
      const st = origin ? undefined : previews.get(m.tool_call_id);
      const full = fullPreview(m);
      if (st && callOpen === m.tool_call_id && full.startsWith(st.shown) && st.shown !== "") {
        raw(paint(p.cyan, full.slice(st.shown.length), p));
        endLine();
        drawn.add(key);
        lastCallKey = key;
        block = key;
        return;
      }
      drawCall(m, origin);
    },
    decision(id, origin, d, inPlace = false, reason) {
      const key = keyOf(id, origin);
      if (inPlace) decided.add(key);
      else if (decided.delete(key)) return;
      // The decision belongs to the call above: its output still needs no header.
      const above = block;
      lineOf(approvalLabel(d, reason), d === "allow" ? p.green : p.red);
      block = above;
    },
    userText(text) {
      const steer = steeringBody(text);
      if (steer !== null) {
        endLine();
        raw(steeringLines(steer, p));
        return;
      }
      const round = goalRound(text);
      if (round !== null) lineOf(goalRoundLabel(round), p.dim);
    },
    toolList(tools) {
      for (const t of tools) {
        const props = (t.parameters as { properties?: Record<string, unknown> } | undefined)
          ?.properties;
        expectDesc.set(t.name, props !== undefined && "description" in props);
      }
    },
    notice: (text) => lineOf(safeText(text), p.dim),
    plain: (text) => lineOf(safeText(text)),
    settleOutputs() {
      for (const id of [...collapsers.keys()]) settle(id);
    },
    expand,
    keepCollapsed({ id, label, text, diff }) {
      const cut = text.length > EXPANDABLE_CHARS;
      keep({ id, label, text: cut ? text.slice(0, EXPANDABLE_CHARS) : text, cut, diff });
    },
    hintFor,
    endTask() {
      streams.clear();
      previews.clear();
      names.clear();
      drawn.clear();
      ensured.clear();
      decided.clear();
    },
  };
}
