/**
 * The XDG base directories a user moved out of the home (`$XDG_CONFIG_HOME`, `$XDG_DATA_HOME`,
 * `$XDG_STATE_HOME`, `$XDG_CACHE_HOME` set elsewhere): they hold what `~/.config`,
 * `~/.local/share`, `~/.local/state` and `~/.cache` hold — `gh/hosts.yml`, git's credential
 * store, rclone, gcloud and podman logins, keyrings, shell histories — and commands read them all
 * where the home rule hid only the home (attack round 28 f14). Each is hidden like the home, with
 * the toolchains of the home's list that lie in it (`~/.local/share/mise`, `~/.cache/pip`, …
 * mapped into it) shown read-only (`_home_plan.ts`).
 *
 * Only absolute values count, as the XDG specification says; a value that is or holds the home
 * (hidden already, or a workspace), the filesystem root, or a system directory (`/usr`, `/etc`,
 * …: hiding one would break every command) is left out.
 *
 * @module
 */
import { isAbsolute, join, normalize } from "node:path";
import { inside } from "./_paths.ts";
import { TOOLCHAIN_PATHS } from "./home.ts";

/** Each variable and the home-relative directory it replaces (with its trailing `/`). */
const XDG_VARS: readonly (readonly [string, string])[] = [
  ["XDG_CONFIG_HOME", ".config/"],
  ["XDG_DATA_HOME", ".local/share/"],
  ["XDG_STATE_HOME", ".local/state/"],
  ["XDG_CACHE_HOME", ".cache/"],
];

/** The XDG variables of a relocated base directory. */
export const XDG_NAMES: readonly string[] = XDG_VARS.map(([name]) => name);

/** penguin's own values of the XDG variables (read one by one: the plan runs before every command). */
export function ownXdgEnv(): Record<string, string | undefined> {
  return Object.fromEntries(XDG_VARS.map(([name]) => [name, Deno.env.get(name)]));
}

/** Directories never hidden as a relocated XDG directory, nor anything in them. */
const SYSTEM_DIRS = ["/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/proc", "/sys", "/dev"];

/** A relocated XDG directory: where it is, and the toolchain paths to show in it. */
export interface RelocatedXdgDir {
  /** The directory (lexical, normalized). */
  dir: string;
  /** The toolchain paths of the home's list that lie in it, mapped there. */
  toolchains: string[];
  /** The home-relative directory it replaces (`.local/share/`), with its trailing `/`. */
  usual: string;
}

/** The relocated XDG directories `env` names, for a user whose home is `home`. */
export function relocatedXdgDirs(
  env: Record<string, string | undefined>,
  home: string | undefined,
): RelocatedXdgDir[] {
  const out: RelocatedXdgDir[] = [];
  for (const [name, usual] of XDG_VARS) {
    const v = env[name];
    if (v === undefined || !isAbsolute(v) || v.includes("\0")) continue;
    const dir = normalize(v).replace(/(.)\/+$/, "$1");
    if (dir === "/" || SYSTEM_DIRS.some((s) => inside(dir, s))) continue;
    if (home !== undefined && (inside(home, dir) || inside(dir, join(home, usual)))) continue;
    // Inside the home elsewhere (`~/xdgcfg`): hidden with the home, or a home workspace's secret.
    if (out.some((o) => o.dir === dir)) continue;
    const toolchains = TOOLCHAIN_PATHS.filter((p) => p.startsWith(usual))
      .map((p) => join(dir, p.slice(usual.length)));
    out.push({ dir, toolchains, usual });
  }
  return out;
}
