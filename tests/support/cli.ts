// Runs the penguin CLI as a subprocess under the production permission set
// (deno.json "permissions.penguin"), exactly the flags the binary is built with.
import { fileURLToPath } from "node:url";

/** Repository root. */
export const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** Result of one CLI run. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options for {@linkcode runCli}. */
export interface CliOptions {
  env?: Record<string, string>;
  cwd?: string;
  stdin?: string;
  /** Drop the inherited environment (PATH and HOME are kept). */
  clearEnv?: boolean;
}

// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;
const WARNING = /^.*Permissions in the config file is an experimental feature.*\n/gm;

/** The argv that runs penguin the way `deno task penguin` does. */
export function penguinArgv(): string[] {
  return ["run", "-P=penguin", "--no-prompt", "--config", `${REPO}deno.json`, `${REPO}main.ts`];
}

/** Run `penguin <args>` and collect its output. */
export async function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const env: Record<string, string> = { NO_COLOR: "1", ...opts.env };
  if (opts.clearEnv) {
    for (const k of ["PATH", "HOME"]) {
      const v = Deno.env.get(k);
      if (v !== undefined && env[k] === undefined) env[k] = v;
    }
  }
  const cmd = new Deno.Command(Deno.execPath(), {
    args: [...penguinArgv(), ...args],
    cwd: opts.cwd ?? REPO,
    env,
    clearEnv: opts.clearEnv ?? false,
    stdin: opts.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  });
  const child = cmd.spawn();
  if (opts.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(opts.stdin));
    await w.close();
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr).replace(WARNING, "").replace(ANSI, ""),
  };
}
