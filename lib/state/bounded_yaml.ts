/**
 * YAML parsing of text someone else may have written (a model's `GOAL.yaml`,
 * a snapshot's `system_config.yaml`, a batch task file), bounded in cost.
 *
 * The `yaml` library's own duplicate-key check compares each new mapping key
 * with every earlier one, so one mapping of 90 000 keys (under 1 MiB) costs
 * minutes of a blocked event loop; and millions of small nodes (`- {}` is 5
 * bytes) cost gigabytes. So the text is first judged by a cheap scan —
 * lines plus flow separators `,[]{}` against {@linkcode YAML_MAX_NODES}, and
 * nesting (indentation levels, `- ` entries on one line, flow brackets)
 * against {@linkcode YAML_MAX_DEPTH} — and refused before it is parsed. It
 * is then parsed with the library's check off and duplicate keys found in
 * one linear pass of our own, reported as the library would
 * (`DUPLICATE_KEY`, "Map keys must be unique"). Aliases expand at most
 * {@linkcode YAML_MAX_ALIAS_COUNT} times when converted to plain values.
 *
 * The scan over-counts on purpose (a comma or bracket inside a quoted string
 * or a block scalar counts too): it bounds cost, it does not parse.
 *
 * @module
 */
import {
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  type ParseOptions,
  YAMLParseError,
} from "yaml";
import { PenguinError } from "../protocol/errors.ts";

/**
 * Lines plus flow separators a YAML text may hold. Half the JSON value bound:
 * a parsed YAML node (with its source tokens) costs several times a JSON
 * value; 200 000 of them peak near 400 MB, 100 000 near 200 MB.
 */
export const YAML_MAX_NODES = 100_000;
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

const NL = 0x0a, SPACE = 0x20, HASH = 0x23, COMMA = 0x2c, DASH = 0x2d, QMARK = 0x3f;
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
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === NL) break;
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
      return `more than ${maxNodes} YAML nodes (lines and , [ ] { })`;
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
 */
export function parseYamlDocument(
  text: string,
  what: string,
  options: Omit<ParseOptions, "uniqueKeys"> & { prettyErrors?: boolean; maxNodes?: number } = {},
): ReturnType<typeof parseDocument> {
  const { maxNodes, ...parseOptions } = options;
  const problem = yamlShapeProblem(text, maxNodes);
  if (problem !== undefined) {
    throw new PenguinError("data", `${what}: not parsed, too costly to parse: ${problem}`);
  }
  const lineCounter = options.lineCounter ??
    (options.prettyErrors === false ? undefined : new LineCounter());
  const doc = parseDocument(text, {
    ...parseOptions,
    ...(lineCounter ? { lineCounter } : {}),
    uniqueKeys: false,
  });
  const dups = duplicateKeyErrors(doc);
  if (dups.length > 0) {
    if (options.prettyErrors !== false && lineCounter) {
      for (const e of dups) {
        const lp = lineCounter.linePos(e.pos[0]);
        e.linePos = [lp, lineCounter.linePos(e.pos[1])];
        e.message += ` at line ${lp.line}, column ${lp.col}`;
      }
    }
    doc.errors.push(...dups);
    doc.errors.sort((a, b) => a.pos[0] - b.pos[0]);
  }
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

/** One error per scalar key written again in the same mapping: one pass, a Set per mapping. */
function duplicateKeyErrors(doc: ReturnType<typeof parseDocument>): YAMLParseError[] {
  const out: YAMLParseError[] = [];
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        const key = pair.key;
        if (isScalar(key)) {
          if (seen.has(key.value)) {
            const at = key.range?.[0] ?? 0;
            out.push(
              new YAMLParseError([at, at + 1], "DUPLICATE_KEY", "Map keys must be unique"),
            );
          } else seen.add(key.value);
        } else stack.push(key);
        stack.push(pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) stack.push(isPair(item) ? item.value : item);
    }
  }
  return out;
}
