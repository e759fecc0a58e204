/**
 * The user's own git on the host, as the confinement tests run it after a
 * sandboxed attack: no system configuration, its own HOME, a fixed identity,
 * only PATH from this environment. Whatever a planted config or hook makes it
 * do shows in the output or as a marker file.
 *
 * @module
 */

/** What a host command printed, and its exit code. */
export interface HostOutput {
  code: number;
  /** Standard output then standard error, joined. */
  out: string;
  stdout: string;
  stderr: string;
}

/** Run `cmd args` on the host in `cwd`, with HOME `home`, no system git configuration and `env` added. */
export async function hostRun(
  home: string,
  cwd: string,
  cmd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<HostOutput> {
  const out = await new Deno.Command(cmd, {
    args,
    cwd,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: home,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "u",
      GIT_AUTHOR_EMAIL: "u@example.com",
      GIT_COMMITTER_NAME: "u",
      GIT_COMMITTER_EMAIL: "u@example.com",
      ...env,
    },
    stdin: "null",
  }).output();
  const dec = new TextDecoder();
  const stdout = dec.decode(out.stdout);
  const stderr = dec.decode(out.stderr);
  return { code: out.code, out: stdout + stderr, stdout, stderr };
}

/** The host's `git args` in `cwd` with HOME `home` ({@linkcode hostRun}). */
export function hostGit(home: string, cwd: string, args: string[]): Promise<HostOutput> {
  return hostRun(home, cwd, "git", args);
}
