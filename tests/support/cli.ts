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

/**
 * The argv that runs penguin the way `deno task penguin` does: the flags of
 * that task in deno.json (the one place they live), with the config and the
 * entry module given by absolute path.
 */
export function penguinArgv(): string[] {
  const config = JSON.parse(Deno.readTextFileSync(`${REPO}deno.json`));
  const words = String(config.tasks.penguin).split(/\s+/);
  if (words[0] !== "deno" || words.at(-1) !== "main.ts") {
    throw new Error(`deno.json task "penguin" is not "deno <flags> main.ts": ${words.join(" ")}`);
  }
  return [...words.slice(1, -1), "--config", `${REPO}deno.json`, `${REPO}main.ts`];
}

/** `setsid`, when there is one: it runs a command without a controlling terminal. */
const SETSID = (() => {
  try {
    return Deno.statSync("/usr/bin/setsid").isFile ? "/usr/bin/setsid" : undefined;
  } catch {
    return undefined;
  }
})();

/**
 * The command and arguments that run `argv` (deno first) with no controlling
 * terminal, so a test never reads from the terminal of whoever runs the suite.
 */
export function withoutTerminal(argv: string[]): { command: string; args: string[] } {
  return SETSID ? { command: SETSID, args: argv } : { command: argv[0]!, args: argv.slice(1) };
}

/** Run `penguin <args>` (without a controlling terminal) and collect its output. */
export async function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const env: Record<string, string> = { NO_COLOR: "1", ...opts.env };
  if (opts.clearEnv) {
    for (const k of ["PATH", "HOME"]) {
      const v = Deno.env.get(k);
      if (v !== undefined && env[k] === undefined) env[k] = v;
    }
  }
  const { command, args: argv } = withoutTerminal([Deno.execPath(), ...penguinArgv(), ...args]);
  const cmd = new Deno.Command(command, {
    args: argv,
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
    stderr: dec.decode(out.stderr).replace(ANSI, ""),
  };
}
