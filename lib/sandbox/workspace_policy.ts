/**
 * The workspace policy file, `penguin.jsonc` at the workspace root: extra
 * writable roots, the network for commands (on, off, or an allowlist),
 * extra command rules and the approval mode. It is read when a task starts
 * (`penguin run`, `penguin chat`, `penguin sandbox run`, schedules) and
 * merged with the command line. Only `<workspace>/penguin.jsonc` is read:
 * never a file above or below the workspace.
 *
 * The rule: the file narrows; it widens only when the user trusts it. The
 * model controls every byte it writes in the workspace, including a
 * `penguin.jsonc` in a subdirectory where a later session may start, so a
 * file widens nothing until the user has trusted its exact content at its
 * path (`penguin trust`, recorded by SHA-256 in the data root; see
 * `lib/state/trust.ts`). A changed file is untrusted again.
 *
 * Narrowing settings always apply; the effective value is the stricter of
 * the command line (flags or their defaults) and the file:
 *
 * - `sandbox`: `read-only` is stricter than `workspace-write`, which is
 *   stricter than `--sandbox off`. The file cannot say `off`.
 * - `network`: `off` is stricter than an allowlist, which is stricter than
 *   `on`.
 * - `approval`: `deny-all` > `always-ask` > `read-only` > `allow-all`.
 * - `command_rules` are added to the project's command policy; the file
 *   cannot remove or disable any rule.
 * - `mcp`: `"off"` or `{"deny": [names]}` turns the agent's MCP servers off
 *   in this workspace; the file can never add a server.
 * - `git`: `"read-only"` keeps the git directory read-only even under
 *   `--git-writable`.
 *
 * Widening settings ({@linkcode wideningSettings}) apply only from a
 * trusted file; from an untrusted one each is ignored with a warning that
 * names the file, line and key and says that `penguin trust` enables it:
 *
 * - `"git": "writable"` opens the object and ref stores for commands
 *   without `--git-writable` (the entries that configure or redirect git
 *   stay read-only in every mode, `git_guard.ts`).
 * - `"network": "on"` turns the network on without `--network on`.
 * - `writable_roots` outside the workspace add write access; even trusted
 *   they apply only with the flag `--grant-writable-roots`, else the run
 *   stops with a config error pointing at the entry. Roots inside the
 *   workspace need trust too: the workspace is writable already, and one
 *   inside a path penguin keeps read-only would re-open it (a plan refuses
 *   that even from a trusted file, `plan.ts`).
 * - `home_readable` shows more paths of the home directory, which is hidden
 *   from commands except its toolchains (`home.ts`), read-only. Entries must
 *   lie in the home directory and outside penguin's data root and the home
 *   secrets; each one is noted on stderr.
 *
 * A network allowlist together with `--network on` cannot be enforced:
 * bubblewrap and Seatbelt switch the network on or off as a whole, and
 * penguin has no filtering proxy. Rather than run with the whole network
 * (wider than the file allows) the run stops with a config error. The same
 * holds for `"network": "off"` (or an allowlist) with `--sandbox off`:
 * without an OS sandbox nothing can keep commands off the network.
 *
 * Not re-exported from `lib/sandbox/mod.ts`, which stays free of npm
 * dependencies (it is imported by helpers run with `--no-config`).
 *
 * @module
 */
import { readRegularNow, statOrNone } from "./_look.ts";
import { formatSize } from "../protocol/format_size.ts";
import { isAbsolute, join, resolve } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import type { CommandPolicyRule } from "../state/command_policy_defaults.ts";
import {
  at,
  POLICY_APPROVAL_MODES,
  type PolicyApprovalMode,
  type Position,
} from "./_workspace_policy_terms.ts";
import type { WorkspacePolicyFile } from "./_workspace_policy_parse.ts";
import { sha256Hex } from "../state/trust.ts";
import { isInside } from "./plan.ts";
import type { SandboxMode } from "./policy.ts";
import type { GitAccess } from "./git_guard.ts";
import { workspaceIdentity } from "./workspace_identity.ts";
import { realDir } from "./_paths.ts";

export { at, POLICY_APPROVAL_MODES, type PolicyApprovalMode, type WorkspacePolicyFile };

/** The file name, at the workspace root. */
export const WORKSPACE_POLICY_FILE = "penguin.jsonc";

/** One entry of `writable_roots`, resolved. */
export interface WritableRootEntry {
  /** Its index in the file's list. */
  index: number;
  /** The real absolute path. */
  real: string;
  /** Outside the workspace (it widens). */
  outside: boolean;
}

/** A loaded `penguin.jsonc` with its writable roots resolved. */
export interface WorkspacePolicy {
  /** Absolute path of the file: the workspace's real path, then the file name. */
  path: string;
  /** SHA-256 (hex) of the exact bytes the settings were parsed from (what `penguin trust` records). */
  sha256: string;
  /** The settings as written. */
  file: WorkspacePolicyFile;
  /** Every `writable_roots` entry, in file order (repeats included). */
  rootEntries: WritableRootEntry[];
  /** `writable_roots`, real absolute paths, in file order. */
  writableRoots: string[];
  /** Of those, the ones outside the workspace (they widen). */
  outsideRoots: string[];
  /** `home_readable`, absolute paths in the home directory, in file order. */
  homeReadable: string[];
  /** Where a setting is written (`["network"]`, `["writable_roots", 0]`). */
  locate(path: ReadonlyArray<string | number>): Position | undefined;
}

/** Options of {@linkcode loadWorkspacePolicy}. */
export interface LoadPolicyOptions {
  /** Paths no writable root may be, or lie inside (penguin's data root, home secrets). */
  protectedPaths?: readonly string[];
  /** Home directory for `~/` in roots; default `$HOME`. */
  home?: string;
}

/**
 * The `home_readable` entries of the file at `path`, checked: absolute or
 * `~/…`, inside the home, not the whole home, not inside a protected path.
 */
async function homeReadableOf(
  entries: readonly string[],
  ctx: {
    path: string;
    home: string | undefined;
    locate: WorkspacePolicy["locate"];
    protectedReal: readonly string[];
  },
): Promise<string[]> {
  const { path, home, locate, protectedReal } = ctx;
  const homeReadable: string[] = [];
  for (const [i, raw] of entries.entries()) {
    const bad = (why: string) =>
      new PenguinError(
        "config",
        `Invalid ${JSON.stringify(path)}: ${at(locate(["home_readable", i]))}home_readable[${i}]: ${
          JSON.stringify(raw)
        } ${why}`,
      );
    if (!home || home === "/") throw bad("names a home path but HOME is not set");
    if (!isAbsolute(raw) && raw !== "~" && !raw.startsWith("~/")) {
      throw bad('is relative; write "~/..." or an absolute path in the home directory');
    }
    const abs = isAbsolute(raw) ? resolve(raw) : join(home, raw.slice(1));
    const homeAbs = resolve(home);
    if (!isInside(abs, homeAbs)) throw bad(`is not in the home directory ${JSON.stringify(home)}`);
    if (abs === homeAbs) throw bad("is the whole home directory; name the directories needed");
    const real = await Deno.realPath(abs).catch(() => abs);
    const hit = protectedReal.find((p) => isInside(abs, p) || isInside(real, p));
    if (hit) {
      throw bad(`lies inside ${JSON.stringify(hit)}, which commands must never see or change`);
    }
    if (!homeReadable.includes(abs)) homeReadable.push(abs);
  }
  return homeReadable;
}

/**
 * Read `<workspace>/penguin.jsonc`, or undefined when there is none. Throws a
 * config error (with line and column) for a malformed file or a writable
 * root that is missing, not a directory, `/`, or inside a protected path.
 */
/** The largest `penguin.jsonc` read: the model may plant a huge (or sparse) one. */
export const WORKSPACE_POLICY_MAX_BYTES = 1024 * 1024;

/**
 * The bytes of the workspace policy at `path`, read with a bound, or
 * undefined when there is none. Throws a config error for a file that is not
 * a regular file (a FIFO or device would block the read) or holds more than
 * {@linkcode WORKSPACE_POLICY_MAX_BYTES}. Opened without blocking and
 * checked as opened: a FIFO a command swaps in after a look at the path
 * stopped penguin at the open (attack round 28 E e13).
 */
export function readWorkspacePolicyBytes(path: string): Promise<Uint8Array | undefined> {
  const refuse = (why: string) =>
    new PenguinError("config", `Cannot read ${JSON.stringify(path)}: ${why}`);
  const got = readRegularNow(path, WORKSPACE_POLICY_MAX_BYTES);
  if (got instanceof Uint8Array) return Promise.resolve(got);
  if (got === "missing") return Promise.resolve(undefined);
  if (got === "too-large") {
    const size = statOrNone(path)?.size;
    return Promise.reject(refuse(
      `it holds ${size === undefined ? "more" : formatSize(size)}; a workspace policy may hold ` +
        `at most ${formatSize(WORKSPACE_POLICY_MAX_BYTES)}`,
    ));
  }
  return Promise.reject(refuse(
    got === "unreadable"
      ? "it cannot be opened for reading (permission denied?)"
      : `it is ${
        got === "directory" ? "a directory" : "not a regular file"
      }; a workspace policy must be a regular file`,
  ));
}

export async function loadWorkspacePolicy(
  workspace: string,
  opts: LoadPolicyOptions = {},
): Promise<WorkspacePolicy | undefined> {
  // Long because: one read of the file (refused unless a regular file), then each setting that
  // names paths checked in file order against the same resolved workspace and protected paths.
  const wsReal = await Deno.realPath(workspace);
  const path = join(wsReal, WORKSPACE_POLICY_FILE);
  // Read once: the hash and the settings come from the same bytes.
  const bytes = await readWorkspacePolicyBytes(path);
  if (bytes === undefined) return undefined;
  const text = new TextDecoder().decode(bytes);
  const sha256 = await sha256Hex(bytes);
  // The parser (jsonc-parser, zod schemas) loads only when a workspace has the file.
  const { parseWorkspacePolicyText } = await import("./_workspace_policy_parse.ts");
  const { value, locate } = parseWorkspacePolicyText(text, path);
  const home = opts.home ?? Deno.env.get("HOME");
  const protectedReal: string[] = [];
  for (const p of opts.protectedPaths ?? []) {
    protectedReal.push(await Deno.realPath(p).catch(() => resolve(p)));
  }
  const writableRoots: string[] = [];
  const outsideRoots: string[] = [];
  const rootEntries: WritableRootEntry[] = [];
  for (const [i, raw] of (value.writable_roots ?? []).entries()) {
    const bad = (why: string) =>
      new PenguinError(
        "config",
        `Invalid ${JSON.stringify(path)}: ${
          at(locate(["writable_roots", i]))
        }writable_roots[${i}]: ${JSON.stringify(raw)} ${why}`,
      );
    let expanded = raw;
    if (raw === "~" || raw.startsWith("~/")) {
      if (!home) throw bad("starts with ~ but HOME is not set");
      expanded = join(home, raw.slice(1));
    }
    const abs = isAbsolute(expanded) ? expanded : resolve(wsReal, expanded);
    if (!await realDir(abs)) throw bad("is not an existing directory");
    // Taken as the workspace is (see workspace_identity.ts): a link on the way that a command
    // could have made or re-pointed (another session's model replacing `../shared` by a link
    // to another directory) is refused, naming the real path, never followed.
    const pinned = workspaceIdentity(abs);
    if ("problem" in pinned) throw bad(`cannot be used: ${pinned.problem}`);
    const real = pinned.path;
    if (real === "/") throw bad("is the root directory; name a narrower directory");
    const hit = protectedReal.find((p) => isInside(real, p));
    if (hit) {
      throw bad(`lies inside ${JSON.stringify(hit)}, which commands must never see or change`);
    }
    const outside = !isInside(real, wsReal);
    rootEntries.push({ index: i, real, outside });
    if (!writableRoots.includes(real)) writableRoots.push(real);
    if (outside && !outsideRoots.includes(real)) outsideRoots.push(real);
  }
  const homeReadable = await homeReadableOf(value.home_readable ?? [], {
    path,
    home,
    locate,
    protectedReal,
  });
  return {
    path,
    sha256,
    file: value,
    rootEntries,
    writableRoots,
    outsideRoots,
    homeReadable,
    locate,
  };
}

/** What the command line says (flags, or their defaults). */
export interface PolicyFlags {
  /** `--sandbox`. */
  sandbox: SandboxMode;
  /** `--network on`. */
  network: boolean;
  /** `--approve`; absent for commands without approval (`sandbox run`). */
  approve?: PolicyApprovalMode | undefined;
  /** `--grant-writable-roots`: let the file add writable roots outside the workspace. */
  grantWritableRoots?: boolean;
  /** `--git-writable`: open the git object and ref stores to commands. */
  gitWritable?: boolean;
}

/** The merged result. */
export interface EffectivePolicy {
  /** Sandbox mode for commands. */
  sandbox: SandboxMode;
  /** Whether commands get the network. */
  network: boolean;
  /** Approval mode (when the flags had one). */
  approve?: PolicyApprovalMode;
  /** Extra writable directories (real paths). */
  extraWritable: string[];
  /** More home paths commands may read (absolute). */
  homeReadable: string[];
  /** Git directory access for commands. */
  git: GitAccess;
  /** Rules added to the project's command policy. */
  commandRules: CommandPolicyRule[];
  /** MCP servers the workspace turns off: every one (`"all"`) or these names. */
  mcpDeny: "all" | string[];
  /** One line per setting the file changed or asked for in vain, for stderr. */
  notes: string[];
  /** The file applied, if any. */
  file?: string;
}

const SANDBOX_ORDER: readonly SandboxMode[] = ["off", "workspace-write", "read-only"];

/** Whether the user trusts the file's exact content: yes, it was trusted but has changed since, or never. */
export type PolicyTrust = "trusted" | "changed" | "untrusted";

/** A setting of the file that gives commands more than penguin's defaults. */
export interface WideningSetting {
  /** Where it is written: `["git"]`, `["network"]`, `["writable_roots", 1]`. */
  key: (string | number)[];
  /** The setting as written: `"git": "writable"`. */
  setting: string;
  /** What it grants commands. */
  grants: string;
  /** Its line and column in the file. */
  position?: Position;
}

/**
 * The settings of `policy` that widen what commands may do beyond penguin's
 * defaults (network off, `.git` read-only, no writable root outside the
 * workspace), in file order of kind. Every new setting that gives commands
 * more belongs here: only a trusted file applies them.
 */
export function wideningSettings(policy: WorkspacePolicy): WideningSetting[] {
  const out: WideningSetting[] = [];
  const add = (key: (string | number)[], setting: string, grants: string) => {
    const position = policy.locate(key);
    out.push({ key, setting, grants, ...(position ? { position } : {}) });
  };
  if (policy.file.git === "writable") {
    add(
      ["git"],
      '"git": "writable"',
      "commands may commit (the object and ref stores of .git become writable)",
    );
  }
  if (policy.file.network === "on") {
    add(["network"], '"network": "on"', "commands may use the network");
  }
  for (const [i, path] of policy.homeReadable.entries()) {
    add(
      ["home_readable", i],
      `"home_readable": [${JSON.stringify(policy.file.home_readable?.[i] ?? path)}]`,
      `commands may read ${JSON.stringify(path)} in the home directory`,
    );
  }
  for (const e of policy.rootEntries) {
    add(
      ["writable_roots", e.index],
      `"writable_roots": [${JSON.stringify(policy.file.writable_roots?.[e.index] ?? e.real)}]`,
      e.outside
        ? `commands may write ${
          JSON.stringify(e.real)
        }, outside the workspace (also needs --grant-writable-roots)`
        // Inside the workspace it adds nothing, or re-opens what penguin keeps read-only
        // there (attack round 19 imports B2): a widening either way.
        : `commands may write ${JSON.stringify(e.real)} as a root of its own`,
    );
  }
  return out;
}

/** A path as one shell word (quoted when it needs to be). */
export function shellWord(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}

/** The warning for a widening setting of an untrusted file, which is ignored. */
function ignoredNote(policy: WorkspacePolicy, w: WideningSetting): string {
  return `warning: ${policy.path}: ${at(w.position)}${w.setting} is ignored (${w.grants}): ` +
    `this ${WORKSPACE_POLICY_FILE} is not trusted, and an untrusted one may only narrow what ` +
    `penguin allows; \`penguin trust ${shellWord(policy.path)}\` reviews it and enables it`;
}

/**
 * Merge the command line with the workspace policy (see the module doc for
 * the rule); `trust` says whether the user trusts the file's content, which
 * alone lets its widening settings apply. Throws a config error, pointing at
 * the setting, for outside writable roots of a trusted file without
 * `--grant-writable-roots`, and a network allowlist with `--network on`.
 */
export function applyWorkspacePolicy(
  flags: PolicyFlags,
  policy: WorkspacePolicy | undefined,
  trust: PolicyTrust = "untrusted",
): EffectivePolicy {
  // Long because: one rule per setting of penguin.jsonc, applied in order to one result; each rule
  // is a few lines.
  const out: EffectivePolicy = {
    sandbox: flags.sandbox,
    network: flags.network,
    ...(flags.approve !== undefined ? { approve: flags.approve } : {}),
    extraWritable: [],
    homeReadable: [],
    git: flags.gitWritable ? "writable" : "read-only",
    commandRules: [],
    mcpDeny: [],
    notes: [],
  };
  if (!policy) return out;
  out.file = policy.path;
  const { file } = policy;
  const name = WORKSPACE_POLICY_FILE;
  const trusted = trust === "trusted";
  const widening = wideningSettings(policy);
  const ignore = (key: string) => {
    const w = widening.find((x) => x.key[0] === key);
    if (w) out.notes.push(ignoredNote(policy, w));
  };
  const refuse = (where: ReadonlyArray<string | number>, what: string) =>
    new PenguinError(
      "config",
      `Cannot apply ${JSON.stringify(policy.path)}: ${at(policy.locate(where))}${what}`,
    );
  if (trust === "changed" && widening.length > 0) {
    out.notes.push(
      `warning: ${policy.path}: ${name} changed since you trusted it; run penguin trust to ` +
        `review it (\`penguin trust ${shellWord(policy.path)}\`); until then it may only narrow`,
    );
  }

  if (file.sandbox !== undefined) {
    if (SANDBOX_ORDER.indexOf(file.sandbox) > SANDBOX_ORDER.indexOf(flags.sandbox)) {
      out.sandbox = file.sandbox;
      out.notes.push(
        `${name}: commands run ${file.sandbox} (narrower than --sandbox ${flags.sandbox})`,
      );
    }
  }

  const net = file.network;
  if (out.sandbox === "off" && net !== undefined && net !== "on") {
    throw refuse(
      ["network"],
      `network: ${name} keeps commands off the network, which takes the OS sandbox, and ` +
        `--sandbox off runs them without one; use --sandbox workspace-write or read-only`,
    );
  }
  if (net === "off" && flags.network) {
    out.network = false;
    out.notes.push(`${name}: commands run without network (narrower than --network on)`);
  } else if (net === "on" && !flags.network) {
    if (trusted) {
      out.network = true;
      out.notes.push(`${name} (trusted): commands may use the network`);
    } else {
      ignore("network");
    }
  } else if (typeof net === "object") {
    if (flags.network) {
      throw refuse(
        ["network"],
        `network.allow: a network allowlist (${net.allow.join(", ")}) cannot be enforced: ` +
          `penguin's sandbox (bubblewrap / Seatbelt) turns the network on or off as a whole and ` +
          `penguin has no filtering proxy. Refusing to run commands with the whole network; set ` +
          `"network": "off" in ${name}, or remove the setting to let --network on apply`,
      );
    }
    out.notes.push(
      `${name}: the network allowlist applies as "off" (--network is off; allowlists cannot be enforced with the network on)`,
    );
  }

  if (file.git === "read-only" && out.git === "writable") {
    out.git = "read-only";
    out.notes.push(`${name}: the git directory stays read-only (narrower than --git-writable)`);
  } else if (file.git === "writable" && out.git === "read-only") {
    if (trusted) {
      out.git = "writable";
      out.notes.push(
        `${name} (trusted): commands may commit (the git object and ref stores are writable; config, hooks and redirections stay read-only)`,
      );
    } else {
      ignore("git");
    }
  }

  if (file.approval !== undefined && flags.approve !== undefined) {
    const rank = (m: PolicyApprovalMode) => POLICY_APPROVAL_MODES.indexOf(m);
    if (rank(file.approval) > rank(flags.approve)) {
      out.approve = file.approval;
      out.notes.push(
        `${name}: approval ${file.approval} (narrower than --approve ${flags.approve})`,
      );
    }
  }

  applyWritableRoots(out, policy, widening, trusted, flags.grantWritableRoots === true, refuse);

  if (policy.homeReadable.length > 0) {
    if (trusted) {
      out.homeReadable = [...policy.homeReadable];
      out.notes.push(
        `${name} (trusted): commands may also read ${
          policy.homeReadable.join(", ")
        } (home_readable)`,
      );
    } else {
      ignore("home_readable");
    }
  }

  if (file.mcp === "off") {
    out.mcpDeny = "all";
    out.notes.push(`${name}: MCP servers are off in this workspace`);
  } else if (file.mcp !== undefined && file.mcp.deny.length > 0) {
    out.mcpDeny = [...file.mcp.deny];
    out.notes.push(`${name}: MCP servers ${file.mcp.deny.join(", ")} are off in this workspace`);
  }

  out.commandRules = (file.command_rules ?? []).map((r) => ({
    name: r.name,
    pattern: r.pattern,
    ...(r.description !== undefined ? { description: r.description } : {}),
  }));
  return out;
}

/**
 * `writable_roots`: only from a trusted file, those outside the workspace
 * only with `--grant-writable-roots` (refused without it); each is ignored
 * with a warning from an untrusted one, inside the workspace too (one there
 * re-opened what penguin keeps read-only, attack round 19 imports B2).
 */
function applyWritableRoots(
  out: EffectivePolicy,
  policy: WorkspacePolicy,
  widening: WideningSetting[],
  trusted: boolean,
  granted: boolean,
  refuse: (where: ReadonlyArray<string | number>, what: string) => PenguinError,
): void {
  const name = WORKSPACE_POLICY_FILE;
  if (!trusted) {
    for (const w of widening) {
      if (w.key[0] === "writable_roots") out.notes.push(ignoredNote(policy, w));
    }
    return;
  }
  const first = policy.rootEntries.find((e) => e.outside);
  if (first && !granted) {
    throw refuse(
      ["writable_roots", first.index],
      `writable_roots: ${JSON.stringify(first.real)} is outside the workspace; ` +
        `${name} may add writable roots outside the workspace only when penguin is started with ` +
        `--grant-writable-roots`,
    );
  }
  out.extraWritable = [...policy.writableRoots];
  if (policy.outsideRoots.length > 0) {
    out.notes.push(
      `${name} (trusted): commands may also write ${
        policy.outsideRoots.join(", ")
      } (--grant-writable-roots)`,
    );
  }
}
