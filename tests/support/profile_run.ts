// A real `penguin run` whose user has a given `~/.profile`: a temp HOME (with `~/.local/bin/mytool`
// printing "tool-ran"), a workspace outside it, the scripted model asking for one command. Used by
// the tests of what the user's startup files may pass to the model's commands.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer, turn } from "./model_server.ts";
import { runCli } from "./cli.ts";
import { addServerModel, visibleTempDir } from "./roots.ts";

/** `s` reversed, as `printenv | rev` prints it. */
export const reverse = (s: string): string => [...s].reverse().join("");

/**
 * Run `cmd` as the model's one command with `profile` as the user's `~/.profile`; resolves to
 * the next request's body (where the command's output reached the model) and the HOME used.
 */
export async function runWithProfile(
  profile: string[],
  cmd: string,
): Promise<{ body: string; home: string }> {
  const base = await visibleTempDir("penguin-profile-");
  const home = join(base, "home");
  const ws = join(base, "ws");
  const root = join(base, "data");
  await Deno.mkdir(join(home, ".local", "bin"), { recursive: true });
  await Deno.mkdir(ws);
  await Deno.writeTextFile(join(home, ".profile"), [...profile, ""].join("\n"));
  await Deno.writeTextFile(join(home, ".local", "bin", "mytool"), "#!/bin/sh\necho tool-ran\n");
  await Deno.chmod(join(home, ".local", "bin", "mytool"), 0o755);
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

/** Asserts that none of `secrets` is in `body`, as is or reversed. */
export function assertNoneReached(body: string, secrets: readonly string[]): void {
  for (const secret of secrets) {
    assert.ok(!body.includes(secret), `${secret} reached the model`);
    assert.ok(!body.includes(reverse(secret)), `${secret} reached the model reversed`);
  }
}
