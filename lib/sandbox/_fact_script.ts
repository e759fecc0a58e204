/**
 * A bash script that prints facts of the machine, one `name value` line each (Deno may not read
 * /proc/sys, bash may), run with a fixed PATH and the C locale and nothing else of penguin's
 * environment.
 *
 * @module
 */
import { DEFAULT_PATH } from "./env.ts";

/** What a fact script printed: whether bash exited 0, and each `name value` line's pair. */
export interface FactLines {
  success: boolean;
  facts: Map<string, string>;
}

/** Run `bash args` (the script and its arguments in `args`); its fact lines. Throws when bash cannot start. */
export async function runFactScript(bash: string, args: string[]): Promise<FactLines> {
  const out = await new Deno.Command(bash, {
    args,
    clearEnv: true,
    env: { PATH: DEFAULT_PATH, LANG: "C" },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  const facts = new Map<string, string>();
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const sp = line.indexOf(" ");
    if (sp > 0) facts.set(line.slice(0, sp), line.slice(sp + 1));
  }
  return { success: out.success, facts };
}
