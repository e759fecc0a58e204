// A command loads only what it needs. main.ts and the dispatcher (lib/cli/mod.ts) reach the
// command implementations only through literal `import()`s (lib/cli/registry.ts), and penguin
// run from source (the `penguin` task, the launcher `deno task install` writes from it, the
// copies penguin starts of itself) passes `--unstable-lazy-dynamic-imports`: without it
// `deno run` reads and analyses every module a literal `import()` names, the whole graph,
// before the first line runs. `deno compile` must not get it: it then leaves those modules out
// of the binary. (That every import() names its module with a literal, which the binary embeds,
// is checked in layering_test.ts.)
import assert from "node:assert/strict";
import { penguinArgv, REPO } from "../support/cli.ts";
import { selfArgv } from "../../lib/tools/host/self.ts";
import { compileArgs } from "../../scripts/compile.ts";
import { taskFlags } from "../../scripts/install.ts";
import { denoInfo } from "./_deno_info.ts";

const LAZY = "--unstable-lazy-dynamic-imports";

/** The repository paths `entry` reaches: by static imports only, or also by `import()`. */
async function reached(entry: string, dynamic: boolean): Promise<Set<string>> {
  const modules = new Map((await denoInfo(entry)).modules.map((m) => [m.specifier, m]));
  const root = `file://${REPO}${entry}`;
  const seen = new Set([root]);
  const queue = [root];
  while (queue.length > 0) {
    for (const dep of modules.get(queue.shift()!)?.dependencies ?? []) {
      const to = dep.code?.specifier;
      if (!to || seen.has(to) || (dep.isDynamic && !dynamic)) continue;
      seen.add(to);
      queue.push(to);
    }
  }
  const prefix = `file://${REPO}`;
  return new Set([...seen].filter((s) => s.startsWith(prefix)).map((s) => s.slice(prefix.length)));
}

/** The command implementation modules: lib/cli/commands/*.ts. */
function commandModules(): string[] {
  return [...Deno.readDirSync(`${REPO}lib/cli/commands`)]
    .filter((e) => e.isFile && e.name.endsWith(".ts"))
    .map((e) => `lib/cli/commands/${e.name}`)
    .sort();
}

Deno.test("main.ts and the dispatcher import no command implementation statically", async () => {
  const commands = new Set(commandModules());
  for (const entry of ["main.ts", "lib/cli/mod.ts"]) {
    const startup = await reached(entry, false);
    // main.ts reaches the dispatcher itself through import() (see start_imports_test.ts).
    if (entry !== "main.ts") {
      assert.ok(startup.has("lib/cli/registry.ts"), `${entry} does not reach the registry`);
    }
    const loaded = [...startup].filter((p) => commands.has(p) || p.startsWith("lib/agent/"));
    assert.deepEqual(loaded, [], `${entry} loads these at startup: load them in a registry entry`);
  }
});

Deno.test("every command module is still in the graph deno compile bundles", async () => {
  const all = await reached("main.ts", true);
  const missing = commandModules().filter((p) => !all.has(p));
  assert.deepEqual(missing, [], "not reached from main.ts through literal imports");
});

Deno.test("penguin from source loads dynamic imports lazily; deno compile does not", async () => {
  const task = taskFlags(await Deno.readTextFile(`${REPO}deno.json`));
  assert.ok(task.includes(LAZY), `the penguin task lacks ${LAZY}: ${task.join(" ")}`);
  assert.ok(penguinArgv().includes(LAZY));
  if (!Deno.build.standalone) assert.ok(selfArgv(["--version"]).includes(LAZY));
  assert.ok(!compileArgs("/tmp/out").includes(LAZY), "compile would leave out the commands");
});

Deno.test("under the task's flags an import() not taken is never fetched", async () => {
  // Deno itself decides what a flag does: a remote module the entry could import, but does not,
  // is requested from this server only when deno run walks the whole graph at start.
  const requests: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    requests.push(new URL(req.url).pathname);
    return new Response("export const x = 1;\n", {
      headers: { "content-type": "application/typescript" },
    });
  });
  const dir = await Deno.makeTempDir({ prefix: "penguin-lazy-" });
  try {
    const host = `127.0.0.1:${server.addr.port}`;
    await Deno.writeTextFile(
      `${dir}/entry.ts`,
      `if (Deno.args[0] === "go") await import("http://${host}/taken.ts");\n` +
        `if (Deno.args[0] === "never") await import("http://${host}/not_taken.ts");\n`,
    );
    // The task's flags, without the permission set (it denies every remote import).
    const flags = taskFlags(await Deno.readTextFile(`${REPO}deno.json`))
      .filter((f) => f !== "-P=penguin");
    const run = (arg: string) =>
      new Deno.Command(Deno.execPath(), {
        args: [...flags, `--allow-import=${host}`, "--no-config", `${dir}/entry.ts`, arg],
        env: { DENO_DIR: `${dir}/cache` },
        stdout: "null",
        stderr: "piped",
      }).output();
    const go = await run("go");
    assert.ok(go.success, new TextDecoder().decode(go.stderr));
    assert.deepEqual(requests, ["/taken.ts"], "the server sees the import that is taken");
    const out = await run("stay");
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    assert.deepEqual(requests, ["/taken.ts"], "an import() not taken was fetched at start");
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
