/**
 * The module graph `deno info --json` resolves from an entry module of the
 * repository, for the startup-cost tests.
 *
 * @module
 */
import assert from "node:assert/strict";
import { REPO } from "../support/cli.ts";

/** One import of a module: what it names, where it resolved, whether it is `import()`. */
export interface InfoDependency {
  specifier: string;
  code?: { specifier: string };
  isDynamic?: boolean;
}

/** One module of the graph and its imports. */
export interface InfoModule {
  specifier: string;
  dependencies?: InfoDependency[];
}

/** The graph: its root specifiers and every module reached. */
export interface Info {
  roots: string[];
  modules: InfoModule[];
}

/** `deno info --json` of `entry` (a path under the repository); asserts it succeeded. */
export async function denoInfo(entry: string): Promise<Info> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", `${REPO}${entry}`],
    cwd: REPO,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout)) as Info;
}
