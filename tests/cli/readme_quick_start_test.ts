// The README's two-command quick start holds on a fresh machine, as far as a test can go without
// a vendor's key or the network: its penguin steps are read from the README, the model step runs
// in an empty HOME and writes the default model the run step then uses, the run step's flags
// parse, and the second command names a task deno.json has.
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { REPO, runCli } from "../support/cli.ts";

/** The sh block under "## Quick start": its lines. */
async function quickStart(): Promise<string[]> {
  const readme = await Deno.readTextFile(join(REPO, "README.md"));
  const section = readme.split(/^## Quick start$/m)[1]?.split(/^### /m)[0];
  assert.ok(section, 'README.md has a "## Quick start" section');
  const block = /^```sh\n([\s\S]*?)^```$/m.exec(section)?.[1];
  assert.ok(block, "the section has a sh block");
  return block.trim().split("\n");
}

Deno.test("the quick start is two commands: install-configure-run, then the test task", async () => {
  const lines = await quickStart();
  assert.equal(lines.length, 2, lines.join("\n"));
  const task = /^deno task (\S+)$/.exec(lines[1]!)?.[1];
  assert.ok(task, lines[1]);
  const config = JSON.parse(await Deno.readTextFile(join(REPO, "deno.json")));
  assert.ok(config.tasks[task], `deno.json has the task "${task}"`);
});

Deno.test("the quick start's penguin steps work in an empty HOME", async () => {
  const [first] = await quickStart();
  const steps = first!.split(" && ");
  const penguin = steps.map((s) => /deno task penguin (.*)$/.exec(s)?.[1]).filter((s) =>
    s !== undefined
  );
  assert.equal(penguin.length, 2, `a model step and a run step: ${first}`);
  const [add, run] = penguin as [string, string];
  assert.match(add, /^config model add /);
  assert.match(run, /^run /);
  const home = await Deno.makeTempDir({ prefix: "penguin-quick-start-" });
  try {
    const r = await runCli(add.split(" "), { env: { HOME: home }, clearEnv: true });
    assert.equal(r.code, 0, r.stderr);
    const cfg = parseToml(
      await Deno.readTextFile(join(home, ".penguin/data/default_project/.project_config.toml")),
    ) as { default_model?: { provider?: string; model_id?: string } };
    const provider = /--provider (\S+)/.exec(add)?.[1];
    const model = /--model-id (\S+)/.exec(add)?.[1];
    assert.deepEqual({ ...cfg.default_model }, { provider, model_id: model });
    // The run step's words, without the network: its flags parse, and it stops at the first
    // check after parsing (a workspace that does not exist), before any model request.
    const words = run.match(/"[^"]*"|\S+/g)!.map((w) => w.replace(/^"|"$/g, ""));
    const missing = join(home, "no-such-workspace");
    const r2 = await runCli([...words, "--workspace", missing], {
      env: { HOME: home },
      clearEnv: true,
    });
    assert.equal(r2.code, 2, r2.stderr);
    assert.match(r2.stderr, /^penguin: run: the workspace does not exist: /);
    // The key variable the run step sets is the one the provider group reads.
    assert.ok(first!.includes(`${provider!.toUpperCase()}_API_KEY=`), first);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
