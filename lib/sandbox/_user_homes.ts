/**
 * The home directories whose git configuration the user's later shell may
 * read, besides penguin's own `$HOME`: the account's home from `/etc/passwd`
 * (what a login shell sets `HOME` to, whatever penguin was started with) and,
 * under `sudo`, the home of the user who ran it (`SUDO_USER`). The git guard
 * resolves the global configuration of each (`git_config_guard.ts`).
 *
 * Only `/etc/passwd` is read: accounts known through other name services
 * (LDAP, systemd-homed) are not found.
 *
 * @module
 */
import { readTextNow } from "./_look.ts";

/** The fields of one `/etc/passwd` account penguin uses. */
interface Account {
  name: string;
  uid: string;
  home: string;
}

/** Accounts below this uid are the system's own (Debian's, Fedora's and macOS's first user). */
const FIRST_USER_UID = 500;

function accounts(passwd: string): Account[] {
  const out: Account[] = [];
  for (const line of passwd.split("\n")) {
    const f = line.split(":");
    if (f.length < 7) continue;
    out.push({ name: f[0]!, uid: f[2]!, home: f[5]! });
  }
  return out;
}

/**
 * The homes `passwd` (the text of `/etc/passwd`) gives the account `uid` and
 * the account named `sudoUser`, in that order, without duplicates; only
 * absolute paths other than `/`.
 */
export function passwdHomes(
  passwd: string,
  uid: number | null,
  sudoUser: string | undefined,
): string[] {
  const all = accounts(passwd);
  const found = [
    uid === null ? undefined : all.find((a) => a.uid === String(uid))?.home,
    sudoUser ? all.find((a) => a.name === sudoUser)?.home : undefined,
  ];
  const out: string[] = [];
  for (const h of found) {
    const home = h?.replace(/\/+$/, "");
    if (home && home.startsWith("/") && !out.includes(home)) out.push(home);
  }
  return out;
}

function tryOr<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

/** Login accounts' homes looked at, at most, besides the named ones (penguin running as root). */
const MAX_LOGIN_HOMES = 8;

/**
 * The homes of this machine's user other than `home` (penguin's `$HOME`): {@linkcode passwdHomes}
 * of this process's uid and of the user who ran it through sudo, doas or pkexec
 * ({@linkcode elevatingUser}: under doas a `~/.gitconfig` including a workspace file was not
 * looked at, and the user's `git status` ran the model's fsmonitor, attack round 31 t06); running
 * as root, also the first {@linkcode MAX_LOGIN_HOMES} login accounts' ({@linkcode loginHomes}:
 * plain `su` names nobody).
 */
export function otherUserHomes(home: string | undefined): string[] {
  const passwd = tryOr(() => readTextNow("/etc/passwd"), "");
  const uid = tryOr(() => Deno.uid(), null);
  const user = elevatingUser(passwd, (name) => tryOr(() => Deno.env.get(name), undefined));
  const own = home?.replace(/\/+$/, "");
  const found = passwdHomes(passwd, uid, user);
  if (uid === 0) {
    for (const h of loginHomes(passwd, home).slice(0, MAX_LOGIN_HOMES)) {
      if (!found.includes(h)) found.push(h);
    }
  }
  return found.filter((h) => h !== own);
}

/**
 * Under `sudo`, the home of the user who ran it (`SUDO_USER`, a login account: uid
 * {@linkcode FIRST_USER_UID} or above, a home below `/` other than `home`), from `passwd`.
 * A command of penguin running as root has no capability left, but reads every file there that
 * others may read: the tokens in that user's `.bashrc`, `.npmrc`, `.pypirc` reached the model
 * (attack round 29 l02b). The policy hides it whole (a workspace inside it is shown on top).
 */
export function sudoUserHome(
  passwd: string,
  sudoUser: string | undefined,
  home: string | undefined,
): string | undefined {
  if (!sudoUser) return undefined;
  const account = accounts(passwd).find((a) => a.name === sudoUser);
  const h = account?.home.replace(/\/+$/, "");
  if (!account || !h || !/^\/[^/]+\/./.test(h) || Number(account.uid) < FIRST_USER_UID) {
    return undefined;
  }
  return h === home?.replace(/\/+$/, "") ? undefined : h;
}

/**
 * The user who ran penguin through `sudo` (`SUDO_USER`), `doas` (`DOAS_USER`) or `pkexec`
 * (`PKEXEC_UID`, by uid) in `env`, by name, from `passwd` (attack round 30 o05: under doas and
 * pkexec the invoking user's home was shown).
 */
export function elevatingUser(
  passwd: string,
  env: (name: string) => string | undefined,
): string | undefined {
  const named = env("SUDO_USER") || env("DOAS_USER");
  if (named) return named;
  const uid = env("PKEXEC_UID");
  return uid ? accounts(passwd).find((a) => a.uid === uid)?.name : undefined;
}

/**
 * Every login account's home in `passwd` ({@linkcode sudoUserHome}'s rule: uid
 * {@linkcode FIRST_USER_UID} or above, a home below `/` other than `home`). penguin running as
 * root hides them all: its commands read every file there that others may read, and a user who
 * became root by plain `su` or `sudo -i` leaves no variable naming them (attack round 30).
 */
export function loginHomes(passwd: string, home: string | undefined): string[] {
  const out: string[] = [];
  for (const a of accounts(passwd)) {
    const h = sudoUserHome(passwd, a.name, home);
    if (h !== undefined && !out.includes(h)) out.push(h);
  }
  return out;
}

/**
 * The other users' homes this process's commands must not see: every login account's, running
 * as root ({@linkcode loginHomes}); otherwise {@linkcode sudoUserHome} of the user who ran it
 * through sudo, doas or pkexec.
 */
export function sudoHomes(home: string | undefined): string[] {
  const passwd = tryOr(() => readTextNow("/etc/passwd"), "");
  if (tryOr(() => Deno.uid(), null) === 0) return loginHomes(passwd, home);
  const user = elevatingUser(passwd, (name) => tryOr(() => Deno.env.get(name), undefined));
  const h = sudoUserHome(passwd, user, home);
  return h === undefined ? [] : [h];
}

/**
 * The home `/etc/passwd` gives the account `name` (git's and the shell's `~name/`), or undefined.
 */
export function accountHome(name: string): string | undefined {
  const passwd = tryOr(() => readTextNow("/etc/passwd"), "");
  const h = accounts(passwd).find((a) => a.name === name)?.home.replace(/\/+$/, "");
  return h !== undefined && h.startsWith("/") ? h || "/" : undefined;
}
