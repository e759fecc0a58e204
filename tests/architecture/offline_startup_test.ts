// The offline views (trace show, trace diff, trace export) start fast: the modules they load at startup
// — the static, non-type-only imports that `deno info` resolves from their command module —
// never include the model clients, the sandbox spawner and command sessions, the tool set, the tools barrel, the
// confined tool workers or the subagent runtime. They show tool calls with each tool's own
// preview (lib/agent/tool_previews.ts), so the tool files keep those behind a lazy `import()`
// taken when a call runs.
import assert from "node:assert/strict";
import { REPO } from "../support/cli.ts";
import { denoInfo, type Info } from "./_deno_info.ts";

/** Modules (paths under the repository, a trailing `/` for a folder) startup must not load. */
const HEAVY = [
  "lib/models/stream.ts",
  "lib/models/protocols/",
  "lib/sandbox/spawn.ts",
  "lib/sandbox/mod.ts",
  "lib/tools/command_session.ts",
  "lib/tools/mod.ts",
  "lib/tools/worker/",
  "lib/tools/host/",
  "lib/agent/toolset.ts",
  "lib/agent/subagents/registry.ts",
  "lib/agent/subagents/_child.ts",
  "lib/mcp/",
];

/**
 * Repository path → the chain of modules that loads it at startup (from the
 * entry); `dynamic` also follows literal `import()`s (what `deno compile`
 * bundles). Type-only imports are never followed: they load nothing.
 */
function reached(info: Info, dynamic: boolean): Map<string, string[]> {
  const modules = new Map(info.modules.map((m) => [m.specifier, m]));
  const local = (spec: string) =>
    spec.startsWith(`file://${REPO}`) ? spec.slice(7 + REPO.length) : spec;
  const chains = new Map<string, string[]>([[info.roots[0]!, [local(info.roots[0]!)]]]);
  const queue = [info.roots[0]!];
  while (queue.length > 0) {
    const from = queue.shift()!;
    for (const dep of modules.get(from)?.dependencies ?? []) {
      const to = dep.code?.specifier;
      if (!to || chains.has(to) || (dep.isDynamic && !dynamic)) continue;
      chains.set(to, [...chains.get(from)!, local(to)]);
      queue.push(to);
    }
  }
  return new Map([...chains].map(([spec, chain]) => [local(spec), chain]));
}

function heavyIn(startup: Map<string, string[]>): string[] {
  return [...startup].filter(([path]) =>
    HEAVY.some((h) => path === h || (h.endsWith("/") && path.startsWith(h)))
  )
    .map(([, chain]) => chain.join(" → "));
}

const OFFLINE_VIEWS = [
  "lib/cli/commands/trace_show.ts",
  "lib/cli/commands/trace_diff.ts",
  "lib/cli/commands/trace_export.ts",
];

for (const entry of OFFLINE_VIEWS) {
  Deno.test(`${entry} loads no model client, spawner or tool runtime at startup`, async () => {
    const info = await denoInfo(entry);
    const startup = reached(info, false);
    // The check sees the tool previews (so it is not blind to the tool files) …
    assert.ok(startup.has("lib/agent/tool_previews.ts"), [...startup.keys()].join("\n"));
    assert.ok(startup.has("lib/tools/exec_command.ts"));
    // … and none of what only running a call needs.
    assert.deepEqual(heavyIn(startup), [], "import these lazily (a literal import() where used)");
  });
}

Deno.test("the lazily loaded tool runtime is still in the graph deno compile bundles", async () => {
  const all = reached(await denoInfo("lib/cli/commands/trace_show.ts"), true);
  for (const path of ["lib/models/stream.ts", "lib/sandbox/mod.ts", "lib/sandbox/spawn.ts"]) {
    assert.ok(all.has(path), `${path} is not reached through a literal import()`);
  }
});
