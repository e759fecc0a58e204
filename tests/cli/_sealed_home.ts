/**
 * The sealed-home runs: a real `penguin run` with `--workspace $HOME --allow-home-workspace`
 * against a scripted model that calls its tools once, then answers.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, type ModelServer, startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { addServerModel, visibleTempDir } from "../support/roots.ts";

/** `s` backwards: the tests' commands print what they read reversed, so a token that was read
 * reaches the model only in that form. */
export const reverse = (s: string): string => [...s].reverse().join("");

/**
 * Run one task in the data root `root` with `home` as both HOME and workspace; asserts it ends
 * well after two model requests and returns the second request's body as JSON text (what the
 * model was shown of its tool calls).
 */
export async function runInHomeWorkspace(
  root: string,
  home: string,
  server: ModelServer,
): Promise<string> {
  await addServerModel(root, server);
  const r = await runCli(
    ["--root", root, "run", "--workspace", home, "--allow-home-workspace", "-m", "go"],
    { env: { HOME: home } },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(server.requests.length, 2);
  return JSON.stringify(server.requests[1]!.body);
}

/**
 * A sealed-home run from start to end: a visible temp dir holding `home` (with `home/env`
 * made) and the data root, `setup` writing the home's files, then one task whose first
 * response makes the tool `calls` (given the home's path) at once; everything is removed
 * afterwards. Returns what the model was shown of its calls ({@linkcode runInHomeWorkspace}).
 */
export async function sealedHomeRun(
  prefix: string,
  setup: (home: string) => Promise<void>,
  calls: (home: string) => ReturnType<typeof item.toolCall>[],
): Promise<string> {
  const base = await visibleTempDir(prefix);
  try {
    const home = join(base, "home");
    await Deno.mkdir(join(home, "env"), { recursive: true });
    await setup(home);
    const server = await startModelServer({ turns: [turn.of(...calls(home)), turn.text("done")] });
    try {
      return await runInHomeWorkspace(join(base, "data"), home, server);
    } finally {
      await server.close();
    }
  } finally {
    await Deno.remove(base, { recursive: true });
  }
}

/** Write `home/env/<n>.sh`, exporting `T_<n>` as `tokenOf(n)`, for each of `names`. */
export async function writeTokenFiles(
  home: string,
  names: string[],
  tokenOf: (n: string) => string,
): Promise<void> {
  for (const n of names) {
    await Deno.writeTextFile(join(home, "env", `${n}.sh`), `export T_${n}=${tokenOf(n)}\n`);
  }
}

/** The call `c1` of a command listing each `~/env/*.sh` with what it read of it, reversed. */
export const listEnvFiles = (): ReturnType<typeof item.toolCall> =>
  item.toolCall("exec_command", {
    cmd: `cd ~ && for f in env/*.sh; do echo "$f: $(rev "$f" 2>&1)"; done`,
  }, { id: "c1" });
