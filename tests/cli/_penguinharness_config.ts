// PenguinHarness's own `.project_config.toml` (the shared fixture) in a fresh data root, for the
// tests that read and edit it with `penguin config model`.
import { join } from "node:path";
import { parse } from "smol-toml";
import { type CliResult, runCli } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";

const FIXTURE = "/work/shared/fixtures/penguinharness-config/project_config.toml";

/** The fixture's text as PenguinHarness wrote it. */
export const ORIGINAL = await Deno.readTextFile(FIXTURE);

/** The project configuration file of `root`'s default project. */
export const cfgPath = (root: string): string =>
  join(root, "default_project", ".project_config.toml");

/** A parsed configuration file. */
export type Toml = Record<string, unknown> & { models: Record<string, unknown>[] };

/** The parsed file as plain data (TOML dates as their ISO text), for value-for-value comparison. */
export const tomlOf = (text: string): Toml => JSON.parse(JSON.stringify(parse(text))) as Toml;

/** Run `body` with a temporary data root whose default project holds the fixture. */
export async function withFixture(body: (root: string) => Promise<void>): Promise<void> {
  await withRoot(async (root) => {
    await Deno.mkdir(join(root, "default_project"), { recursive: true });
    await Deno.writeTextFile(cfgPath(root), ORIGINAL, { mode: 0o600 });
    await body(root);
  });
}

/** `penguin --root <root> config model <args…>`. */
export const config = (root: string, ...args: string[]): Promise<CliResult> =>
  runCli(["--root", root, "config", "model", ...args]);
