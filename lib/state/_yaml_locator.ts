/**
 * Where a value of a parsed YAML document is written: a {@linkcode Locator}
 * walking the document's nodes and mapping offsets to lines, for the config
 * errors of _config_errors.ts.
 *
 * @module
 */
import { isMap, isScalar, isSeq, type LineCounter, type Node, type Pair } from "yaml";
import type { Locator } from "./_config_errors.ts";

/** A {@linkcode Locator} over a parsed YAML document. */
export function yamlLocator(contents: unknown, lineCounter: LineCounter): Locator {
  return (path) => {
    let node: unknown = contents;
    let offset: number | undefined = (node as Node | null)?.range?.[0];
    let matched = 0;
    for (let i = 0; i < path.length; i++) {
      const seg = path[i];
      const last = i === path.length - 1;
      if (isMap(node)) {
        const pair = (node.items as Pair[]).find((p) =>
          (isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(seg)
        );
        if (!pair) break;
        matched++;
        offset = (pair.key as Node | null)?.range?.[0] ?? offset;
        node = pair.value;
        const valueOffset = (node as Node | null)?.range?.[0];
        if (last && valueOffset !== undefined && !isMap(node) && !isSeq(node)) offset = valueOffset;
      } else if (isSeq(node) && typeof seg === "number") {
        const item = node.items[seg];
        if (item === undefined) break;
        matched++;
        node = item;
        offset = (item as Node | null)?.range?.[0] ?? offset;
      } else break;
    }
    if (offset === undefined || (matched === 0 && path.length > 0)) return undefined;
    const lp = lineCounter.linePos(offset);
    return { line: lp.line, column: lp.col };
  };
}
