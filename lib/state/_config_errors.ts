/**
 * Error messages for malformed config files: the file path, the line (and
 * column when known) and what was expected. Parse errors come from
 * smol-toml / yaml; schema errors from zod issues mapped back to a line.
 * The YAML locator is apart (_yaml_locator.ts): it needs the `yaml`
 * library, which a start that parses no YAML does not load.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";
import { parse as parseToml } from "smol-toml";

/** A path into a parsed config value, e.g. `["models", 1, "provider"]`. */
export type ValuePath = ReadonlyArray<PropertyKey>;

/** A 1-based position in a file. */
export interface Position {
  /** 1-based line. */
  line: number;
  /** 1-based column, when known. */
  column?: number | undefined;
}

/** Maps a value path to where it is written in the file, if it can. */
export type Locator = (path: ValuePath) => Position | undefined;

/** One schema problem: where in the value, and what is wrong. */
export interface SchemaProblem {
  /** Path of the offending value. */
  path: ValuePath;
  /** What was expected and found, e.g. `expected a string, found 42`. */
  message: string;
}

/** Render `["models", 1, "provider"]` as `models[1].provider`. */
export function renderPath(path: ValuePath): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += out === "" ? String(seg) : `.${String(seg)}`;
  }
  return out === "" ? "(top level)" : out;
}

function where(pos: Position | undefined): string {
  if (!pos) return "";
  return pos.column !== undefined
    ? `line ${pos.line}, column ${pos.column}: `
    : `line ${pos.line}: `;
}

/** Describe a found value for "found …" in a message. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (value instanceof Date) return `the date ${value.toISOString()}`;
  if (typeof value === "object") return "a table";
  if (typeof value === "string") {
    return JSON.stringify(value.length > 60 ? value.slice(0, 57) + "..." : value);
  }
  return String(value);
}

/** The config error for a syntax error reported by smol-toml. */
export function tomlSyntaxError(file: string, err: unknown): PenguinError {
  const e = err as { message?: string; line?: number; column?: number };
  const raw = String(e.message ?? err).replace(/^Invalid TOML document:\s*/, "");
  const what = raw.split("\n")[0]!.trim();
  const pos = typeof e.line === "number" ? { line: e.line, column: e.column } : undefined;
  return new PenguinError("config", `Cannot parse ${JSON.stringify(file)}: ${where(pos)}${what}`, {
    cause: err,
  });
}

/** `text` parsed as TOML; a syntax error is thrown as the {@linkcode tomlSyntaxError} for `file`. */
export function parseTomlText(text: string, file: string): Record<string, unknown> {
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch (err) {
    throw tomlSyntaxError(file, err);
  }
}

/** The config error for a YAML syntax error (`YAMLParseError`). */
export function yamlSyntaxError(file: string, err: unknown): PenguinError {
  const e = err as { message?: string; linePos?: Array<{ line: number; col: number }> };
  const raw = String(e.message ?? err);
  const what = raw.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "").trim();
  const lp = e.linePos?.[0];
  const pos = lp ? { line: lp.line, column: lp.col } : undefined;
  return new PenguinError("config", `Cannot parse ${JSON.stringify(file)}: ${where(pos)}${what}`, {
    cause: err,
  });
}

/**
 * The config error for schema problems: the first problem with its line,
 * plus a count of the rest.
 */
export function schemaError(
  file: string,
  problems: SchemaProblem[],
  locate?: Locator,
): PenguinError {
  const first = problems[0];
  if (!first) return new PenguinError("config", `Invalid ${JSON.stringify(file)}`);
  const pos = locate?.(first.path);
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem(s))` : "";
  return new PenguinError(
    "config",
    `Invalid ${JSON.stringify(file)}: ${where(pos)}${
      renderPath(first.path)
    }: ${first.message}${more}`,
  );
}

interface ZodIssueLike {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: string;
  values?: unknown[];
  input?: unknown;
  keys?: string[];
}

const EXPECTED: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  object: "a table",
  array: "an array",
};

/** How many unknown keys a message names; the rest are counted. */
const KEYS_SHOWN = 5;

/**
 * `unknown keys "a", "b" …and 98 978 more` for zod's `unrecognized_keys`
 * issue, whose own message lists every key (a mapping of 99 000 junk keys
 * made a message of a megabyte).
 */
export function unknownKeysMessage(keys: ReadonlyArray<string>): string {
  const shown = keys.slice(0, KEYS_SHOWN).map((k) =>
    JSON.stringify(k.length > 60 ? k.slice(0, 57) + "..." : k)
  );
  const more = keys.length > KEYS_SHOWN ? ` and ${keys.length - KEYS_SHOWN} more` : "";
  return `unknown key${keys.length === 1 ? "" : "s"} ${shown.join(", ")}${more}`;
}

/**
 * Turn zod issues (parsed with `reportInput: true`) into problems. A custom
 * message starting with "expected" is used as-is; otherwise one is derived.
 */
export function zodProblems(issues: ReadonlyArray<unknown>): SchemaProblem[] {
  return issues.map((raw) => {
    const issue = raw as ZodIssueLike;
    const found = `, found ${describeValue(issue.input)}`;
    let message: string;
    if (issue.code === "unrecognized_keys" && issue.keys) message = unknownKeysMessage(issue.keys);
    else if (issue.message.startsWith("expected")) message = issue.message + found;
    else if (issue.code === "invalid_type") {
      message = `expected ${EXPECTED[issue.expected ?? ""] ?? issue.expected}${found}`;
    } else if (issue.code === "invalid_value" && issue.values) {
      message = `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}${found}`;
    } else message = issue.message.replace(/^Invalid input: /, "") + found;
    return { path: issue.path, message };
  });
}

// ---------------------------------------------------------------------------
// TOML locator: a line scanner that knows headers, array-of-table indices,
// dotted keys and multi-line strings well enough to point at a key's line.

const KEY_SEG = String.raw`(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')`;
const KEY_LINE = new RegExp(String.raw`^(\s*)(${KEY_SEG}(?:\s*\.\s*${KEY_SEG})*)\s*=`);
const HEADER = new RegExp(String.raw`^\s*(\[\[?)\s*(${KEY_SEG}(?:\s*\.\s*${KEY_SEG})*)\s*\]\]?`);

function splitKey(key: string): string[] {
  const out: string[] = [];
  for (const m of key.matchAll(new RegExp(KEY_SEG, "g"))) {
    const s = m[0];
    if (s.startsWith('"')) out.push(JSON.parse(s) as string);
    else if (s.startsWith("'")) out.push(s.slice(1, -1));
    else out.push(s);
  }
  return out;
}

/** A {@linkcode Locator} over TOML source text. */
export function tomlLocator(src: string): Locator {
  const found = new Map<string, Position>();
  const arrayIndex = new Map<string, number>();
  let table: string[] = [];
  let inMulti: string | undefined;
  const lines = src.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (inMulti) {
      if (line.split(inMulti).length % 2 === 0) inMulti = undefined;
      continue;
    }
    const header = HEADER.exec(line);
    if (header) {
      const segs = splitKey(header[2]!);
      const isArray = header[1] === "[[";
      const path: string[] = [];
      const plain: string[] = [];
      segs.forEach((seg, k) => {
        plain.push(seg);
        path.push(seg);
        const key = plain.join(".");
        const last = k === segs.length - 1;
        if (last && isArray) {
          const next = (arrayIndex.get(key) ?? -1) + 1;
          arrayIndex.set(key, next);
          for (const other of [...arrayIndex.keys()]) {
            if (other.startsWith(key + ".")) arrayIndex.delete(other);
          }
          path.push(String(next));
        } else if (arrayIndex.has(key)) {
          path.push(String(arrayIndex.get(key)));
        }
      });
      table = path;
      if (!found.has(path.join("."))) found.set(path.join("."), { line: i + 1 });
      continue;
    }
    const key = KEY_LINE.exec(line);
    if (key) {
      const full = [...table, ...splitKey(key[2]!)].join(".");
      if (!found.has(full)) found.set(full, { line: i + 1, column: key[1]!.length + 1 });
      const rest = line.slice(key[0].length);
      for (const q of ['"""', "'''"]) {
        if (rest.includes(q) && rest.split(q).length % 2 === 0) inMulti = q;
      }
    }
  }
  return (path) => {
    const segs = path.map(String);
    for (let n = segs.length; n > 0; n--) {
      const pos = found.get(segs.slice(0, n).join("."));
      if (pos) return pos;
    }
    return undefined;
  };
}
