// The import graph of a source tree, read from the text of its modules, and
// the cycles in it.

/** Module path → the paths of the modules it imports (relative specifiers only). */
export type ImportGraph = Map<string, string[]>;

function* walk(dir: string): Generator<string> {
  for (const e of [...Deno.readDirSync(dir)].sort((a, b) => a.name.localeCompare(b.name))) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) yield* walk(p);
    else if (e.name.endsWith(".ts")) yield p;
  }
}

/**
 * The specifiers a module's source imports: `import … from`, `export … from`,
 * side-effect `import "…"`, and `import("…")` with a literal (type-only
 * imports count: they tie the modules together just the same).
 */
export function importSpecifiers(src: string): string[] {
  const out: string[] = [];
  for (const m of src.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+["']([^"']+)["']/gm)) {
    out.push(m[1]!);
  }
  for (const m of src.matchAll(/^\s*import\s+["']([^"']+)["']/gm)) out.push(m[1]!);
  for (const m of src.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) out.push(m[1]!);
  return out;
}

/** The graph of every `.ts` module under `dir`, edges to modules outside `dir` dropped. */
export function importGraph(dir: string): ImportGraph {
  const graph: ImportGraph = new Map();
  const files = [...walk(dir)];
  const known = new Set(files);
  for (const file of files) {
    const targets = new Set<string>();
    for (const spec of importSpecifiers(Deno.readTextFileSync(file))) {
      if (!spec.startsWith(".")) continue;
      const target = new URL(spec, `file://${file}`).pathname;
      if (known.has(target)) targets.add(target);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** Strongly connected components (Tarjan), each as a set of nodes. */
function components(graph: ImportGraph): Set<string>[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: Set<string>[] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc = new Set<string>();
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.add(w);
      } while (w !== v);
      out.push(scc);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

/** The shortest path from `start` back to itself inside `scc` (breadth-first). */
function shortestLoop(graph: ImportGraph, scc: Set<string>, start: string): string[] {
  const parent = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!scc.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let at = v; at !== start; at = parent.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!parent.has(w)) {
        parent.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

/**
 * One closed path (`a → b → … → a`) for each group of modules that import
 * each other, starting at the group's first module by name; groups in name
 * order. Empty when the graph is acyclic.
 */
export function findCycles(graph: ImportGraph): string[][] {
  const cycles: string[][] = [];
  for (const scc of components(graph)) {
    const [first] = [...scc].sort();
    if (scc.size === 1 && !(graph.get(first!) ?? []).includes(first!)) continue;
    cycles.push(shortestLoop(graph, scc, first!));
  }
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}
