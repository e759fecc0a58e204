/**
 * `penguin` in a tmux pane with a HOME of its own (so no history or
 * settings of the machine's user show), and the `/expand #1` command typed
 * there.
 *
 * @module
 */
import { type Pane, penguinScript, startPane } from "../support/tmux.ts";

/**
 * Run `body` with `penguin <args>` started from `dir` in a pane of `columns`×`rows`, with `env`
 * and a new empty HOME; the pane, its script and the home are removed afterwards.
 */
export async function inHomePane(
  dir: string,
  args: string[],
  env: Record<string, string>,
  body: (pane: Pane, home: string) => Promise<void>,
  columns: number,
  rows: number,
): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "penguin-chat-home-" });
  const script = await penguinScript(dir, args, { ...env, HOME: home });
  const pane = await startPane(script.command, columns, rows);
  try {
    await body(pane, home);
  } finally {
    await pane.close();
    await Deno.remove(script.path).catch(() => {});
    await Deno.remove(home, { recursive: true });
  }
}

/** Type `/expand #1`, wait for the full output of the `tool` call, and return it from its header on. */
export async function expandFirst(pane: Pane, tool: string): Promise<string> {
  await pane.type("/expand #1");
  await pane.keys("Enter");
  const s = await pane.waitFor(
    new RegExp(`^\\[#1\\] ${tool} -> \\(full output\\)\\n[\\s\\S]*\\n>\\s*$`, "m"),
    "/expand",
  );
  return s.slice(s.lastIndexOf("(full output)"));
}
