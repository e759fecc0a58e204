/**
 * One-line previews of tool calls, computed from possibly-incomplete argument
 * JSON while it streams.
 *
 * Forms (`<-` reads "input to the tool"; the output gutter uses `->`):
 * - `exec_command <- $ <cmd>`, or `exec_command <- <description> ($ <cmd>)`
 * - `input_command <- <process_id> << <chars>` (`<< …` only when writing)
 * - `run_subagent <- <prompt>`
 * - `input_subagent <- <subagent_id> << <prompt>`
 * - `read_file|edit_file|write_file …/<parent>/<file>`
 * - anything else: `<name> <arguments on one line>`
 *
 * Payloads (chars, prompt, description, other arguments) are capped at 120
 * characters with `…`, commands at 1000. The renderer streams a preview by appending to what is
 * already on screen, so while the arguments are incomplete a preview only ever
 * grows: fields whose final shape is unknown (a file path being shortened, the
 * description form) wait until they are complete.
 *
 * @module
 */

import { escapeControls } from "../../inspect/terminal_text.ts";

/** Longest payload shown in a preview. */
export const PREVIEW_PAYLOAD_MAX = 120;
/** Longest command shown in an `exec_command` preview (the trace keeps it whole). */
export const PREVIEW_COMMAND_MAX = 1000;

/** Options of {@linkcode toolCallPreview}. */
export interface PreviewOptions {
  /** The arguments are final (segment stopped, or a complete message). */
  final?: boolean;
  /** The tool's schema declares a `description` argument (from `tool_list_ready`). */
  expectDescription?: boolean;
}

/** A string field read from partial JSON: its value so far, and whether it closed. */
interface Field {
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
function readField(json: string, name: string): Field | null {
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

function readString(json: string, start: number): Field {
  let out = "";
  for (let i = start; i < json.length; i++) {
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
function parses(json: string): boolean {
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

const FILE_TOOLS = new Set(["read_file", "edit_file", "write_file"]);

/**
 * The description state: `null` = render the plain form; `"wait"` = expected
 * but nothing showable yet; otherwise the (capped) text and whether it closed.
 */
function description(
  json: string,
  opts: PreviewOptions,
): null | "wait" | { text: string; complete: boolean } {
  const settled = opts.final === true || parses(json);
  if (!settled && opts.expectDescription !== true) return null;
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
  opts: PreviewOptions = {},
): string | null {
  const preview = previewOf(name, argsJson, opts);
  return preview === null ? null : escapeControls(preview);
}

function previewOf(name: string, argsJson: string, opts: PreviewOptions): string | null {
  const settled = opts.final === true || parses(argsJson);
  if (FILE_TOOLS.has(name)) {
    const p = readField(argsJson, "file_path");
    if (p && (p.complete || settled)) return `${name} ${shortPath(singleLine(p.value))}`;
    return settled ? `${name} ${genericArgs(argsJson)}`.trimEnd() : null;
  }
  let payload: { text: string; complete: boolean } | null = null;
  if (name === "exec_command") {
    const cmd = readField(argsJson, "cmd");
    if (cmd) {
      const text = singleLine(cmd.value);
      payload = {
        text: `$ ${
          text.length > PREVIEW_COMMAND_MAX ? `${text.slice(0, PREVIEW_COMMAND_MAX)}…` : text
        }`,
        complete: cmd.complete,
      };
    }
  } else if (name === "run_subagent") {
    const prompt = readField(argsJson, "prompt");
    if (prompt) payload = { text: cap(singleLine(prompt.value)), complete: prompt.complete };
  } else if (name === "input_command" || name === "input_subagent") {
    const idField = readField(argsJson, name === "input_command" ? "process_id" : "subagent_id");
    if (idField && (idField.complete || settled)) {
      const body = readField(argsJson, name === "input_command" ? "chars" : "prompt");
      const shown = body
        ? cap(name === "input_command" ? visibleControls(body.value) : singleLine(body.value))
        : "";
      payload = {
        text: `${singleLine(idField.value)}${shown ? ` << ${shown}` : ""}`,
        complete: settled,
      };
    }
  } else {
    if (argsJson.trim() === "" && !settled) return null;
    return `${name || "tool_call"} ${genericArgs(argsJson)}`.trimEnd();
  }
  const desc = name === "exec_command" ? description(argsJson, opts) : null;
  if (desc === "wait") return null;
  if (desc !== null) {
    if (!desc.complete || payload === null) return `${name} <- ${desc.text}`;
    return `${name} <- ${desc.text} (${payload.text}${payload.complete || settled ? ")" : ""}`;
  }
  if (payload === null) return settled ? `${name} ${genericArgs(argsJson)}`.trimEnd() : null;
  return `${name} <- ${payload.text}`;
}

function genericArgs(argsJson: string): string {
  const t = singleLine(argsJson);
  return t === "{}" ? "" : cap(t);
}
