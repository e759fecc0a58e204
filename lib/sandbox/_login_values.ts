/**
 * What the shell snapshots of this process (`login_env.ts`) found the
 * user's startup files export, per home, for the checks that do not run a
 * command and hold no snapshot of their own: the file tools read the
 * relocated configuration directory (`$XDG_CONFIG_HOME`, `_xdg_config.ts`)
 * a `~/.profile` exports, as the command sandbox does through its snapshot.
 * A capture still under way is awaited (it ends within the login shell's
 * time limit); one that failed counts as exporting nothing. Only the last
 * {@linkcode KEPT} captures are kept.
 *
 * @module
 */

/** Captures kept at most (a bound on what a process holds). */
const KEPT = 16;

const captures: { home: string | undefined; env: Promise<Record<string, string> | undefined> }[] =
  [];

/** Record a shell snapshot of `home` (settled or under way). */
export function noteLoginCapture(
  home: string | undefined,
  env: Promise<Record<string, string> | undefined>,
): void {
  captures.push({ home, env: env.catch(() => undefined) });
  if (captures.length > KEPT) captures.shift();
}

/** The values of `name` that the shell snapshots of `home` hold, each once. */
export async function loginValues(home: string | undefined, name: string): Promise<string[]> {
  const out: string[] = [];
  for (const c of captures.filter((c) => c.home === home)) {
    const v = (await c.env)?.[name];
    if (v !== undefined && !out.includes(v)) out.push(v);
  }
  return out;
}
