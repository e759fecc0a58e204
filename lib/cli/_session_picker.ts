/**
 * The session picker of `penguin chat --resume` (no id) and `/resume`: a
 * list of sessions, newest first, one row each (age, turns, model, first
 * prompt; with every workspace, the workspace too), Up/Down to choose,
 * typing to filter (every word must appear in the row), Enter to pick,
 * Escape or Ctrl-C to cancel.
 *
 * The state and its drawing are plain functions over data
 * ({@linkcode pickerStep}, {@linkcode pickerLines}); {@linkcode runPicker}
 * drives them with raw key chunks and redraws in place.
 *
 * @module
 */
import type { SessionSummary } from "../session/list.ts";
import { ageOf, flatLine } from "../session/render.ts";
import { safeText } from "../display/terminal_text.ts";

/** Untrusted `text` (a prompt, a path, what was typed) on one terminal-safe line of at most `max` characters. */
const safeLine = (text: string, max: number) => flatLine(safeText(text), max);

/** What the picker shows of a session. */
export type PickerRow = Pick<
  SessionSummary,
  "sessionId" | "firstPrompt" | "lastActivity" | "turns" | "modelId" | "workspace"
>;

/** The picker's state. */
export interface PickerState {
  /** Every row, newest first. */
  rows: readonly PickerRow[];
  /** The filter as typed. */
  query: string;
  /** Index into the filtered rows. */
  selected: number;
}

/** How a key chunk left the picker. */
export type PickerEnd = { picked: string } | { cancelled: true } | null;

/** The rows `query` keeps: every word of it (case-insensitive) appears in the row's text. */
export function filterRows(rows: readonly PickerRow[], query: string): PickerRow[] {
  const words = query.toLowerCase().split(/\s+/).filter((w) => w !== "");
  if (words.length === 0) return [...rows];
  return rows.filter((r) => {
    const text = [r.sessionId, r.firstPrompt ?? "", r.modelId ?? "", r.workspace ?? ""]
      .join(" ").toLowerCase();
    return words.every((w) => text.includes(w));
  });
}

// deno-lint-ignore no-control-regex
const KEY = /^(\x1b\[[0-9;]*[A-Za-z~]|\x1bO[A-Za-z]|\x1b\[200~|\x1b\[201~|\x1b|[\s\S])/;

/** Split a raw chunk into keys (escape sequences whole, other characters one by one). */
export function keysOf(chunk: string): string[] {
  const keys: string[] = [];
  let rest = chunk;
  while (rest !== "") {
    const m = KEY.exec(rest)!;
    keys.push(m[0]);
    rest = rest.slice(m[0].length);
  }
  return keys;
}

/** Apply one key to `state` (in place); a non-null result ends the picker. */
export function pickerStep(state: PickerState, key: string): PickerEnd {
  const shown = filterRows(state.rows, state.query);
  switch (key) {
    case "\x1b[A":
    case "\x1bOA":
    case "\x10": // Ctrl-P
      state.selected = Math.max(0, state.selected - 1);
      return null;
    case "\x1b[B":
    case "\x1bOB":
    case "\x0e": // Ctrl-N
      state.selected = Math.min(Math.max(0, shown.length - 1), state.selected + 1);
      return null;
    case "\r":
    case "\n": {
      const row = shown[state.selected];
      return row === undefined ? null : { picked: row.sessionId };
    }
    case "\x1b":
    case "\x03": // Ctrl-C
    case "\x04": // Ctrl-D
      return { cancelled: true };
    case "\x7f":
    case "\b":
      state.query = [...state.query].slice(0, -1).join("");
      state.selected = 0;
      return null;
    case "\x15": // Ctrl-U
      state.query = "";
      state.selected = 0;
      return null;
  }
  // Other escape sequences and control characters are ignored; printable text filters.
  // deno-lint-ignore no-control-regex
  if (key.startsWith("\x1b") || /^[\x00-\x1f\x7f]$/.test(key)) return null;
  state.query += key;
  state.selected = 0;
  return null;
}

/** Options of {@linkcode pickerLines}. */
export interface PickerLook {
  /** The first line (what is being picked from). */
  title: string;
  /** Terminal width. */
  columns: number;
  /** At most this many rows are listed (a window around the selection). */
  visible: number;
  /** Show each row's workspace (picking from every workspace). */
  workspaces: boolean;
  /** Reverse video for the selected row. */
  color: boolean;
  /** Now, for the ages. */
  now?: number;
}

/** The picker's screen lines for `state`, each shorter than `look.columns`. */
export function pickerLines(state: PickerState, look: PickerLook): string[] {
  const width = Math.max(20, look.columns - 1);
  const shown = filterRows(state.rows, state.query);
  const lines = [
    safeLine(look.title, width),
    safeLine("↑/↓ choose · type to filter · Enter resumes · Esc cancels", width),
    cut(`Filter: ${safeLine(state.query, width)}`, width),
  ];
  if (shown.length === 0) {
    lines.push(`  (no session matches "${safeLine(state.query, width - 30)}")`);
    return lines;
  }
  const now = look.now ?? Date.now();
  const first = Math.min(
    Math.max(0, state.selected - Math.floor(look.visible / 2)),
    Math.max(0, shown.length - look.visible),
  );
  for (let i = first; i < Math.min(shown.length, first + look.visible); i++) {
    const r = shown[i]!;
    const turns = r.turns === null ? "?" : String(r.turns);
    let head = `${i === state.selected ? ">" : " "} ${ageOf(r.lastActivity, now).padStart(3)}  ${
      turns.padStart(3)
    } turn(s)  ${safeLine(r.modelId ?? "-", 24)}  `;
    if (look.workspaces) head += `${safeLine(tail(r.workspace ?? "-", 24), 24)}  `;
    const prompt = safeLine(r.firstPrompt ?? "(no prompt)", Math.max(8, width - head.length));
    const line = cut(head + prompt, width);
    lines.push(i === state.selected && look.color ? `\x1b[7m${line}\x1b[27m` : line);
  }
  lines.push(`  ${shown.length} of ${state.rows.length} session(s)`);
  return lines;
}

/** `text` (already one safe line) cut to `max` characters with `…`. */
function cut(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max - 1) + "…";
}

/** The end of `path`, at most `max` characters (`…` in front when cut). */
function tail(path: string, max: number): string {
  return path.length <= max ? path : "…" + path.slice(path.length - max + 1);
}

/** What {@linkcode runPicker} reads and writes. */
export interface PickerIo {
  /** Write to the terminal. */
  write(text: string): void;
  /** The next raw chunk typed, or null when input ended. */
  read(): Promise<string | null>;
}

/**
 * Run the picker on a raw-mode terminal: draw, read keys, redraw in place,
 * and erase it when done. Resolves to the picked session id, or null when
 * cancelled (or the input ended).
 */
export async function runPicker(
  rows: readonly PickerRow[],
  look: Omit<PickerLook, "visible"> & { visible?: number },
  io: PickerIo,
): Promise<string | null> {
  const state: PickerState = { rows, query: "", selected: 0 };
  // Lines are overwritten and cleared one by one (no clear-to-end-of-screen:
  // some terminals push a screen cleared from its top into the scrollback).
  let drawn = 0;
  const up = (n: number) => (n > 0 ? `\x1b[${n}A` : "");
  const draw = () => {
    const lines = pickerLines(state, { visible: 10, ...look });
    let out = `${up(drawn - 1)}\r${lines.map((l) => `${l}\x1b[K`).join("\r\n")}`;
    const extra = drawn - lines.length;
    if (extra > 0) out += `${"\r\n\x1b[2K".repeat(extra)}${up(extra)}`;
    io.write(out);
    drawn = lines.length;
  };
  const erase = () => {
    io.write(`${up(drawn - 1)}\r\x1b[2K${"\r\n\x1b[2K".repeat(drawn - 1)}${up(drawn - 1)}\r`);
  };
  draw();
  while (true) {
    const chunk = await io.read();
    if (chunk === null) {
      erase();
      return null;
    }
    for (const key of keysOf(chunk)) {
      const end = pickerStep(state, key);
      if (end === null) continue;
      erase();
      return "picked" in end ? end.picked : null;
    }
    draw();
  }
}

/** Raw chunks from stdin (a terminal put in raw mode until `close`). */
export function stdinKeys(): PickerIo["read"] & { close(): void } {
  Deno.stdin.setRaw(true);
  const dec = new TextDecoder();
  const buf = new Uint8Array(1024);
  const read = async () => {
    const n = await Deno.stdin.read(buf);
    return n === null ? null : dec.decode(buf.subarray(0, n), { stream: true });
  };
  return Object.assign(read, {
    close() {
      try {
        Deno.stdin.setRaw(false);
      } catch {
        // stdin is gone
      }
    },
  });
}
