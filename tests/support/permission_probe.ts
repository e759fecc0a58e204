/**
 * Running a piece of penguin's code under penguin's own permission set
 * (`-P=penguin` from deno.json, as the binary and `deno task penguin` run).
 * The suite runs with `-A`, where Deno behaves otherwise: `O_NOFOLLOW` is
 * honoured, every environment variable reads, every program spawns. A check
 * whose effect depends on that runs its code in such a child.
 *
 * @module
 */
import { join } from "node:path";
import { REPO } from "./cli.ts";

/** What the probe printed and how it ended. */
export interface ProbeResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The absolute specifier of `path` (relative to the repository) for a probe's import. */
export function repoModule(path: string): string {
  return JSON.stringify(`${REPO}${path}`);
}

/**
 * Run `source` (a module; import penguin's files with {@linkcode repoModule})
 * from `dir` under penguin's permission set with `env` added to this
 * process's environment; its stdout's last line parsed as JSON by the caller.
 */
export async function runUnderPermissionSet(
  dir: string,
  source: string,
  env: Record<string, string> = {},
): Promise<ProbeResult> {
  const script = join(dir, `probe-${crypto.randomUUID()}.ts`);
  await Deno.writeTextFile(script, source);
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "-P=penguin", "--no-prompt", "--config", `${REPO}deno.json`, script],
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = (b: Uint8Array) => new TextDecoder().decode(b);
    return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
  } finally {
    await Deno.remove(script);
  }
}
