/**
 * The user's configuration directory when `$XDG_CONFIG_HOME` moves it away
 * from `~/.config` (into a dotfiles repository, `~/dotfiles/config`): fish
 * reads `$XDG_CONFIG_HOME/fish/config.fish` and `conf.d` at every shell
 * start, a desktop session runs `$XDG_CONFIG_HOME/autostart/*.desktop`,
 * systemd's user manager loads `$XDG_CONFIG_HOME/systemd/user` and
 * `environment.d`, editors and multiplexers their init files. The home
 * rule (`home.ts`) names these startup files under `~/.config`; this module
 * maps those entries to every relocated configuration directory, so the
 * command sandbox keeps them read-only there (`_home_plan.ts`), the file
 * tools refuse them (`lib/tools/_startup_refusal.ts`) and a workspace
 * holding them is refused like one holding `.config/fish` (`spawn.ts`).
 * Attack round 28 f07: the model appended to `config/fish/config.fish` and
 * created an autostart entry and an enabled systemd unit in such a workspace.
 *
 * Where the value comes from: penguin's environment (the policy's host
 * environment) and the shell snapshot's (what the user's startup files
 * export, `login_env.ts`; the file tools, which hold no snapshot, read
 * those of this process, `_login_values.ts`). Only absolute values count, as
 * the XDG specification says; a value naming `~/.config` itself adds nothing.
 *
 * @module
 */
import { startupValues } from "./_startup_values.ts";
import { isAbsolute, join, normalize } from "node:path";
import {
  STARTUP_DIRECTORY_ENTRIES,
  STARTUP_DIRS,
  STARTUP_NAMES,
  STARTUP_TEXT_PATHS,
} from "./home.ts";
import { existsNow, realPathOrNone } from "./_look.ts";
import { inside } from "./_paths.ts";

/** The environments `$XDG_CONFIG_HOME` is read from. */
export interface XdgEnv {
  /** penguin's environment as the policy has it (absent: penguin's own). */
  host?: Record<string, string>;
  /** The shell snapshot's exported variables, once captured. */
  login?: Record<string, string>;
}

/** One startup entry of a configuration directory. */
export interface XdgEntry {
  /** Relative to the configuration directory (`fish/config.fish`). */
  rel: string;
  /** What a stand-in for a missing one is. */
  kind: "file" | "dir";
  /**
   * Whether a missing one is held by a stand-in: not git's directory, whose
   * configuration file git's own guard holds (`git_config_guard.ts`).
   */
  holdMissing: boolean;
  /** Whether it marks a workspace holding it as the user's configuration (`STARTUP_NAMES`). */
  marks: boolean;
}

const PREFIX = ".config/";

/** The `.config/` entries of the home's startup lists, relative to the configuration directory. */
export const XDG_STARTUP_ENTRIES: readonly XdgEntry[] = [
  ...new Set([...STARTUP_NAMES, ...STARTUP_TEXT_PATHS, ...STARTUP_DIRS]),
]
  .filter((n) => n.startsWith(PREFIX))
  .map((n) => ({
    rel: n.slice(PREFIX.length),
    kind: STARTUP_DIRECTORY_ENTRIES.has(n) ? "dir" as const : "file" as const,
    holdMissing: n !== ".config/git",
    marks: STARTUP_NAMES.includes(n),
  }));

/** A variable of penguin's own environment, or undefined where it cannot be read. */
function ownEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/**
 * The relocated configuration directories of `env` (lexical, normalized):
 * `$XDG_CONFIG_HOME` of penguin's environment and of the shell snapshot
 * (and the values `more`: other snapshots', `_login_values.ts`), when absolute and not `~/.config` of `home` (by name or real path).
 */
export function xdgConfigHomes(
  env: XdgEnv | undefined,
  home: string | undefined,
  more: readonly string[] = [],
): string[] {
  const host = env?.host !== undefined ? env.host["XDG_CONFIG_HOME"] : ownEnv("XDG_CONFIG_HOME");
  const values = [
    host,
    env?.login?.["XDG_CONFIG_HOME"],
    ...more,
    // What startup files the snapshot's `bash -l` does not run assign (round 30 o03).
    ...startupValues(home, ["XDG_CONFIG_HOME"]).map((e) => e["XDG_CONFIG_HOME"]),
  ];
  const usual = home !== undefined && isAbsolute(home) ? join(home, ".config") : undefined;
  // Unset (the usual case): nothing is looked up.
  let usualReal: string | undefined | null = null;
  const out: string[] = [];
  for (const v of values) {
    if (v === undefined || !isAbsolute(v) || v.includes("\0")) continue;
    const dir = normalize(v).replace(/(.)\/+$/, "$1");
    if (dir === usual || out.includes(dir)) continue;
    if (usualReal === null) usualReal = usual !== undefined ? realPathOrNone(usual) : undefined;
    if (usualReal !== undefined && realPathOrNone(dir) === usualReal) continue;
    out.push(dir);
  }
  return out;
}

/** The absolute startup paths of the configuration directory `dir`, with their entries. */
export function xdgStartupPaths(dir: string): { path: string; entry: XdgEntry }[] {
  return XDG_STARTUP_ENTRIES.map((entry) => ({ path: join(dir, entry.rel), entry }));
}

/**
 * The first startup entry (of those that mark a home, `STARTUP_NAMES`) that
 * one of the configuration directories `dirs` lying in `workspace` (a real
 * path) holds, named as `$XDG_CONFIG_HOME/<entry>`; undefined when none.
 */
export function xdgStartupFileIn(
  workspace: string,
  dirs: readonly string[],
): string | undefined {
  for (const dir of dirs) {
    const real = realPathOrNone(dir) ?? dir;
    if (!inside(real, workspace)) continue;
    for (const e of XDG_STARTUP_ENTRIES) {
      if (e.marks && existsNow(join(real, e.rel))) return `$XDG_CONFIG_HOME/${e.rel} ("${dir}")`;
    }
  }
  return undefined;
}
