/**
 * Edits of an existing `.project_config.toml` made on its text: a model
 * added, changed or removed, or `default_model` / `vision_model` pointed
 * elsewhere, touches only that block or line. Everything else — entries,
 * tables, comments, spellings, key order — stays byte for byte as read, so
 * a file PenguinHarness wrote keeps every value penguin did not change.
 *
 * The edit is checked by parsing the result: when it does not load back to
 * exactly the intended config (a layout the line scan misreads), the caller
 * falls back to rendering the whole file.
 *
 * @module
 */
import { isDeepStrictEqual } from "node:util";
import { parseProjectConfig } from "./_project_config_parse.ts";
import { renderModelEntry } from "./_project_config_render.ts";
import type { ModelEntry, ModelRef, ProjectConfig } from "./project_config_types.ts";

const MODELS_HEADER = /^[ \t]*\[\[[ \t]*models[ \t]*\]\][ \t]*(?:#.*)?$/;
const MODELS_SUBTABLE = /^[ \t]*\[{1,2}[ \t]*models[ \t]*\./;
const ANY_HEADER = /^[ \t]*\[/;

interface Line {
  start: number;
  text: string;
}

function linesOf(text: string): Line[] {
  const out: Line[] = [];
  let start = 0;
  while (start < text.length) {
    const nl = text.indexOf("\n", start);
    const end = nl === -1 ? text.length : nl + 1;
    out.push({ start, text: text.slice(start, end).replace(/\r?\n$/, "") });
    start = end;
  }
  return out;
}

/** `[start, end)` of each `[[models]]` block, its sub-tables and trailing blank lines included. */
function modelBlocks(lines: Line[], textEnd: number): [number, number][] {
  const blocks: [number, number][] = [];
  let open: number | undefined;
  for (const l of lines) {
    const isModels = MODELS_HEADER.test(l.text);
    if (
      open !== undefined && (isModels || (ANY_HEADER.test(l.text) && !MODELS_SUBTABLE.test(l.text)))
    ) {
      blocks.push([open, l.start]);
      open = undefined;
    }
    if (isModels) open = l.start;
  }
  if (open !== undefined) blocks.push([open, textEnd]);
  return blocks;
}

const pairKey = (m: ModelRef) => JSON.stringify([m.provider, m.model_id]);

/** The trailing run of blank lines of `chunk` (kept when the block before it is replaced). */
function trailingBlank(chunk: string): string {
  return /\n((?:[ \t]*\r?\n)*)$/.exec(chunk)?.[1] ?? "";
}

/** The model section rewritten: removed blocks cut, changed ones re-rendered, new ones appended. */
function spliceModels(
  text: string,
  blocks: [number, number][],
  before: ModelEntry[],
  after: ModelEntry[],
): string | undefined {
  const afterByPair = new Map(after.map((m) => [pairKey(m), m]));
  const kept = before.filter((m) => afterByPair.has(pairKey(m)));
  const added = after.filter((m) => !before.some((b) => pairKey(b) === pairKey(m)));
  if (!isDeepStrictEqual([...kept, ...added].map(pairKey), after.map(pairKey))) return undefined;
  let out = "";
  let pos = 0;
  for (const [i, [start, end]] of blocks.entries()) {
    out += text.slice(pos, start);
    pos = end;
    const next = afterByPair.get(pairKey(before[i]!));
    if (next === undefined) continue;
    const chunk = text.slice(start, end);
    out += isDeepStrictEqual(before[i], next)
      ? chunk
      : renderModelEntry(next) + trailingBlank(chunk);
  }
  const insertAt = blocks.length > 0 ? blocks[blocks.length - 1]![1] : text.length;
  out += text.slice(pos, insertAt);
  // The last block cut at the end of the file: the blank lines that separated it go too.
  if (
    blocks.length > 0 && added.length === 0 && insertAt === text.length &&
    pos === text.length &&
    !afterByPair.has(pairKey(before.at(-1)!))
  ) {
    out = out.replace(/\n(?:[ \t]*\r?\n)+$/, "\n");
  }
  if (added.length > 0) {
    if (out !== "" && !out.endsWith("\n")) out += "\n";
    if (out !== "" && !out.endsWith("\n\n")) out += "\n";
    out += added.map(renderModelEntry).join("\n");
    if (insertAt < text.length) out += "\n";
  }
  return out + text.slice(insertAt);
}

/** `key = { … }` top-level lines set, replaced or removed in the text before the first table. */
function spliceRef(text: string, key: string, ref: ModelRef | undefined): string | undefined {
  const lines = linesOf(text);
  const firstHeader = lines.find((l) => ANY_HEADER.test(l.text))?.start ?? text.length;
  const re = new RegExp(`^[ \\t]*${key}[ \\t]*=`);
  const line = lines.find((l) => l.start < firstHeader && re.test(l.text));
  const rendered = ref === undefined
    ? ""
    : `${key} = { provider = ${JSON.stringify(ref.provider)}, model_id = ${
      JSON.stringify(ref.model_id)
    } }\n`;
  if (line) {
    const end = text.indexOf("\n", line.start);
    return text.slice(0, line.start) + rendered + (end === -1 ? "" : text.slice(end + 1));
  }
  if (ref === undefined) return undefined;
  // After the last top-level line, so the blank line before the first table stays where it was.
  const last = lines.filter((l) => l.start < firstHeader && l.text.trim() !== "").at(-1);
  const nl = last === undefined ? -1 : text.indexOf("\n", last.start);
  const at = last === undefined ? 0 : nl === -1 ? text.length : nl + 1;
  const sep = at > 0 && !text.slice(0, at).endsWith("\n") ? "\n" : "";
  return text.slice(0, at) + sep + rendered + text.slice(at);
}

/**
 * `text` (which parses to `before`) edited to hold `after`, or undefined
 * when the change is not one this editor makes or the result would not
 * load back to `after`.
 */
export function spliceProjectConfig(
  text: string,
  before: ProjectConfig,
  after: ProjectConfig,
  file: string,
): string | undefined {
  const untouched = ["name", "default_chat", "command_policy", "extra"] as const;
  if (untouched.some((k) => !isDeepStrictEqual(before[k], after[k]))) return undefined;
  const blocks = modelBlocks(linesOf(text), text.length);
  if (blocks.length !== before.models.length) return undefined;
  let out = spliceModels(text, blocks, before.models, after.models);
  for (const key of ["default_model", "vision_model"] as const) {
    if (out === undefined || isDeepStrictEqual(before[key], after[key])) continue;
    out = spliceRef(out, key, after[key]);
  }
  if (out === undefined) return undefined;
  try {
    return isDeepStrictEqual(parseProjectConfig(out, file), after) ? out : undefined;
  } catch {
    return undefined;
  }
}
