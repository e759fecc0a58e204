/**
 * Running a command as if `/etc/passwd` held one more account: the file, with the account's line
 * added, bind-mounted over `/etc/passwd` in a mount namespace of the command's own (root only),
 * so no real account is made and nothing of the machine changes.
 *
 * @module
 */
import { join } from "node:path";

/** Whether {@linkcode runWithAccount} can run here: Linux, root, and `unshare`. */
export const FAKE_ACCOUNT_USABLE: boolean = Deno.build.os === "linux" && Deno.uid() === 0 &&
  (() => {
    try {
      return Deno.statSync("/usr/bin/unshare").isFile;
    } catch {
      return false;
    }
  })();

/**
 * Run `argv` (program first) with `/etc/passwd` holding `line` too (`name:x:uid:gid::home:shell`);
 * the amended copy is written in `dir`. Its output, collected.
 */
export async function runWithAccount(
  dir: string,
  line: string,
  argv: string[],
  opts: { env?: Record<string, string>; cwd?: string } = {},
): Promise<Deno.CommandOutput> {
  const passwd = join(dir, "passwd");
  await Deno.writeTextFile(passwd, (await Deno.readTextFile("/etc/passwd")) + `${line}\n`);
  return await new Deno.Command("unshare", {
    args: [
      "-m",
      "--propagation",
      "private",
      "bash",
      "-c",
      'mount --bind "$0" /etc/passwd && exec "$@"',
      passwd,
      ...argv,
    ],
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    stdin: "null",
  }).output();
}
