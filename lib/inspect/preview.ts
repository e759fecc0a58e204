/**
 * One-line previews of tool calls, in the CLI's conventions:
 * `exec_command <- $ <cmd>` (or `<description> ($ <cmd>)`),
 * `input_command <- <pid> << <chars>`, `run_subagent <- <prompt>`,
 * `input_subagent <- <id> << <prompt>`, file tools `<name> …/<parent>/<file>`;
 * other tools show their compact arguments. At most 120 characters.
 *
 * @module
 */
import { oneLine } from "./format.ts";

/** Parse a tool call's `arguments` JSON string; null when it is not a JSON object. */
export function parseToolArgs(args: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(args);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function shortPath(p: string): string {
  const parts = p.split("/").filter((x) => x !== "");
  return parts.length <= 2 ? p : `…/${parts.slice(-2).join("/")}`;
}

const FILE_TOOLS = new Set([
  "read_file",
  "write_file",
  "edit_file",
  "read_image",
  "describe_image",
]);

/** The preview of a call to `name` with JSON `args` (without the tag). */
export function toolPreview(name: string, args: string, max = 120): string {
  const a = parseToolArgs(args);
  let body: string;
  if (!a) {
    body = `${name} <- ${args}`;
  } else if (name === "exec_command" && str(a.cmd) !== undefined) {
    const desc = str(a.description);
    body = desc ? `${name} <- ${desc} ($ ${a.cmd})` : `${name} <- $ ${a.cmd}`;
  } else if (name === "input_command") {
    const pid = str(a.process_id) ?? str(a.id) ?? "?";
    body = `${name} <- ${pid} << ${str(a.chars) ?? str(a.input) ?? ""}`;
  } else if (name === "run_subagent" && str(a.prompt) !== undefined) {
    body = `${name} <- ${a.prompt}`;
  } else if (name === "input_subagent") {
    body = `${name} <- ${str(a.subagent_id) ?? "?"} << ${str(a.prompt) ?? ""}`;
  } else if (FILE_TOOLS.has(name) && (str(a.file_path) ?? str(a.source) ?? str(a.path))) {
    body = `${name} ${shortPath((str(a.file_path) ?? str(a.source) ?? str(a.path))!)}`;
  } else {
    body = `${name} <- ${JSON.stringify(a)}`;
  }
  return oneLine(body, max);
}

/** The CLI tag of a tool call: `[tool-<last 3 of id>]`, nested `[agent-<last 3 of sid>-tool-…]`. */
export function toolTag(toolCallId: string, childSessionId?: string): string {
  const t = toolCallId.slice(-3);
  return childSessionId ? `[agent-${childSessionId.slice(-3)}-tool-${t}]` : `[tool-${t}]`;
}
