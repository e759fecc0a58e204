// What `penguin --version` and `penguin run` (a new task or `--resume`) load before their first
// line runs: the static imports `deno info` resolves from main.ts, and from the dispatcher and
// the run command module it loads for `run`. `--version` loads main.ts and lib/version.ts only;
// `run` loads none of the heavy dependencies it needs only later or only for other commands —
// each stays behind a literal `import()` where it is used, so `deno compile` still embeds it
// (the last test checks that every one is still in the graph from main.ts).
import assert from "node:assert/strict";
import { REPO } from "../support/cli.ts";
import { denoInfo, type Info } from "./_deno_info.ts";

/**
 * npm packages, node: built-ins and repository modules (a trailing `/`: a folder) that the
 * start of `penguin run` must not load, and why each is heavy.
 */
const HEAVY: Record<string, string> = {
  "npm:@modelcontextprotocol/sdk": "the MCP SDK: only for configured MCP servers",
  "npm:@opentelemetry/otlp-transformer": "OpenTelemetry: only for trace export",
  "npm:playwright-core": "the browser: only for browser tools",
  "npm:kubernetes-models": "only for batch on Kubernetes",
  "npm:nanotar": "an archive reader: only for archives",
  "npm:modern-tar": "an archive writer: only for snapshots",
  "node:crypto": "Node's crypto and streams: only for live telemetry span ids",
  "lib/telemetry/live.ts": "the span exporter: only when an endpoint is configured",
  "lib/session/import_foreign.ts": "session import: only for `sessions import`",
  "lib/state/schedule.ts": "schedules: only for the scheduler",
  "npm:marked": "the Markdown lexer: only once a colour terminal or an HTML export renders",
  "npm:jsonc-parser": "penguin.jsonc's parser: only when a workspace has the file",
  "lib/sandbox/_workspace_policy_parse.ts":
    "penguin.jsonc's parser and zod schemas (built at import): only when a workspace has the file",
  "lib/inspect/markdown_html.ts": "Markdown as HTML: only for `trace export --format html`",
  "npm:yaml":
    "the YAML library (74 CommonJS files): only when a YAML file is parsed (a changed system_config.yaml, a goal, MCP warnings)",
  "lib/agent/goal.ts": "the goal loop and GOAL.yaml's parser: only for --goal",
  "lib/models/protocols/openai_responses.ts":
    "a wire protocol the session may not speak: loaded for the first request that does",
  "lib/models/protocols/anthropic_messages.ts":
    "a wire protocol the session may not speak: loaded for the first request that does",
  "lib/models/protocols/gemini.ts":
    "a wire protocol the session may not speak: loaded for the first request that does",
  "lib/models/protocols/openai_chat.ts":
    "a wire protocol the session may not speak: loaded for the first request that does",
  "lib/models/protocols/mod.ts": "the wire modules' barrel (every protocol): load one by its id",
  "lib/cli/_approval_display.ts":
    "an approval's details (diffs, redaction): only once a person is asked",
  "lib/state/_unpack.ts": "the tar and gzip readers: only when a skill archive is installed",
  "lib/cli/commands/config.ts": "the config command: only when a first model is added",
  "lib/protocol/validate.ts":
    "the message schemas (zod, built at import): only when a trace is read and validated",
  "lib/inspect/recorded_calls.ts": "a trace's recorded calls: only when a session is resumed",
  "lib/mcp/_source_open.ts":
    "connecting MCP servers (their tools, results, failure memory): only for configured servers",
  "lib/state/mcp_servers.ts": "the MCP entries' reader: only for an agent that has entries",
  "lib/mcp/secrets.ts": "the MCP entries' secrets: only for an agent that has entries",
  "lib/agent/subagents/_child.ts": "a subagent's own state and stream: only once one is started",
  "lib/state/_project_config_splice.ts":
    "the project configuration's editor: only when a command writes the file",
  "lib/tools/mod.ts": "the tool layer's barrel: import by name from the defining file",
  "lib/sandbox/mod.ts": "the sandbox's barrel (spawners, pager, detection): import by name",
};

/** The package of an npm specifier (`npm:/@scope/name@^1/sub.js` → `npm:@scope/name`). */
function npmPackage(spec: string): string | undefined {
  const m = /^npm:\/?((?:@[^@/]+\/)?[^@/]+)/.exec(spec);
  return m ? `npm:${m[1]}` : undefined;
}

/** What a module specifier is, in HEAVY's terms: a repository path, npm package or built-in. */
function nameOf(spec: string): string {
  if (spec.startsWith(`file://${REPO}`)) return spec.slice(7 + REPO.length);
  return npmPackage(spec) ?? spec;
}

/**
 * Every module `entries` reach (their static imports; with `dynamic`, literal `import()`s
 * too), each with the chain of modules that loads it. Type-only imports load nothing and
 * `deno info` lists them apart (`type`), so they are not followed.
 */
function reached(infos: Info[], dynamic: boolean): Map<string, string[]> {
  const chains = new Map<string, string[]>();
  for (const info of infos) {
    const modules = new Map(info.modules.map((m) => [m.specifier, m]));
    const root = info.roots[0]!;
    const local = new Map<string, string[]>([[root, [nameOf(root)]]]);
    const queue = [root];
    while (queue.length > 0) {
      const from = queue.shift()!;
      for (const dep of modules.get(from)?.dependencies ?? []) {
        const to = dep.code?.specifier;
        if (!to || local.has(to) || (dep.isDynamic && !dynamic)) continue;
        local.set(to, [...local.get(from)!, nameOf(to)]);
        queue.push(to);
      }
    }
    for (const [spec, chain] of local) {
      if (!chains.has(nameOf(spec))) chains.set(nameOf(spec), chain);
    }
  }
  return chains;
}

function heavyIn(startup: Map<string, string[]>): string[] {
  return [...startup]
    .filter(([name]) =>
      Object.keys(HEAVY).some((h) => name === h || (h.endsWith("/") && name.startsWith(h)))
    )
    .map(([name, chain]) => `${chain.join(" → ")} (${HEAVY[name]})`);
}

Deno.test("penguin --version loads main.ts and lib/version.ts, nothing else", async () => {
  const startup = reached([await denoInfo("main.ts")], false);
  assert.deepEqual([...startup.keys()].sort(), ["lib/version.ts", "main.ts"]);
});

Deno.test("penguin run loads none of the heavy dependencies before its first request", async () => {
  const startup = reached(
    [await denoInfo("lib/cli/mod.ts"), await denoInfo("lib/cli/commands/run.ts")],
    false,
  );
  // The check sees the run path (so it is not blind) …
  for (const seen of ["lib/agent/run_task.ts", "lib/telemetry/config.ts", "npm:zod"]) {
    assert.ok(startup.has(seen), `${seen} is not reached: ${[...startup.keys()].join(" ")}`);
  }
  // … and none of what it needs only later or for other commands.
  assert.deepEqual(heavyIn(startup), [], "import these lazily (a literal import() where used)");
});

/** The HEAVY entries penguin uses, deferred (the rest only tests and scripts import today). */
const DEFERRED = [
  "npm:@modelcontextprotocol/sdk",
  "npm:modern-tar",
  "node:crypto",
  "lib/telemetry/live.ts",
  "lib/session/import_foreign.ts",
  "lib/state/schedule.ts",
  "npm:marked",
  "npm:jsonc-parser",
  "lib/sandbox/_workspace_policy_parse.ts",
  "npm:yaml",
  "lib/agent/goal.ts",
  "lib/models/protocols/openai_responses.ts",
  "lib/models/protocols/anthropic_messages.ts",
  "lib/models/protocols/gemini.ts",
  "lib/models/protocols/openai_chat.ts",
  "lib/cli/_approval_display.ts",
  "lib/state/_unpack.ts",
  "lib/cli/commands/config.ts",
  "lib/protocol/validate.ts",
  "lib/inspect/recorded_calls.ts",
  "lib/mcp/_source_open.ts",
  "lib/state/mcp_servers.ts",
  "lib/mcp/secrets.ts",
  "lib/agent/subagents/_child.ts",
  "lib/state/_project_config_splice.ts",
];

Deno.test("every deferred module is still in the graph deno compile bundles", async () => {
  const all = reached([await denoInfo("main.ts")], true);
  const missing = DEFERRED.filter((h) => !all.has(h));
  assert.deepEqual(missing, [], "not reached from main.ts through literal imports");
});
