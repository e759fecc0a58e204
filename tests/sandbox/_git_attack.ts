// The kit of the git red-team tests that drive a real `penguin run` through
// the red-team world: the attack's exec_command step, the shell text of an
// armed config or hook, the marker files such a config or hook would touch,
// and the user's host git afterwards.
import assert from "node:assert/strict";
import { join } from "node:path";
import { hostRun } from "../support/host_git.ts";
import { exists } from "./_helpers.ts";
import { createWorld, type Outcome, runSession, type Step, type World } from "./redteam/_world.ts";

/** The user's git on the host in `cwd` (the world's HOME); its output. */
export async function hostGit(w: World, cwd: string, args: string[]): Promise<string> {
  return (await hostRun(w.home, cwd, "git", args)).out;
}

/** An exec_command step running `cmd` in the sandbox. */
export const exec = (cmd: string, yield_time_ms = 10_000): Step => ({
  tool: "exec_command",
  args: { description: "attack", cmd, yield_time_ms },
});

/** The shell text of a config that runs `touch <marker>` from `git status`. */
export const armed = (marker: string): string =>
  `printf '[core]\\n\\tfsmonitor = "touch ${marker}; false"\\n'`;
/** The shell text of a hook that runs `touch <marker>`. */
export const hook = (marker: string): string => `printf '#!/bin/sh\\ntouch ${marker}\\n'`;

/** The marker file named `ran-<name>` in the world's base, outside the workspace. */
export const ranMarker = (w: World, name: string): string => join(w.base, `ran-${name}`);

/** Which of `names` have their {@linkcode ranMarker} file. */
export async function ranOf(w: World, names: string[]): Promise<string[]> {
  const ran = [];
  for (const n of names) if (await exists(ranMarker(w, n))) ran.push(n);
  return ran;
}

/** Run `fn` with a fresh red-team world, closed afterwards. */
export async function withWorld(fn: (w: World) => Promise<void>): Promise<void> {
  const w = await createWorld();
  try {
    await fn(w);
  } finally {
    await w.close();
  }
}

/** What one attack left: the run's outcome and every tool output joined. */
export interface Attack {
  o: Outcome;
  outputs: string;
}

/** One `penguin run` whose model makes `steps` in one turn; it must exit 0. */
export async function attack(
  w: World,
  steps: Step[],
  opts: Parameters<typeof runSession>[2] = {},
): Promise<Attack> {
  const o = await runSession(w, () => [steps], opts);
  assert.equal(o.code, 0, o.stderr.slice(-2000));
  return { o, outputs: [...o.outputs.values()].join("\n") };
}
