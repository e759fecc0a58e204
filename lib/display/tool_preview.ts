/**
 * One-line previews of tool calls, the one rule for the live renderer (from
 * possibly-incomplete argument JSON while it streams) and the offline views
 * (`trace show`, `trace diff`, exports; complete arguments).
 *
 * Forms (`<-` reads "input to the tool"; the output gutter uses `->`):
 * - `exec_command <- $ <cmd>`, or `exec_command <- <description> ($ <cmd>)`
 * - `input_command <- <process_id> << <chars>` (`<< …` only when writing)
 * - `run_subagent <- <prompt>`
 * - `input_subagent <- <subagent_id> << <prompt>`
 * - `read_file|edit_file|write_file …/<parent>/<file>`, `read_image …/<parent>/<file>`
 * - anything else: `<name> <arguments on one line>`
 *
 * Each tool owns its form: its declaration's `preview` (a {@linkcode ToolPreviewFn},
 * built from the pieces here). Renderers are given the previews of the tools
 * they may meet ({@linkcode ToolPreviews}); a tool without one (an MCP tool, a
 * name from a PenguinHarness trace) shows the generic form.
 *
 * Payloads (chars, prompt, description, other arguments) are capped at 120
 * characters with `…`, commands at 1000. The renderer streams a preview by appending to what is
 * already on screen, so while the arguments are incomplete a preview only ever
 * grows: fields whose final shape is unknown (a file path being shortened, the
 * description form) wait until they are complete.
 *
 * @module
 */

import { escapeControls } from "./terminal_text.ts";

/** Longest payload shown in a preview. */
export const PREVIEW_PAYLOAD_MAX = 120;
/** Longest command shown in an `exec_command` preview (the trace keeps it whole). */
export const PREVIEW_COMMAND_MAX = 1000;

/** Options of {@linkcode toolCallPreview}. */
export interface PreviewOptions {
  /** The arguments are final (segment stopped, or a complete message). */
  final?: boolean;
  /**
   * Whether the tool's schema declares a `description` argument (from
   * `tool_list_ready`); default: a tool whose preview can lead with a
   * description is expected to send one.
   */
  expectDescription?: boolean;
  /** Cut the whole preview to this many characters with `…` (offline views; default: no cut). */
  max?: number;
  /** The previews of the tools known to the caller (others show the generic form). */
  previews: ToolPreviews;
}

/** A string field read from partial JSON: its value so far, and whether it closed. */
export interface Field {
  value: string;
  complete: boolean;
}

const ESCAPES: Record<string, string> = {
  n: "\n",
  r: "\r",
  t: "\t",
  b: "\b",
  f: "\f",
  '"': '"',
  "\\": "\\",
  "/": "/",
};

/** Read the top-level-looking string field `name` from possibly-incomplete JSON. */
export function readField(json: string, name: string): Field | null {
  const key = `"${name}"`;
  let at = json.indexOf(key);
  while (at !== -1) {
    let i = at + key.length;
    while (i < json.length && /\s/.test(json[i]!)) i++;
    if (json[i] === ":") {
      i++;
      while (i < json.length && /\s/.test(json[i]!)) i++;
      if (json[i] !== '"') return null;
      return readString(json, i + 1);
    }
    at = json.indexOf(key, at + 1);
  }
  return null;
}

/**
 * Characters of a field's value, or of the arguments, a preview reads: past them the value ends
 * with `…` (so nothing after them can pass unseen as the end), and no more of it is built. A
 * 50 MB argument was built one character at a time, and collapsed whole, for 120 characters
 * shown (a trace's `export` of it took 1.6 GB).
 */
export const PREVIEW_READ_MAX = 16 * 1024;

/** Whether the JSON string whose text starts at `from` closes (an unescaped `"` follows). */
function closes(json: string, from: number): boolean {
  for (let q = json.indexOf('"', from); q !== -1; q = json.indexOf('"', q + 1)) {
    let slashes = 0;
    while (json[q - 1 - slashes] === "\\") slashes++;
    if (slashes % 2 === 0) return true;
  }
  return false;
}

function readString(json: string, start: number): Field {
  let out = "";
  for (let i = start; i < json.length; i++) {
    if (out.length >= PREVIEW_READ_MAX) return { value: `${out}…`, complete: closes(json, i) };
    const ch = json[i]!;
    if (ch === '"') return { value: out, complete: true };
    if (ch !== "\\") {
      out += ch;
      continue;
    }
    const next = json[i + 1];
    if (next === undefined) break;
    if (next === "u") {
      const hex = json.slice(i + 2, i + 6);
      if (hex.length < 4) break; // escape cut at a chunk boundary: stop here
      if (/^[0-9a-fA-F]{4}$/.test(hex)) out += String.fromCharCode(parseInt(hex, 16));
      i += 5;
      continue;
    }
    out += ESCAPES[next] ?? next;
    i++;
  }
  return { value: out, complete: false };
}

/** Whether the argument text is a complete JSON document. */
export function parses(json: string): boolean {
  if (!json.trimEnd().endsWith("}")) return false; // cheap: no parse per streamed fragment
  try {
    JSON.parse(json);
    return true;
  } catch {
    return false;
  }
}

/** Collapse whitespace runs to one space and trim. */
export function singleLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** Cap `text` at {@linkcode PREVIEW_PAYLOAD_MAX} characters with `…`. */
export function cap(text: string): string {
  return text.length > PREVIEW_PAYLOAD_MAX ? `${text.slice(0, PREVIEW_PAYLOAD_MAX)}…` : text;
}

/** Make control characters visible: `\n`, `\r`, `\t`, `\\`, caret notation (`^C`). */
export function visibleControls(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[\\\u0000-\u001f\u007f]/g, (ch) => {
    if (ch === "\\") return "\\\\";
    if (ch === "\n") return "\\n";
    if (ch === "\r") return "\\r";
    if (ch === "\t") return "\\t";
    if (ch === "\u007f") return "^?";
    return `^${String.fromCharCode(ch.charCodeAt(0) + 64)}`;
  });
}

/** Shorten a path to at most its parent and file name: `…/parent/file.ts`. */
export function shortPath(path: string): string {
  const parts = path.split("/").filter((s) => s.length > 0);
  if (parts.length <= 2) return path;
  return `…/${parts[parts.length - 2]}/${parts[parts.length - 1]}`;
}

/** Parse a tool call's `arguments` JSON string; null when it is not a JSON object. */
export function parseToolArgs(args: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(args);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

/** What a tool's preview entry is given. */
export interface PreviewInput {
  /** The tool name. */
  name: string;
  /** The (possibly partial) argument JSON. */
  json: string;
  /** The arguments are complete (final, or parse as a whole document). */
  settled: boolean;
  /** The caller's options. */
  opts: PreviewOptions;
  /** The arguments as an object once they are complete; null before, or when not an object. */
  args(): Record<string, unknown> | null;
}

/**
 * What a tool's preview returns: the whole line (`line`), a payload shown as
 * `<name> <- <text>` (`payload`, "" for none; `complete` = its field closed;
 * `description` = a `description` argument leads when the tool has one), a
 * string (a complete payload, made one line and capped), or null while
 * nothing presentable has arrived (with complete arguments: the generic form).
 */
export type PreviewPart =
  | string
  | { line: string }
  | { payload: string; complete: boolean; description?: boolean }
  | null;

/** "No payload, arguments complete": the tool falls back to the generic form. */
export const NO_PAYLOAD: PreviewPart = { payload: "", complete: true };

/** A tool's preview: how a call of it shows, from its (possibly partial) arguments. */
export type ToolPreviewFn = (input: PreviewInput) => PreviewPart;

/** The preview of each tool a renderer knows, by name (undefined: the generic form). */
export type ToolPreviews = (name: string) => ToolPreviewFn | undefined;

/** `<name> …/<parent>/<file>` from the path field `field` (the file tools). */
export function filePreview(field: string): ToolPreviewFn {
  return ({ name, json, settled }) => {
    const p = readField(json, field);
    if (p && (p.complete || settled)) return { line: `${name} ${shortPath(singleLine(p.value))}` };
    return settled ? { line: `${name} ${genericArgs(json)}`.trimEnd() } : null;
  };
}

/** `<id> << <body>` from the id field and the body field (`input_command`, `input_subagent`). */
export function inputPreview(
  idName: string,
  bodyName: string,
  show: (s: string) => string,
): ToolPreviewFn {
  return ({ json, settled }) => {
    const id = readField(json, idName);
    if (!id || !(id.complete || settled)) return settled ? NO_PAYLOAD : null;
    const body = readField(json, bodyName);
    const shown = body ? cap(show(body.value)) : "";
    return { payload: `${singleLine(id.value)}${shown ? ` << ${shown}` : ""}`, complete: settled };
  };
}

/**
 * The description state: `null` = render the plain form; `"wait"` = expected
 * but nothing showable yet; otherwise the (capped) text and whether it closed.
 */
function description(
  json: string,
  settled: boolean,
  opts: PreviewOptions,
): null | "wait" | { text: string; complete: boolean } {
  if (!settled && opts.expectDescription === false) return null;
  const f = readField(json, "description");
  const text = f ? singleLine(f.value) : "";
  if (text === "") return settled ? null : "wait";
  return { text: cap(text), complete: f!.complete || settled };
}

/**
 * The preview of a tool call from its (possibly partial) argument JSON, or
 * `null` while nothing presentable has arrived. Deterministic: the same input
 * always yields the same preview. Control characters in the name or the
 * arguments are shown as `\xNN` (never removed: this is what gets approved).
 */
export function toolCallPreview(
  name: string,
  argsJson: string,
  opts: PreviewOptions,
): string | null {
  return describeToolCall(name, argsJson, opts)?.text ?? null;
}

/** A preview and whether it is fixed (cannot change before the arguments are final). */
export interface DescribedCall {
  /** The preview, as {@linkcode toolCallPreview} returns it. */
  text: string;
  /** The tool gave its whole line (e.g. a file path that has closed). */
  fixed: boolean;
}

/** {@linkcode toolCallPreview}, also saying whether the preview is fixed (live throttling). */
export function describeToolCall(
  name: string,
  argsJson: string,
  opts: PreviewOptions,
): DescribedCall | null {
  const preview = previewOf(name, argsJson, opts);
  if (preview === null) return null;
  const safe = escapeControls(preview.text);
  const text = opts.max !== undefined && safe.length > opts.max
    ? `${safe.slice(0, Math.max(0, opts.max - 1))}…`
    : safe;
  return { text, fixed: preview.fixed };
}

function previewOf(name: string, json: string, opts: PreviewOptions): DescribedCall | null {
  const settled = opts.final === true || parses(json);
  const given = partOf(name, json, settled, opts);
  if (given === undefined || (given === null && settled)) {
    if (json.trim() === "" && !settled) return null;
    return { text: `${name || "tool_call"} ${genericArgs(json)}`.trimEnd(), fixed: false };
  }
  const part = typeof given === "string"
    ? { payload: cap(singleLine(given)), complete: true }
    : given;
  if (part === null) return null;
  if ("line" in part) return { text: part.line, fixed: true };
  const text = payloadLine(name, json, settled, opts, part);
  return text === null ? null : { text, fixed: false };
}

/** What the tool's preview makes of the call; undefined: no preview, or it threw. */
function partOf(
  name: string,
  json: string,
  settled: boolean,
  opts: PreviewOptions,
): PreviewPart | undefined {
  const entry = opts.previews(name);
  if (entry === undefined) return undefined;
  try {
    return entry({ name, json, settled, opts, args: () => settled ? parseToolArgs(json) : null });
  } catch {
    return undefined; // a preview never breaks a renderer: the generic form
  }
}

/** `<name> <- <payload>`, led by the description when the tool has one. */
function payloadLine(
  name: string,
  json: string,
  settled: boolean,
  opts: PreviewOptions,
  part: { payload: string; complete: boolean; description?: boolean },
): string | null {
  const payload = part.payload === "" ? null : part;
  const desc = part.description ? description(json, settled, opts) : null;
  if (desc === "wait") return null;
  if (desc !== null) {
    if (!desc.complete || payload === null) return `${name} <- ${desc.text}`;
    return `${name} <- ${desc.text} (${payload.payload}${payload.complete || settled ? ")" : ""}`;
  }
  if (payload === null) return settled ? `${name} ${genericArgs(json)}`.trimEnd() : null;
  return `${name} <- ${payload.payload}`;
}

function genericArgs(argsJson: string): string {
  const t = argsJson.length > PREVIEW_READ_MAX
    ? `${singleLine(argsJson.slice(0, PREVIEW_READ_MAX))}…`
    : singleLine(argsJson);
  return t === "{}" ? "" : cap(t);
}
