// A real `penguin run` whose user has a given home (a given `~/.profile`, say): a temp HOME, a
// workspace outside it, the scripted model asking for one command. Used by the tests of what the
// user's startup files and home may pass to the model's commands.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer, turn } from "./model_server.ts";
import { runCli } from "./cli.ts";
import { addServerModel, visibleTempDir } from "./roots.ts";

/** `s` reversed, as `printenv | rev` prints it. */
export const reverse = (s: string): string => [...s].reverse().join("");

/** Install `~/.local/bin/mytool` in `home`, printing "tool-ran". */
export async function addMyTool(home: string): Promise<void> {
  await Deno.mkdir(join(home, ".local", "bin"), { recursive: true });
  await Deno.writeTextFile(join(home, ".local", "bin", "mytool"), "#!/bin/sh\necho tool-ran\n");
  await Deno.chmod(join(home, ".local", "bin", "mytool"), 0o755);
}

/**
 * Run `cmd` as the model's one command, as a user whose temp HOME `setUp` fills (the workspace
 * and data root outside it); resolves to the next request's body (where the command's output
 * reached the model) and the HOME used.
 */
export async function runInHome(
  setUp: (home: string) => Promise<void>,
  cmd: string,
): Promise<{ body: string; home: string }> {
  const base = await visibleTempDir("penguin-home-run-");
  const home = join(base, "home");
  const ws = join(base, "ws");
  const root = join(base, "data");
  await Deno.mkdir(home);
  await Deno.mkdir(ws);
  await setUp(home);
  const server = await startModelServer({
    turns: [turn.toolCall("exec_command", { cmd }), turn.text("done")],
  });
  try {
    await addServerModel(root, server);
    const r = await runCli(["--root", root, "run", "--workspace", ws, "-m", "go"], {
      env: { HOME: home },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.length, 2);
    return { body: JSON.stringify(server.requests[1]!.body), home };
  } finally {
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
}

/**
 * Run `cmd` as the model's one command with `profile` as the user's `~/.profile` (and
 * {@linkcode addMyTool}'s tool); resolves as {@linkcode runInHome}.
 */
export function runWithProfile(
  profile: string[],
  cmd: string,
): Promise<{ body: string; home: string }> {
  return runInHome(async (home) => {
    await addMyTool(home);
    await Deno.writeTextFile(join(home, ".profile"), [...profile, ""].join("\n"));
  }, cmd);
}

/** Asserts that none of `secrets` is in `body`, as is or reversed. */
export function assertNoneReached(body: string, secrets: readonly string[]): void {
  for (const secret of secrets) {
    assert.ok(!body.includes(secret), `${secret} reached the model`);
    assert.ok(!body.includes(reverse(secret)), `${secret} reached the model reversed`);
  }
}
