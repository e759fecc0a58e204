/**
 * A small raw-mode line editor: a pure state machine fed decoded terminal
 * input, plus the layout math that redraws a (possibly multi-line) input
 * area. No I/O here; `penguin chat` drives it.
 *
 * Keys: printable text inserts; Enter submits (a line ending in `\`
 * continues instead: the backslash becomes a newline); Alt-Enter and Ctrl-J
 * insert a newline; Backspace, Delete (`ESC [3~`), Ctrl-U (clear), Ctrl-W
 * (delete word), Left/Right, Home/End, Ctrl-A/Ctrl-E; Up/Down move between
 * lines of the input and, from its first or last line, through the history.
 * Ctrl-C, Escape and Ctrl-D (on an empty buffer) are reported as events.
 * Tab completes through the `complete` function when it offers a
 * completion of the text before the cursor (at the end), else inserts a tab.
 * Bracketed paste (`ESC [200~ … ESC [201~`) inserts its text verbatim,
 * newlines included, so a multi-line paste is one message.
 *
 * Escape parsing: only CSI (`ESC [` … final byte) and SS3 (`ESC O` + one
 * byte) sequences are consumed whole. A lone ESC followed by any other key
 * is Escape and then that key, so no keystroke is ever swallowed; an ESC at
 * the end of a read is Escape at once.
 *
 * @module
 */

/** What a chunk of input produced, in order. */
export type EditorEvent =
  | { type: "submit"; text: string }
  | { type: "interrupt" }
  | { type: "escape" }
  | { type: "eof" };

/** The editor. */
export interface LineEditor {
  /** Feed decoded input; returns the events it completed. The buffer may have changed. */
  feed(chunk: string): EditorEvent[];
  /** Current text (may contain `\n`). */
  text(): string;
  /** Cursor offset into {@linkcode LineEditor.text}. */
  cursor(): number;
  /** Empty the buffer. */
  clear(): void;
  /** Replace the buffer, cursor at the end. */
  set(text: string): void;
  /** Add a submitted message to the history (blank ones and repeats of the last are skipped). */
  remember(text: string): void;
  /** The history, oldest first. */
  history(): readonly string[];
}

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

/** The editor's text and cursor offset. */
interface EditorText {
  buf: string;
  cur: number;
}

function insertText(ed: EditorText, s: string): void {
  ed.buf = ed.buf.slice(0, ed.cur) + s + ed.buf.slice(ed.cur);
  ed.cur += s.length;
}

/** Offset of the start of the line holding `from`. */
function lineStartOf(ed: EditorText, from: number): number {
  return ed.buf.lastIndexOf("\n", from - 1) + 1;
}

/** Offset of the end of the line holding `from`. */
function lineEndOf(ed: EditorText, from: number): number {
  const i = ed.buf.indexOf("\n", from);
  return i === -1 ? ed.buf.length : i;
}

/**
 * Length of the escape sequence at `s[i]` (an ESC): a whole CSI or SS3
 * sequence, 1 for a lone ESC (Escape; the next key is read on its own),
 * 0 when a CSI/SS3 sequence is cut at the end of the chunk.
 */
function escLength(s: string, i: number): number {
  if (i + 1 >= s.length) return 1; // ESC at the end of a read: Escape now
  const next = s[i + 1]!;
  if (next === "[") {
    for (let j = i + 2; j < s.length; j++) {
      const c = s.charCodeAt(j);
      if (c >= 0x40 && c <= 0x7e) return j - i + 1; // final byte
      if (c < 0x20 || c > 0x3f) return j - i; // malformed: drop what came so far
    }
    return 0;
  }
  if (next === "O") return i + 2 < s.length ? 3 : 0;
  return 1;
}

/** How many characters at the end of `s` (from `i`) may start the paste end marker. */
function pasteEndTail(s: string, i: number): number {
  for (let k = Math.min(PASTE_END.length - 1, s.length - i); k > 0; k--) {
    if (PASTE_END.startsWith(s.slice(s.length - k))) return k;
  }
  return 0;
}

/** One key that is not part of an escape sequence or a paste; `prev` is the character before it. */
function controlKey(
  ed: EditorText,
  ch: string,
  prev: string | undefined,
  events: EditorEvent[],
  hooks: { resetHistory(): void; complete(text: string): string | null },
): void {
  switch (ch) {
    case "\r":
      if (ed.cur === ed.buf.length && ed.buf.endsWith("\\")) {
        ed.buf = ed.buf.slice(0, -1) + "\n";
        ed.cur = ed.buf.length;
      } else {
        events.push({ type: "submit", text: ed.buf });
        ed.buf = "";
        ed.cur = 0;
        hooks.resetHistory();
      }
      break;
    case "\n":
      if (prev === "\r") break; // CRLF: one Enter
      insertText(ed, "\n"); // Ctrl-J
      break;
    case "\x03":
      events.push({ type: "interrupt" });
      break;
    case "\x04":
      if (ed.buf === "") events.push({ type: "eof" });
      else if (ed.cur < ed.buf.length) ed.buf = ed.buf.slice(0, ed.cur) + ed.buf.slice(ed.cur + 1);
      break;
    case "\x7f":
    case "\b":
      if (ed.cur > 0) {
        ed.buf = ed.buf.slice(0, ed.cur - 1) + ed.buf.slice(ed.cur);
        ed.cur--;
      }
      break;
    case "\x15": // Ctrl-U
      ed.buf = "";
      ed.cur = 0;
      break;
    case "\x17": { // Ctrl-W
      const before = ed.buf.slice(0, ed.cur).replace(/\S+\s*$|\s+$/, "");
      ed.buf = before + ed.buf.slice(ed.cur);
      ed.cur = before.length;
      break;
    }
    case "\x01":
      ed.cur = lineStartOf(ed, ed.cur);
      break;
    case "\x05":
      ed.cur = lineEndOf(ed, ed.cur);
      break;
    case "\t": {
      const done = ed.cur === ed.buf.length ? hooks.complete(ed.buf) : null;
      if (done === null) insertText(ed, ch);
      else {
        ed.buf = done;
        ed.cur = ed.buf.length;
      }
      break;
    }
    default:
      if (ch >= " ") insertText(ed, ch);
  }
}

/** The editor's whole state: the buffer, the cursor, the paste state and the history. */
interface EditorState extends EditorText {
  pasting: boolean;
  /** An escape sequence cut at a chunk boundary. */
  pending: string;
  past: string[];
  /** History position; past.length = the draft. */
  at: number;
  draft: string;
  complete: (text: string) => string | null;
}

function resetHistory(ed: EditorState) {
  ed.at = ed.past.length;
  ed.draft = "";
}

function recall(ed: EditorState, to: number) {
  if (ed.at === ed.past.length) ed.draft = ed.buf;
  ed.at = to;
  ed.buf = ed.at === ed.past.length ? ed.draft : ed.past[ed.at]!;
  ed.cur = ed.buf.length;
}

/** Up: the line above, or (on the first line) the previous history entry. */
function up(ed: EditorState) {
  const start = lineStartOf(ed, ed.cur);
  if (start > 0) {
    const col = ed.cur - start;
    const prevStart = lineStartOf(ed, start - 1);
    ed.cur = Math.min(prevStart + col, start - 1);
  } else if (ed.at > 0) recall(ed, ed.at - 1);
}

/** Down: the line below, or (on the last line) the next history entry. */
function down(ed: EditorState) {
  const end = lineEndOf(ed, ed.cur);
  if (end < ed.buf.length) {
    const col = ed.cur - lineStartOf(ed, ed.cur);
    const nextStart = end + 1;
    ed.cur = Math.min(nextStart + col, lineEndOf(ed, nextStart));
  } else if (ed.at < ed.past.length) recall(ed, ed.at + 1);
}

/** A whole escape sequence: cursor movement, history, Delete. */
function escapeKey(ed: EditorState, seq: string) {
  switch (seq) {
    case "\x1b[D":
    case "\x1bOD":
      if (ed.cur > 0) ed.cur--;
      break;
    case "\x1b[C":
    case "\x1bOC":
      if (ed.cur < ed.buf.length) ed.cur++;
      break;
    case "\x1b[A":
    case "\x1bOA":
      up(ed);
      break;
    case "\x1b[B":
    case "\x1bOB":
      down(ed);
      break;
    case "\x1b[H":
    case "\x1bOH":
    case "\x1b[1~":
      ed.cur = lineStartOf(ed, ed.cur);
      break;
    case "\x1b[F":
    case "\x1bOF":
    case "\x1b[4~":
      ed.cur = lineEndOf(ed, ed.cur);
      break;
    case "\x1b[3~":
      if (ed.cur < ed.buf.length) ed.buf = ed.buf.slice(0, ed.cur) + ed.buf.slice(ed.cur + 1);
      break;
    default:
      break; // function keys and the like: ignored
  }
}

/** Feed decoded input (see `LineEditor.feed`): one loop over the chunk, a short case per key. */
function feed(ed: EditorState, chunk: string): EditorEvent[] {
  const events: EditorEvent[] = [];
  const s = ed.pending + chunk;
  ed.pending = "";
  let i = 0;
  while (i < s.length) {
    if (ed.pasting) {
      const end = s.indexOf(PASTE_END, i);
      if (end === -1) {
        // Keep a possible partial end marker for the next chunk.
        const keep = pasteEndTail(s, i);
        insertText(ed, s.slice(i, s.length - keep).replace(/\r\n?/g, "\n"));
        ed.pending = s.slice(s.length - keep);
        return events;
      }
      insertText(ed, s.slice(i, end).replace(/\r\n?/g, "\n"));
      ed.pasting = false;
      i = end + PASTE_END.length;
      continue;
    }
    const ch = s[i]!;
    if (ch === "\x1b") {
      if (PASTE_START.startsWith(s.slice(i, i + PASTE_START.length))) {
        if (s.startsWith(PASTE_START, i)) {
          ed.pasting = true;
          i += PASTE_START.length;
          continue;
        }
        if (s.length - i < PASTE_START.length && s.length - i > 1) {
          ed.pending = s.slice(i); // a paste start cut at the chunk boundary
          return events;
        }
      }
      if (s[i + 1] === "\r") {
        insertText(ed, "\n"); // Alt-Enter
        i += 2;
        continue;
      }
      const n = escLength(s, i);
      if (n === 0) {
        ed.pending = s.slice(i);
        return events;
      }
      if (n === 1) events.push({ type: "escape" });
      else escapeKey(ed, s.slice(i, i + n));
      i += n;
      continue;
    }
    i++;
    controlKey(ed, ch, s[i - 2], events, {
      resetHistory: () => resetHistory(ed),
      complete: ed.complete,
    });
  }
  return events;
}

/** Create an empty editor, optionally with a history (oldest first). */
export function createLineEditor(
  initialHistory: readonly string[] = [],
  complete: (text: string) => string | null = () => null,
): LineEditor {
  const past = [...initialHistory];
  const ed: EditorState = {
    buf: "",
    cur: 0,
    pasting: false,
    pending: "",
    past,
    at: past.length,
    draft: "",
    complete,
  };
  return {
    feed: (chunk) => feed(ed, chunk),
    text: () => ed.buf,
    cursor: () => ed.cur,
    clear() {
      ed.buf = "";
      ed.cur = 0;
      resetHistory(ed);
    },
    set(text) {
      ed.buf = text;
      ed.cur = text.length;
    },
    remember(text) {
      if (text.trim() === "" || past[past.length - 1] === text) return;
      past.push(text);
      resetHistory(ed);
    },
    history: () => past,
  };
}

/** Terminal columns a string occupies (wide East Asian characters count 2). */
export function displayWidth(s: string): number {
  let w = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c < 0x20 || (c >= 0x7f && c < 0xa0)) continue;
    if (c >= 0x300 && c <= 0x36f) continue; // combining marks
    const wide = (c >= 0x1100 && c <= 0x115f) || (c >= 0x2e80 && c <= 0xa4cf) ||
      (c >= 0xac00 && c <= 0xd7a3) || (c >= 0xf900 && c <= 0xfaff) ||
      (c >= 0xfe30 && c <= 0xfe4f) || (c >= 0xff00 && c <= 0xff60) ||
      (c >= 0xffe0 && c <= 0xffe6) || (c >= 0x1f300 && c <= 0x1faff) ||
      (c >= 0x20000 && c <= 0x3fffd);
    w += wide ? 2 : 1;
  }
  return w;
}

/** Where a drawn input area leaves things. */
export interface InputLayout {
  /** The text to write (prompts, buffer lines; no cursor movement). */
  text: string;
  /** Row of the cursor, 0 = the area's first row. */
  cursorRow: number;
  /** Column of the cursor. */
  cursorCol: number;
  /** Row the terminal cursor is on after writing `text`. */
  endRow: number;
}

/**
 * Lay out `buf` under `prompt` (first line) and `cont` (continuation lines)
 * on a terminal `columns` wide, accounting for soft wraps.
 */
export function layoutInput(
  prompt: string,
  cont: string,
  buf: string,
  cursor: number,
  columns: number,
): InputLayout {
  const cols = Math.max(columns, 8);
  const lines = buf.split("\n");
  let row = 0;
  let cursorRow = 0;
  let cursorCol = 0;
  let offset = 0;
  let endCol = 0;
  const parts: string[] = [];
  lines.forEach((line, idx) => {
    const head = idx === 0 ? prompt : cont;
    parts.push(head + line);
    const headW = displayWidth(head);
    if (cursor >= offset && cursor <= offset + line.length) {
      const w = headW + displayWidth(line.slice(0, cursor - offset));
      cursorRow = row + Math.floor(w / cols);
      cursorCol = w % cols;
    }
    const total = headW + displayWidth(line);
    endCol = total % cols;
    if (idx === lines.length - 1) row += Math.floor(total / cols);
    else row += Math.max(1, Math.ceil(total / cols));
    offset += line.length + 1;
  });
  // A last line filling its row exactly leaves the terminal in a pending-wrap
  // state; force the wrap so the cursor really is on the next row.
  const wrap = endCol === 0 && row > 0 && lines[lines.length - 1] !== "" ? " \r\x1b[K" : "";
  return { text: parts.join("\r\n") + wrap, cursorRow, cursorCol, endRow: row };
}

/**
 * Escape codes that redraw an input area: move up from the cursor's row to
 * the area's first row, clear to the end of the screen, write the area, and
 * put the cursor at its position. `fromRow` is the cursor row of the last draw.
 */
export function redrawInput(fromRow: number, l: InputLayout): string {
  let s = fromRow > 0 ? `\x1b[${fromRow}A` : "";
  s += `\r\x1b[J${l.text}`;
  const up = l.endRow - l.cursorRow;
  if (up > 0) s += `\x1b[${up}A`;
  s += "\r";
  if (l.cursorCol > 0) s += `\x1b[${l.cursorCol}C`;
  return s;
}

/** Escape codes that erase an input area whose cursor sits on `fromRow`. */
export function eraseInput(fromRow: number): string {
  return `${fromRow > 0 ? `\x1b[${fromRow}A` : ""}\r\x1b[J`;
}
