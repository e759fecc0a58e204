/**
 * Plain-text renderings of session data for the `penguin sessions …`
 * commands: the listing table, the numbered outline and the tree.
 *
 * @module
 */
import { formatTokens } from "../display/numbers.ts";
import type { SessionSummary } from "./list.ts";
import { importOrigin } from "./import_origin.ts";
import type { OutlineItem, SessionOutline } from "./outline.ts";
import type { TreeNode } from "./tree.ts";

/** Token counts in the one short form (lib/display/numbers.ts), `-` when unknown. */
export function shortCount(n: number | null): string {
  return n === null ? "-" : formatTokens(n);
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** An ISO timestamp as local `YYYY-MM-DD HH:MM`; `-` when absent or unparseable. */
export function localTime(iso: string | null, seconds = false): string {
  if (iso === null) return "-";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "-";
  const s = seconds ? `:${pad(d.getSeconds())}` : "";
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${
    pad(d.getMinutes())
  }${s}`;
}

// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/g;

/**
 * `text` on one line (whitespace runs and control characters made one space), cut to `max`
 * characters with `…`. A control character separates what is on either side of it, as the
 * masker counts it: dropped, it joined pieces of a secret too short to mask each, and the view
 * showed the whole value (attack round 25 secrets B5).
 */
export function flatLine(text: string, max: number): string {
  const flat = text.replace(CONTROL, " ").replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : flat.slice(0, Math.max(0, max - 1)) + "…";
}

function shortPath(p: string | null, max: number): string {
  if (p === null) return "-";
  return p.length <= max ? p : "…" + p.slice(p.length - max + 1);
}

function promptLabel(s: SessionSummary, max = 48): string {
  let label = s.firstPrompt === null ? "-" : flatLine(s.firstPrompt, max);
  if (s.lineage) {
    label = `(${s.lineage.kind} of …${s.lineage.parent_session_id.slice(-8)}) ${label}`;
  } else if (s.source) label = `(${s.source}) ${label}`;
  return label;
}

/** `text` cut to `max` characters with `…` (its characters kept for the caller's escaping). */
function cut(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max - 1) + "…";
}

/** How long ago `iso` was, in one short unit (`<1m`, `5m`, `3h`, `2d`, `6w`); `-` when unknown. */
export function ageOf(iso: string | null, now = Date.now()): string {
  const t = iso === null ? NaN : new Date(iso).getTime();
  if (Number.isNaN(t)) return "-";
  const min = Math.max(0, Math.floor((now - t) / 60_000));
  if (min < 1) return "<1m";
  if (min < 60) return `${min}m`;
  if (min < 48 * 60) return `${Math.floor(min / 60)}h`;
  const days = Math.floor(min / (24 * 60));
  return days < 14 ? `${days}d` : `${Math.floor(days / 7)}w`;
}

/** One column of the listing: its heading, how a row's cell reads, and its width (set once known). */
interface Column {
  head: string;
  cell: (s: SessionSummary) => string;
  width?: number;
}

/** The width of `c`: its longest cell or heading (measured once, over every row). */
function columnWidth(c: Column, rows: readonly SessionSummary[]): number {
  if (c.width === undefined) {
    let w = c.head.length;
    for (const r of rows) w = Math.max(w, c.cell(r).length);
    c.width = w;
  }
  return c.width;
}

/** The width of `cols` laid out side by side, two spaces apart, plus the two before the next. */
function widthOf(cols: readonly Column[], rows: readonly SessionSummary[]): number {
  return cols.reduce((w, c) => w + columnWidth(c, rows) + 2, 0);
}

const MIN_PROMPT = 20;

/** Rows of a listing written in one part at most (see {@linkcode sessionListParts}). */
const PART_ROWS = 1000;

/**
 * The `sessions list` table (an AGENT column when `withAgent`). With
 * `width` (a terminal's columns) the table fits it: the first prompt is cut
 * to the room left, and while that is under 20 columns, CREATED goes, LAST
 * ACTIVITY becomes an AGE, the model and the workspace are shortened, then
 * the workspace goes.
 */
export function formatSessionList(
  rows: SessionSummary[],
  withAgent = false,
  width?: number,
  now = Date.now(),
): string {
  return [...sessionListParts(rows, withAgent, width, now)].join("");
}

/**
 * {@linkcode formatSessionList} in parts of whole lines, to be written one
 * after the other: the table of 60,000 sessions is never held as one text.
 * Only the columns of the layout chosen are measured, and no cell is kept:
 * each is made again as its line is written.
 */
export function* sessionListParts(
  rows: SessionSummary[],
  withAgent = false,
  width?: number,
  now = Date.now(),
): Generator<string> {
  if (rows.length === 0) {
    yield "No sessions.\n";
    return;
  }
  const col = (head: string, cell: (s: SessionSummary) => string): Column => ({ head, cell });
  const model = (max: number) => (s: SessionSummary) =>
    s.provider && s.modelId ? cut(max < 40 ? s.modelId : `${s.provider}/${s.modelId}`, max) : "-";
  const id = col("ID", (s) => s.sessionId);
  const agent = withAgent ? [col("AGENT", (s) => s.agentId)] : [];
  const created = col("CREATED", (s) => localTime(s.created));
  const last = col("LAST ACTIVITY", (s) => localTime(s.lastActivity));
  const age = col("AGE", (s) => ageOf(s.lastActivity, now));
  const turns = col("TURNS", (s) => (s.turns === null ? "?" : String(s.turns)));
  const tokens = col("TOKENS", (s) => shortCount(s.tokens));
  const ws = (max: number) => col("WORKSPACE", (s) => shortPath(s.workspace, max));
  const wide = col("MODEL", model(99));
  const ws40 = ws(40);
  const layouts: Column[][] = [
    [id, ...agent, created, last, wide, ws40, turns, tokens],
    [id, ...agent, age, wide, ws40, turns, tokens],
    [id, ...agent, age, col("MODEL", model(20)), ws(24), turns, tokens],
    [id, ...agent, age, col("MODEL", model(16)), turns, tokens],
  ];
  let cols = layouts[0]!;
  let promptMax = 48;
  if (width !== undefined) {
    // One column spare: a line as wide as the terminal wraps on some of them.
    const room = (c: Column[]) => width - 1 - widthOf(c, rows);
    cols = layouts.find((c) => room(c) >= MIN_PROMPT) ?? layouts[layouts.length - 1]!;
    promptMax = Math.max(MIN_PROMPT, room(cols));
  }
  const all = [...cols, col("FIRST PROMPT", (s) => flatLine(promptLabel(s, promptMax), promptMax))];
  const widths = all.map((c) => columnWidth(c, rows));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  let part = line(all.map((c) => c.head)) + "\n";
  for (let i = 0; i < rows.length; i++) {
    part += line(all.map((c) => c.cell(rows[i]!))) + "\n";
    if ((i + 1) % PART_ROWS === 0) {
      yield part;
      part = "";
    }
  }
  yield part + `${rows.length} session(s)\n`;
}

function itemLine(it: OutlineItem, width: number): string | null {
  const mark = it.status && it.status !== "completed" ? ` [${it.status}]` : "";
  switch (it.kind) {
    case "prompt":
      return `[${it.n}] user: ${flatLine(it.text, width)}`;
    case "user":
      return `    ${it.sender ?? "user"}: ${flatLine(it.text, width)}`;
    case "summary":
      return `    summary: ${flatLine(it.text, width)}`;
    case "assistant":
      return `    assistant${mark}: ${flatLine(it.text, width)}`;
    case "thinking":
      return `    thinking: ${flatLine(it.text, width)}`;
    case "tool_call":
      return `    -> ${it.name}${mark} ${flatLine(it.text, width)}`;
    case "tool_output":
      return `    <- ${it.name ?? it.toolCallId}${mark}: ${
        flatLine(it.text, width)
      } (${it.chars} chars)`;
    case "media":
      return `    ${flatLine(it.text, width)}`;
    case "event":
      switch (it.event) {
        case "request_end":
          return it.status === "completed"
            ? null
            : `    ! request ${it.status}${it.text ? `: ${flatLine(it.text, width)}` : ""}`;
        case "abort":
          return `    ! abort${it.text ? `: ${flatLine(it.text, width)}` : ""}`;
        case "compaction_begin":
          return `    ~ compaction (${it.text})`;
        case "compaction_end":
          return `    ~ compaction ${it.status}${it.text ? `: ${flatLine(it.text, width)}` : ""}`;
        case "subagent":
          return `    subagent session ${it.text}`;
      }
  }
  return null;
}

/** The `sessions show` text: a header, then the numbered prompts with what followed each. */
export function formatOutline(o: SessionOutline, width = 100): string {
  const m = o.meta;
  const latest = o.files[o.files.length - 1];
  const lines = [
    `Session ${o.sessionId}`,
    `  model      ${m ? `${m.provider}/${m.model_id}` : "-"}`,
    `  workspace  ${m?.workspace ?? "-"}`,
    `  created    ${localTime(o.created, true)}   last activity ${localTime(o.lastActivity, true)}`,
    `  files      ${o.files.length}${latest ? ` (latest ${latest.path})` : ""}`,
    `  turns      ${o.turns}   tokens ${
      shortCount(o.tokens?.total ?? null)
    }   user messages ${o.prompts}`,
  ];
  if (m?.source) lines.push(`  source     ${m.source}`);
  const lin = m?.lineage as {
    kind: string;
    parent_session_id: string;
    trace_index: number;
    line: number;
  } | undefined;
  if (lin) {
    lines.push(
      `  lineage    ${lin.kind} of ${lin.parent_session_id} (file ${lin.trace_index}, line ${lin.line})`,
    );
  }
  const origin = importOrigin(m?.imported_from);
  if (origin !== null) lines.push(`  imported   from ${origin}`);
  if (o.problems.length > 0) lines.push(`  skipped    ${o.problems.length} damaged line(s)`);
  lines.push("");
  if (o.itemsLeftOut > 0) {
    lines.push(`  (${o.itemsLeftOut} earlier entries not shown: the last ${o.items.length} are)`);
  }
  let file = o.items[0]?.file ?? o.files[0]?.index ?? 1;
  for (const it of o.items) {
    if (it.file !== file) {
      file = it.file;
      lines.push(`  --- context continues in file _${String(file).padStart(3, "0")} ---`);
    }
    const l = itemLine(it, width);
    if (l !== null) lines.push(l);
  }
  return lines.join("\n") + "\n";
}

function nodeLabel(n: TreeNode): string {
  const s = n.summary;
  const rel = n.relation === "root" ? "" : `[${n.relation}] `;
  if (!s) return `${rel}${n.sessionId} (not on disk)`;
  const prompt = s.firstPrompt === null ? "" : `  ${flatLine(s.firstPrompt, 48)}`;
  return `${rel}${n.sessionId}  ${localTime(s.created)}${prompt}`;
}

/** The `sessions tree` text. */
export function formatTree(forest: TreeNode[]): string {
  return [...treeParts(forest)].join("");
}

/** {@linkcode formatTree} in parts of whole lines (at most {@linkcode PART_ROWS} each), to be written one after the other. */
export function* treeParts(forest: TreeNode[]): Generator<string> {
  if (forest.length === 0) {
    yield "No sessions.\n";
    return;
  }
  let part = "";
  let lines = 0;
  // Depth first without recursion: a fork chain thousands deep is a tree too.
  const stack: { n: TreeNode; prefix: string; last: boolean; top: boolean }[] = [];
  for (let i = forest.length - 1; i >= 0; i--) {
    stack.push({ n: forest[i]!, prefix: "", last: true, top: true });
  }
  while (stack.length > 0) {
    const { n, prefix, last, top } = stack.pop()!;
    part += (top ? nodeLabel(n) : `${prefix}${last ? "└─ " : "├─ "}${nodeLabel(n)}`) + "\n";
    if (++lines % PART_ROWS === 0) {
      yield part;
      part = "";
    }
    const next = top ? "" : prefix + (last ? "   " : "│  ");
    for (let i = n.children.length - 1; i >= 0; i--) {
      stack.push({
        n: n.children[i]!,
        prefix: next,
        last: i === n.children.length - 1,
        top: false,
      });
    }
  }
  if (part !== "") yield part;
}
