// What a real `penguin run` opens: with an unchanged system_config.yaml (its parsed value cached)
// neither a new task nor a `--resume` reads a file of the `yaml` package (start_imports_test.ts
// checks the static graph; this checks the imports taken at run time). The run that finds the
// file changed parses it, and opens the package: the check is not blind.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addServerModel, visibleTempDir } from "../support/roots.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { denoDir, penguinArgv, penguinEnv } from "../support/cli.ts";

const HAS_STRACE = await Deno.stat("/usr/bin/strace").then(() => true, () => false);

/** The `yaml` package files `penguin <args>` opens, run in `cwd` under strace; asserts it exits 0. */
async function yamlFilesOpened(args: string[], env: Record<string, string>, cwd: string) {
  const log = join(cwd, "..", "strace.log");
  const out = await new Deno.Command("/usr/bin/strace", {
    args: [
      "-f",
      "-qq",
      "-e",
      "trace=openat",
      "-o",
      log,
      Deno.execPath(),
      ...penguinArgv(),
      ...args,
    ],
    cwd,
    env: penguinEnv(env),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const npm = join(denoDir(), "npm") + "/";
  const opened = (await Deno.readTextFile(log)).matchAll(/openat\([^"]*"([^"]+)"[^)]*\) = \d/g);
  return [...opened].map((m) => m[1]!).filter((p) =>
    p.startsWith(npm) && /\/yaml\/[^/]+\/.*\.(c?js|mjs)$/.test(p)
  );
}

Deno.test({
  name: "penguin run and --resume load no yaml when system_config.yaml is unchanged",
  ignore: !HAS_STRACE,
  fn: async () => {
    const base = await visibleTempDir("penguin-yaml-start-");
    const server = await startModelServer({ handler: () => turn.text("done"), maxRequests: 20 });
    try {
      const env = { PENGUIN_RUN_DIR: join(base, "run") };
      const root = join(base, "root");
      const ws = join(base, "ws");
      await Deno.mkdir(ws);
      await addServerModel(root, server);
      const run = ["--root", root, "run", "--workspace", ws, "--approve", "allow-all", "-m", "hi"];
      // The first run creates the agent (and writes its file with the yaml library).
      await yamlFilesOpened(run, env, ws);
      const config = join(root, "default_project/agents/default_agent/agent_state");
      await Deno.writeTextFile(
        join(config, "system_config.yaml"),
        (await Deno.readTextFile(join(config, "system_config.yaml"))) + "# changed\n",
      );
      const parsed = await yamlFilesOpened(run, env, ws);
      assert.ok(parsed.length > 0, "a changed file is parsed: the check sees the package");
      assert.deepEqual(await yamlFilesOpened(run, env, ws), [], "a new task");
      const resume = ["--root", root, "run", "--resume", "latest", "-m", "go"];
      assert.deepEqual(await yamlFilesOpened(resume, env, ws), [], "a resume");
    } finally {
      await server.close();
      await Deno.remove(base, { recursive: true });
    }
  },
});
