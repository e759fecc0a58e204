// Architecture rules, checked by reading the source (std's _tools idea).
import assert from "node:assert/strict";
import { REPO } from "../support/cli.ts";

/** Lower layers first; a module may import only itself and layers before it. */
const LAYERS = [
  "protocol",
  "state",
  "trace",
  "models",
  "display",
  "sandbox",
  "tools",
  "mcp",
  "session",
  "agent",
  "inspect",
  "telemetry",
  "batch",
  "cli",
];

function* walk(dir: string): Generator<string> {
  for (const e of Deno.readDirSync(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) yield* walk(p);
    else if (e.name.endsWith(".ts")) yield p;
  }
}

interface Import {
  file: string;
  spec: string;
}

function imports(file: string): Import[] {
  const src = Deno.readTextFileSync(file);
  const out: Import[] = [];
  for (const m of src.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+["']([^"']+)["']/gm)) {
    out.push({ file, spec: m[1]! });
  }
  for (const m of src.matchAll(/^\s*import\s+["']([^"']+)["']/gm)) out.push({ file, spec: m[1]! });
  return out;
}

function layerOf(path: string): string | undefined {
  const m = path.match(/\/lib\/([^/]+)\//);
  return m ? m[1] : undefined;
}

const LIB = `${REPO}lib`;
const files = [...walk(LIB)];

Deno.test("lib/ modules import only their own layer and the layers below it", () => {
  const violations: string[] = [];
  for (const file of files) {
    const from = layerOf(file);
    if (!from) continue; // lib/mod.ts and lib/version.ts may import anything
    const fromRank = LAYERS.indexOf(from);
    assert.ok(fromRank >= 0, `${file}: lib/${from} is not a known layer; add it to LAYERS`);
    for (const imp of imports(file)) {
      if (!imp.spec.startsWith(".")) continue;
      const target = new URL(imp.spec, `file://${file}`).pathname;
      const to = layerOf(target);
      if (!to) continue;
      if (LAYERS.indexOf(to) > fromRank) {
        violations.push(`${file.slice(REPO.length)} imports lib/${to} (${imp.spec})`);
      }
    }
  }
  assert.deepEqual(violations, []);
});

Deno.test("lib/protocol is pure: no Deno APIs, no node I/O, only zod from outside", () => {
  const problems: string[] = [];
  for (const file of files.filter((f) => layerOf(f) === "protocol")) {
    const src = Deno.readTextFileSync(file);
    if (/\bDeno\./.test(src)) problems.push(`${file}: uses Deno.*`);
    for (const imp of imports(file)) {
      if (!imp.spec.startsWith(".") && imp.spec !== "zod") {
        problems.push(`${file}: imports ${imp.spec}`);
      }
    }
  }
  assert.deepEqual(problems, []);
});

Deno.test("only lib/sandbox constructs a Deno.Command, and no module uses a computed import()", () => {
  const problems: string[] = [];
  for (const file of files) {
    const src = Deno.readTextFileSync(file);
    if (/new\s+Deno\.Command\b/.test(src) && layerOf(file) !== "sandbox") {
      problems.push(`${file}: new Deno.Command`);
    }
    for (const m of src.matchAll(/\bimport\(\s*([^)]*)\)/g)) {
      if (!/^["'][^"']+["']$/.test(m[1]!.trim())) {
        problems.push(`${file}: computed import(${m[1]})`);
      }
    }
  }
  assert.deepEqual(problems, []);
});

Deno.test("only lib/cli calls Deno.exit", () => {
  const offenders = files.filter((f) =>
    layerOf(f) !== "cli" && /\bDeno\.exit\(/.test(Deno.readTextFileSync(f))
  );
  assert.deepEqual(offenders, []);
});

Deno.test("there is no package.json anywhere in the repository", () => {
  const found: string[] = [];
  const skip = new Set([".git", "node_modules", "dist"]);
  const visit = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      if (skip.has(e.name)) continue;
      if (e.isDirectory) visit(`${dir}/${e.name}`);
      else if (e.name === "package.json") found.push(`${dir}/${e.name}`);
    }
  };
  visit(REPO.replace(/\/$/, ""));
  assert.deepEqual(found, []);
});

Deno.test("the MCP client is the official SDK, used only by lib/mcp, and never starts a process itself", () => {
  const problems: string[] = [];
  for (const file of files) {
    for (const imp of imports(file)) {
      const sdk = /^(npm:\/?)?@modelcontextprotocol\/sdk\b/.test(imp.spec);
      if (sdk && layerOf(file) !== "mcp") problems.push(`${file}: imports ${imp.spec}`);
      // The SDK's stdio client transport spawns servers with the user's full rights.
      if (sdk && /\/client\/stdio(\.js)?$/.test(imp.spec)) {
        problems.push(`${file}: imports ${imp.spec}`);
      }
      if (/^(node:)?child_process$/.test(imp.spec)) problems.push(`${file}: imports ${imp.spec}`);
    }
  }
  assert.deepEqual(problems, []);
  const transport = Deno.readTextFileSync(`${LIB}/mcp/stdio_transport.ts`);
  assert.match(
    transport,
    /spawnSandboxed\(/,
    "the stdio transport starts servers through lib/sandbox",
  );
});
