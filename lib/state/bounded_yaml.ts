/**
 * YAML parsing of text someone else may have written (a model's `GOAL.yaml`,
 * a snapshot's `system_config.yaml`, a batch task file), bounded in cost.
 *
 * The `yaml` library's own duplicate-key check compares each new mapping key
 * with every earlier one, so one mapping of 90 000 keys (under 1 MiB) costs
 * minutes of a blocked event loop; and millions of small nodes (`- {}` is 5
 * bytes) cost gigabytes. So the text is first judged by a cheap scan —
 * lines plus flow separators `,[]{}` plus every `: ` after a line's first
 * against {@linkcode YAML_MAX_NODES}, and
 * nesting (indentation levels, `- ` entries on one line, flow brackets)
 * against {@linkcode YAML_MAX_DEPTH} — and refused before it is parsed. It
 * is then parsed with the library's check off and duplicate keys found in
 * one linear pass of our own, reported as the library would
 * (`DUPLICATE_KEY`, "Map keys must be unique"), the first one only.
 *
 * The node count does not weigh bytes, so a text is also held to
 * {@linkcode YAML_MAX_CHARS}; tags other than the JSON ones (`!!binary`,
 * `!!set`, `!custom`) are refused, not decoded; and aliases are weighed by
 * what they would copy when converted to plain values: a document whose
 * aliases would materialize more than {@linkcode YAML_MAX_CHARS} characters
 * in all is refused, and so is one past the library's
 * {@linkcode YAML_MAX_ALIAS_COUNT} (which the library reports by throwing).
 * These three are errors of the document, at the line of the first offender.
 *
 * The scan over-counts on purpose (a comma or bracket inside a quoted string
 * or a block scalar counts too): it bounds cost, it does not parse.
 *
 * @module
 */
import {
  Composer,
  Document,
  type DocumentOptions,
  type ErrorCode,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  type ParseOptions,
  Parser,
  type SchemaOptions,
  YAMLParseError,
} from "yaml";
import { PenguinError } from "../protocol/errors.ts";

/**
 * Lines plus flow separators a YAML text may hold. A quarter of the JSON
 * value bound: a parsed YAML node (with its source tokens) costs several
 * times a JSON value; 200 000 of them peak near 400 MB, 100 000 near 200 MB,
 * and a batch file of 49 000 tasks of two lines (99 000 nodes) took penguin
 * to 320 MB. A larger batch is a JSON-lines file.
 */
export const YAML_MAX_NODES = 50_000;
/**
 * The node bound of a configuration file (an agent's `system_config.yaml`,
 * `mcp_servers.yaml`, `GOAL.yaml`): a real one holds a few hundred; parsed a
 * few times over by `agent import`, 90 000 keys of a snapshot's config took
 * it to 418 MB.
 */
export const YAML_CONFIG_MAX_NODES = 20_000;
/** How deep a YAML text may nest (as JSON). */
export const YAML_MAX_DEPTH = 256;
/** How many times aliases may be expanded when converting to plain values. */
export const YAML_MAX_ALIAS_COUNT = 100;
/**
 * Characters a YAML text may hold, and characters its aliases may copy in
 * all. Real task and configuration files are kilobytes. The library builds
 * a double-quoted scalar one character at a time, near 40 bytes a character
 * until flattened: 8 Mi characters of one peaked at 375 MB, 4 Mi at 270 MB,
 * 2 Mi at 200 MB (at 64 MiB, one 60 MB quoted anchor took 2.1 GB).
 */
export const YAML_MAX_CHARS = 2 * 1024 * 1024;
/**
 * How many errors of one YAML text are kept (and shown): reading stops at
 * the next. The library makes an object of each (with an excerpt of the
 * text when pretty): 19 000 lines `- a: b: c: d: e: f` (400 KB, four errors
 * each) peaked at 356 MB.
 */
export const YAML_MAX_ERRORS = 20;
/** The tags a YAML text may name: JSON's kinds of value. */
const JSON_TAGS = new Set(
  ["str", "int", "float", "bool", "null", "map", "seq"].map((t) => `tag:yaml.org,2002:${t}`),
);

const NL = 0x0a,
  TAB = 0x09,
  COLON = 0x3a,
  SPACE = 0x20,
  HASH = 0x23,
  COMMA = 0x2c,
  DASH = 0x2d,
  QMARK = 0x3f;
const OPEN_SQ = 0x5b, CLOSE_SQ = 0x5d, OPEN_CURLY = 0x7b, CLOSE_CURLY = 0x7d, CR = 0x0d;

/**
 * Why `text` is too costly to parse as YAML (e.g. `more than 200000 YAML
 * nodes (lines and , [ ] { })`), or undefined when it is within the bounds.
 * One pass over the characters.
 */
export function yamlShapeProblem(
  text: string,
  maxNodes: number = YAML_MAX_NODES,
): string | undefined {
  let nodes = 0;
  let flow = 0;
  const indents: number[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    // Start of a line.
    let col = 0;
    while (i < n && text.charCodeAt(i) === SPACE) i++, col++;
    const first = i < n ? text.charCodeAt(i) : NL;
    const blank = first === NL || first === CR || first === HASH;
    if (!blank && flow === 0) {
      while (indents.length > 0 && indents[indents.length - 1]! >= col) indents.pop();
      indents.push(col);
      // `- - x` and `? x` nest on one line.
      while (
        i + 1 < n && (text.charCodeAt(i) === DASH || text.charCodeAt(i) === QMARK) &&
        text.charCodeAt(i + 1) === SPACE
      ) {
        i += 2, col += 2;
        while (i < n && text.charCodeAt(i) === SPACE) i++, col++;
        indents.push(col);
      }
    }
    let colons = 0;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === NL) break;
      if (c === COLON && flow === 0) {
        // `a: b: c: d` is a mapping a line deep per `: ` to the parser (and
        // an error each): every one after the first weighs a node.
        const next = i + 1 < n ? text.charCodeAt(i + 1) : NL;
        if ((next === SPACE || next === NL || next === CR || next === TAB) && colons++ > 0) {
          nodes++;
        }
        continue;
      }
      if (c === COMMA) nodes++;
      else if (c === OPEN_SQ || c === OPEN_CURLY) nodes++, flow++;
      else if (c === CLOSE_SQ || c === CLOSE_CURLY) nodes++, flow = flow > 0 ? flow - 1 : 0;
      else continue;
      if (indents.length + flow > YAML_MAX_DEPTH) {
        return `nested more than ${YAML_MAX_DEPTH} deep`;
      }
    }
    if (indents.length + flow > YAML_MAX_DEPTH) return `nested more than ${YAML_MAX_DEPTH} deep`;
    nodes++;
    if (nodes > maxNodes) {
      return `more than ${maxNodes} YAML nodes (lines, a line's later ": ", and , [ ] { })`;
    }
    i++;
  }
  return undefined;
}

/**
 * `parseDocument(text, options)` within the bounds above, else a
 * PenguinError of kind "data": "<what>: not parsed, too costly to parse:
 * <the bound passed>". Duplicate keys are in `doc.errors` as the library's
 * `uniqueKeys` check puts them (the errors sorted by position).
 *
 * At most {@linkcode YAML_MAX_ERRORS} errors are kept: composing stops at
 * the next one, and `doc.errors` ends with a `MORE_ERRORS` entry saying
 * reading stopped (the document's contents are then empty). Each kept error
 * names its line and column (`linePos`, and " at line L, column C" in the
 * message unless `prettyErrors` is false); the library's context excerpt
 * is not added.
 */
export function parseYamlDocument(
  text: string,
  what: string,
  options: Omit<ParseOptions, "uniqueKeys"> & { prettyErrors?: boolean; maxNodes?: number } = {},
): ReturnType<typeof parseDocument> {
  const { maxNodes, prettyErrors, ...parseOptions } = options;
  const problem = text.length > YAML_MAX_CHARS
    ? `more than ${YAML_MAX_CHARS / 1024 / 1024} Mi characters (${text.length})`
    : yamlShapeProblem(text, maxNodes);
  if (problem !== undefined) {
    throw new PenguinError("data", `${what}: not parsed, too costly to parse: ${problem}`);
  }
  const lineCounter = options.lineCounter ??
    (prettyErrors === false ? undefined : new LineCounter());
  const doc = composeBounded(text, {
    ...parseOptions,
    prettyErrors: false,
    uniqueKeys: false,
    // `!!binary` and the like stay unresolved (strings), and are refused below.
    resolveKnownTags: false,
  }, lineCounter);
  if (doc.errors.at(-1)?.code !== ("MORE_ERRORS" as ErrorCode)) {
    const found = contentError(doc);
    if (found !== undefined) doc.errors.push(found);
  }
  doc.errors.sort((a, b) => a.pos[0] - b.pos[0]);
  if (prettyErrors !== false && lineCounter) {
    for (const e of doc.errors) {
      const lp = lineCounter.linePos(e.pos[0]);
      e.linePos = [lp, lineCounter.linePos(e.pos[1])];
      if (e.code !== ("MORE_ERRORS" as ErrorCode)) {
        e.message += ` at line ${lp.line}, column ${lp.col}`;
      }
    }
  }
  return doc;
}

/** Thrown inside the composer once the error bound is passed. */
class TooManyErrors extends Error {}

/**
 * The library's `parseDocument` (one document; a second one is an error),
 * composed from its parser and composer so that composing stops once more
 * than {@linkcode YAML_MAX_ERRORS} errors were found: every error the
 * library finds is an object, and a 400 KB text of them cost 300 MB.
 */
function composeBounded(
  text: string,
  options: ParseOptions & DocumentOptions & SchemaOptions,
  lineCounter?: LineCounter,
): YamlDoc {
  const composer = new Composer(options);
  let count = 0;
  // Where the first error not kept is.
  let stoppedAt = 0;
  const over = (source: unknown) => {
    if (count++ < YAML_MAX_ERRORS) return;
    // As the library reads it: an offset, a range or a token.
    const at = typeof source === "number"
      ? source
      : Array.isArray(source)
      ? source[0]
      : (source as { offset?: unknown } | undefined)?.offset;
    // The library catches some errors and reports them again: the first is kept.
    if (count === YAML_MAX_ERRORS + 1) stoppedAt = typeof at === "number" ? at : 0;
    throw new TooManyErrors();
  };
  // The composer reports each problem through this (private) callback.
  const hooked = composer as unknown as {
    onError: (source: unknown, code: ErrorCode, message: string, warning?: boolean) => void;
    errors: YAMLParseError[];
  };
  const report = hooked.onError;
  hooked.onError = (source, code, message, warning) => {
    if (warning) return;
    over(source);
    report(source, code, message, false);
  };
  let doc: Document.Parsed | undefined;
  try {
    const tokens = new Parser(lineCounter?.addNewLine).parse(text);
    for (const token of tokens) {
      if (token.type === "error") over(token);
      for (const d of composer.next(token)) {
        if (doc !== undefined) return secondDocument(doc, d) as unknown as YamlDoc;
        doc = d;
      }
    }
    for (const d of composer.end(true, text.length)) {
      if (doc !== undefined) return secondDocument(doc, d) as unknown as YamlDoc;
      doc = d;
    }
    return doc as unknown as YamlDoc;
  } catch (err) {
    if (!(err instanceof TooManyErrors)) throw err;
    const stopped = new Document(null) as unknown as YamlDoc;
    const errors = [...(doc?.errors ?? []), ...hooked.errors].slice(0, YAML_MAX_ERRORS);
    errors.push(
      new YAMLParseError(
        [stoppedAt, stoppedAt + 1],
        "MORE_ERRORS" as ErrorCode,
        `more than ${YAML_MAX_ERRORS} errors; reading stopped`,
      ),
    );
    stopped.errors = errors;
    return stopped;
  }
}

function secondDocument(doc: Document.Parsed, second: Document.Parsed): Document.Parsed {
  doc.errors.push(
    new YAMLParseError(
      second.range.slice(0, 2) as [number, number],
      "MULTIPLE_DOCS",
      "Source contains multiple documents; please use YAML.parseAllDocuments()",
    ),
  );
  return doc;
}

/**
 * The plain value of a YAML text, as the library's `parse` gives it, within
 * the bounds: throws the first error (a PenguinError past the bounds, a
 * YAMLParseError for invalid YAML or a duplicate key).
 */
export function parseYaml(text: string, what: string, maxNodes?: number): unknown {
  const doc = parseYamlDocument(text, what, maxNodes === undefined ? {} : { maxNodes });
  if (doc.errors.length > 0) throw doc.errors[0];
  return doc.toJS({ maxAliasCount: YAML_MAX_ALIAS_COUNT });
}

type YamlDoc = ReturnType<typeof parseDocument>;

/**
 * The first problem of the parsed document besides the library's: a scalar
 * key written again in the same mapping (`DUPLICATE_KEY`) or a tag that is not
 * JSON's (`TAG_RESOLVE_FAILED`), the earliest in the text; else aliases
 * copying more than {@linkcode YAML_MAX_CHARS} characters (`BAD_ALIAS`). One
 * pass, a Set per mapping, one error kept.
 */
function contentError(doc: YamlDoc): YAMLParseError | undefined {
  // The earliest offender in the text: [offset, code, message].
  let best: [number, "TAG_RESOLVE_FAILED" | "DUPLICATE_KEY", string] | undefined;
  const note = (node: unknown, code: "TAG_RESOLVE_FAILED" | "DUPLICATE_KEY", msg: string) => {
    const start = (node as { range?: [number, number, number] }).range?.[0] ?? 0;
    if (best === undefined || start < best[0]) best = [start, code, msg];
  };
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    const tag = (isScalar(node) || isMap(node) || isSeq(node)) ? node.tag : undefined;
    if (tag !== undefined && !JSON_TAGS.has(tag)) {
      const shown = tag.replace(/^tag:yaml\.org,2002:/, "!!").slice(0, 80);
      note(node, "TAG_RESOLVE_FAILED", `The tag ${shown} is not allowed: only JSON values`);
    }
    if (isMap(node)) {
      const seen = new Set<unknown>();
      let dup = false;
      for (const pair of node.items) {
        const key = pair.key;
        if (isScalar(key)) {
          if (!dup && seen.has(key.value)) {
            dup = true;
            note(key, "DUPLICATE_KEY", "Map keys must be unique");
          }
          seen.add(key.value);
        }
        stack.push(key, pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) stack.push(isPair(item) ? item.value : item);
    }
  }
  if (best !== undefined) return new YAMLParseError([best[0], best[0] + 1], best[1], best[2]);
  return aliasCopyError(doc);
}

/**
 * An error at the first alias when the aliases of `doc` would copy more than
 * {@linkcode YAML_MAX_CHARS} characters in all (scalars as their source text,
 * aliases inside aliased nodes counted each time they are copied).
 */
function aliasCopyError(doc: YamlDoc): YAMLParseError | undefined {
  // By anchor name, the weight of the latest node so anchored.
  const weight = new Map<string, number>();
  let copied = 0;
  let firstAt: number | undefined;
  // Post-order over the tree in document order; an anchor is defined before
  // its aliases, so an alias's target is weighed by the time it is met.
  const visit = (node: unknown): number => {
    if (isAlias(node)) {
      firstAt ??= node.range?.[0] ?? 0;
      const w = weight.get(node.source) ?? 0;
      copied = Math.min(copied + w, Number.MAX_SAFE_INTEGER);
      return w;
    }
    let w = 1;
    if (isScalar(node)) {
      const v = node.value;
      w += typeof v === "string" ? v.length : 8;
    } else if (isMap(node)) {
      for (const pair of node.items) w += visit(pair.key) + visit(pair.value);
    } else if (isSeq(node)) {
      for (const item of node.items) w += visit(isPair(item) ? item.value : item);
    }
    w = Math.min(w, Number.MAX_SAFE_INTEGER);
    if ((isScalar(node) || isMap(node) || isSeq(node)) && node.anchor) weight.set(node.anchor, w);
    return w;
  };
  visit(doc.contents);
  if (firstAt === undefined) return undefined;
  const start = firstAt;
  if (copied <= YAML_MAX_CHARS) return aliasCountError(doc, start);
  return new YAMLParseError(
    [start, start + 1],
    "BAD_ALIAS",
    `Aliases would copy more than ${
      YAML_MAX_CHARS / 1024 / 1024
    } Mi characters of the anchored values (${copied})`,
  );
}

/**
 * An error at the first alias (`start`) when converting `doc` to plain
 * values trips the library's {@linkcode YAML_MAX_ALIAS_COUNT} check, which
 * throws a bare `ReferenceError`; it is then an error of the document, shown
 * at its line like the others. The conversion is bounded by the copy check
 * made before.
 */
function aliasCountError(doc: YamlDoc, start: number): YAMLParseError | undefined {
  try {
    doc.toJS({ maxAliasCount: YAML_MAX_ALIAS_COUNT });
    return undefined;
  } catch (err) {
    if (!(err instanceof ReferenceError)) throw err;
    return new YAMLParseError(
      [start, start + 1],
      "BAD_ALIAS",
      `Aliases would be expanded more than ${YAML_MAX_ALIAS_COUNT} times (${err.message})`,
    );
  }
}
