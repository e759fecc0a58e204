// Every `--json` output of the CLI uses snake_case keys (issue 13), like the
// trace records themselves. Each command that prints JSON runs here on real
// data: sessions recorded by `penguin run` against the scripted model server.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { turn } from "../support/model_server.ts";
import { allCommands } from "../../lib/cli/registry.ts";
import { withModelRoot } from "../support/roots.ts";
import { wroteA } from "../support/wrote_a.ts";

const SNAKE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

/**
 * Subtrees that are data rather than penguin's own shape, as `key` at any
 * depth: a tool's JSON Schema (`parameters`), whose keywords (`additionalProperties`) are
 * fixed by the JSON Schema standard.
 */
const DATA_SUBTREES = new Set(["parameters"]);

/** The paths of every key in `value` that is not snake_case. */
function badKeys(value: unknown, path = "$"): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => badKeys(v, `${path}[${i}]`));
  if (value === null || typeof value !== "object") return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if (!SNAKE.test(k)) out.push(`${path}.${k}`);
    if (!DATA_SUBTREES.has(k)) out.push(...badKeys(v, `${path}.${k}`));
  }
  return out;
}

/** Parse one JSON document, or JSON Lines. */
function parseJsonOutput(text: string): unknown[] {
  try {
    return [JSON.parse(text)];
  } catch {
    return text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
  }
}

Deno.test("every --json output of the CLI uses snake_case keys", async () => {
  await withModelRoot({
    turns: [
      ...wroteA(),
      turn.text("Second."),
      turn.text("pong"),
      turn.text("[summary]state[/summary]"),
      turn.text("batch done"),
    ],
  }, async (sb) => {
    const cli = (args: string[]) => runCli(["--root", sb.root, ...args], { cwd: sb.workspace });
    const seen = new Map<string, unknown[]>();
    const json = async (args: string[], codes = [0]) => {
      const r = await cli(args);
      assert.ok(codes.includes(r.code), `${args.join(" ")}: exit ${r.code}: ${r.stderr}`);
      const docs = parseJsonOutput(r.stdout);
      assert.ok(docs.length > 0, `${args.join(" ")} printed JSON`);
      seen.set(args.join(" "), docs);
      return docs;
    };

    const first = await cli(["run", "-m", "Write a."]);
    assert.equal(first.code, 0, first.stderr);
    const id = /^Session: (session-\S+)$/m.exec(first.stderr)![1]!;
    await json(["run", "--json", "-m", "Second task."]);
    await cli(["config", "vault", "set", "--key", "API_TOKEN", "--value", "s3cret"]);

    const [forked] = await json(["sessions", "fork", id, "--before", "1", "--json"]) as {
      session_id: string;
    }[];
    await json(["sessions", "clone", id, "--json"]);
    await json(["sessions", "list", "--json"]);
    await json(["sessions", "list", "--all", "--json"]);
    await json(["sessions", "show", id, "--json"]);
    await json(["sessions", "tree", "--json"]);
    const traceFile = join(sb.root, "export.jsonl");
    await json(["trace", "export", id, "--format", "json"]);
    const raw = await cli(["trace", "show", "--json", id]);
    await Deno.writeTextFile(traceFile, raw.stdout);
    await json(["trace", "show", "--json", id]);
    await json(["sessions", "import", traceFile, "--json"]);
    await json(["sessions", "delete", "--yes", "--json", forked!.session_id]);
    await json(["trace", "validate", "--json", sb.root]);
    await json(["trace", "stats", "--json", id]);
    for (const by of ["day", "model", "tool", "session", "agent"]) {
      await json(["trace", "stats", "--json", "--by", by]);
    }
    await json(["trace", "diff", "--json", id, "latest"], [0, 1]);
    await json(["config", "model", "list", "--json"]);
    await json(["config", "vault", "list", "--json"]);
    await json(["models", "list", "--json"]);
    await json(["models", "test", "--provider", "custom", "--model-id", "m", "--json"]);
    await json(["sandbox", "check", "--json"], [0, 1]);
    await json(["sessions", "compact", id, "--json"]);
    await json(["mcp", "list", "--json"]);
    await json(["skills", "list", "--json"]);
    const scheduleDir = join(
      sb.root,
      "default_project",
      "agents",
      "default_agent",
      "agent_state",
      "schedule",
    );
    await Deno.mkdir(scheduleDir, { recursive: true });
    await Deno.writeTextFile(
      join(scheduleDir, "daily.toml"),
      'prompt = "x"\nstart_at = 2026-01-01T00:00:00Z\nperiod = "1d"\nprovider = "custom"\nmodel_id = "m"\n',
    );
    await json(["schedules", "list", "--json"]);
    await json(["memory", "list", "--json"]);
    const tasks = join(sb.root, "..", "tasks.yaml");
    await Deno.writeTextFile(
      tasks,
      "tasks:\n  - {id: one, prompt: say done, workspace: batch-ws}\n",
    );
    await json(["batch", "run", tasks, "--json"]);
    await json(["batch", "report", `${tasks}.results.jsonl`, "--json"]);

    // Every command with a --json flag ran above.
    const withJson = (await allCommands()).filter((c) => /--json\b/.test(c.help))
      .map((c) => c.path.join(" "));
    const ran = [...seen.keys()];
    for (const c of withJson) {
      if (c === "trace follow") continue; // the same raw records as trace show --json
      assert.ok(ran.some((r) => r.startsWith(c + " ")), `${c} --json is covered`);
    }

    const problems: string[] = [];
    for (const [args, docs] of seen) {
      // The vault's keys are the user's variable names, not penguin's keys.
      const checked = args.startsWith("config vault list") ? [] : docs;
      for (const bad of checked.flatMap((d) => badKeys(d))) problems.push(`${args}: ${bad}`);
    }
    assert.deepEqual(problems, []);
  });
});
