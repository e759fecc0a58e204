/**
 * The sealed-home runs: a real `penguin run` with `--workspace $HOME --allow-home-workspace`
 * against a scripted model that calls its tools once, then answers.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { ModelServer } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { addServerModel } from "../support/roots.ts";

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
