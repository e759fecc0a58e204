/**
 * What a sandboxed child may see and touch: the {@linkcode SandboxPolicy}
 * and the helpers that build one with penguin's defaults.
 *
 * @module
 */
import { dirname, isAbsolute, join, resolve } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import type { GitAccess } from "./git_guard.ts";
import { type WorkspaceId, workspaceIdentities, workspaceIdOf } from "./workspace_identity.ts";
import { sudoHomes } from "./_user_homes.ts";

export { type WorkspaceId, workspaceIdOf };

/** How strictly a child is confined. */
export type SandboxMode =
  /** Read-only root; the workspace, scratchpad and extra paths are writable. */
  | "workspace-write"
  /** Read-only root; nothing on the host is writable (a private /tmp still is). */
  | "read-only"
  /** No OS sandbox at all: the user opted out. Environment rules still apply. */
  | "off";

/** Every {@linkcode SandboxMode}, for flag validation and help texts. */
export const SANDBOX_MODES: readonly SandboxMode[] = ["workspace-write", "read-only", "off"];

/** The child environment inputs (see `env.ts` for how they combine). */
export interface SandboxEnv {
  /** Extra host variable names to pass through on top of the built-in allowlist. */
  allow: string[];
  /** The Agent's vault: injected after the allowlist, before the forced values. */
  vault: Record<string, string>;
  /** The host environment to draw from; defaults to `Deno.env.toObject()`. */
  host?: Record<string, string>;
  /**
   * The shell snapshot (see `login_env.ts`): variables the user's login
   * shell exported, applied over the host allowlist, under the vault and
   * the forced values, filtered like host variables.
   */
  login?: Record<string, string>;
}

/** Everything that decides what a sandboxed child may do. */
export interface SandboxPolicy {
  /** Confinement level. */
  mode: SandboxMode;
  /**
   * False: the plan leaves the other data roots penguin has used alone (the
   * sandbox probe, which tests the machine, not a session's policy). Default:
   * every known data root is hidden.
   */
  hideOtherDataRoots?: boolean;
  /** Absolute workspace directory: writable in `workspace-write`, always visible. */
  workspace: string;
  /**
   * The workspace as it was when the policy was made: its real path and its
   * identity (device and inode). Every plan refuses a workspace that resolves
   * elsewhere or to another directory since, and the sandbox binds the
   * directory it opened and checked, never a path looked up again (see
   * `plan.ts`, `bwrap.ts`). Absent: taken the first time a plan is made.
   */
  workspaceId?: WorkspaceId;
  /**
   * The other writable roots (scratchpad, `revealWritable`, `extraWritable`)
   * that existed when the policy was made, by the path given here: each
   * one's real path and identity. Like the workspace, a root that resolves
   * elsewhere or to another directory since is refused, and the sandbox
   * binds the directory it opened and checked (`plan.ts`, `bwrap.ts`).
   * One missing here is taken the first time a plan sees it.
   */
  rootIds?: Record<string, WorkspaceId>;
  /** Absolute session scratchpad directory, writable like the workspace (optional). */
  scratchpad?: string;
  /** More absolute directories the child may write (workspace-write only). */
  extraWritable: string[];
  /** Whether the child may use the network (off: a private network namespace). */
  network: boolean;
  /** Absolute paths the child must not see: the data root, home secrets. Missing ones are skipped. */
  hide: string[];
  /**
   * penguin's data root (also in `hide`): noted in the list of data roots
   * (`_data_roots.ts`), each of which every plan hides.
   */
  dataRoot?: string;
  /**
   * The user's home directory (absolute): hidden outside the roots except
   * its toolchain directories, and refused as (or inside) a writable root
   * unless `allowHomeWorkspace` (see `home.ts`). Absent: no home rule.
   */
  home?: string;
  /** More absolute paths in `home` shown read-only (a workspace policy's `home_readable`). */
  homeReadable?: string[];
  /** `--allow-home-workspace`: a root may be or contain a home directory, which is then sealed. */
  allowHomeWorkspace?: boolean;
  /**
   * Show the shell startup files of a hidden home (`home.ts`
   * {@linkcode SHELL_STARTUP_PATHS}) read-only: only the login shell that
   * takes the shell snapshot (`login_env.ts`) sets it; commands never see them.
   */
  showStartupFiles?: boolean;
  /**
   * Files and directories bound read-only at their own path even when a
   * hidden directory (or the private `/tmp`) holds them: the tool host's
   * own executable and code. Missing ones are skipped.
   */
  reveal?: string[];
  /**
   * Directories bound at their own path even when a hidden directory holds
   * them, writable like the workspace in `workspace-write` (read-only in
   * `read-only`): the agent's memory and shared_env directories. The file tools reach
   * exactly these too (`lib/tools/workspace_path.ts`). Missing ones are skipped.
   */
  revealWritable?: string[];
  /** Environment allowlist and vault. */
  env: SandboxEnv;
  /**
   * Process limit inside the sandbox (a fork-bomb brake): RLIMIT_NPROC, and for root, which the
   * kernel exempts from it, the process-count guard of `_proc_guard.ts`. Default 2048.
   */
  maxProcesses?: number;
  /** Use this bubblewrap binary instead of searching for one (tests, unusual installs). */
  bwrapPath?: string;
  /**
   * How far commands may change the workspace's git directory (see
   * `git_guard.ts`); workspace-write only. Default `read-only`.
   */
  git?: GitAccess;
}

/** Default RLIMIT_NPROC for sandboxed children (threads count too). */
export const DEFAULT_MAX_PROCESSES = 2048;

/**
 * Paths under `$HOME` that hold credentials or personal configuration. The
 * whole home directory is hidden from sandboxed children outside the
 * workspace (see `home.ts`); these stay hidden wherever the home is shown
 * again: a workspace that is the home, a toolchain directory holding one
 * (`~/.gem/credentials`), a link that leads out of the home.
 */
export const HOME_SECRETS: readonly string[] = [
  ".ssh",
  ".aws",
  ".config",
  ".gnupg",
  ".docker",
  ".kube",
  ".netrc",
  ".penguin",
  ".claude",
  ".claude.json",
  ".codex",
  ".gemini",
  ".git-credentials",
  ".npmrc",
  ".yarnrc",
  ".pypirc",
  ".pgpass",
  ".my.cnf",
  ".s3cfg",
  ".boto",
  ".azure",
  ".oci",
  ".password-store",
  ".vault-token",
  ".terraform.d",
  ".terraformrc",
  ".huggingface",
  ".cache/huggingface/token",
  ".cache/huggingface/stored_tokens",
  ".kaggle",
  ".pulumi",
  ".databrickscfg",
  ".local/share/fish",
  ".config/gcloud",
  ".gitconfig.local",
  ".sqlite_history",
  ".rediscli_history",
  ".irb_history",
  ".local/share/atuin",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".gem/credentials",
  ".local/share/uv/credentials",
  ".dotnet/corefx/cryptography",
  ".m2/settings.xml",
  ".gradle/gradle.properties",
  ".local/share/keyrings",
  ".local/share/kwalletd",
  ".local/share/python_keyring",
  ".local/share/containers/auth.json",
  ".local/share/com.vercel.cli",
  ".m2/settings-security.xml",
  ".yarnrc.yml",
  ".bunfig.toml",
  ".pip",
  ".bundle",
  ".composer/auth.json",
  ".dockercfg",
  ".subversion",
  ".hgrc",
  ".curlrc",
  ".wgetrc",
  ".fly",
  ".wrangler",
  ".sentryclirc",
  ".pki",
  ".thunderbird",
  ".mozilla",
  ".bash_history",
  ".zsh_history",
  ".python_history",
  ".psql_history",
  ".mysql_history",
  ".node_repl_history",
  ".lesshst",
  ".viminfo",
];

/**
 * Credentials inside the toolchain directories `home.ts` shows, where a
 * version manager keeps one install per version: npm's global config
 * (`<node prefix>/etc/npmrc`, written by `npm config set --location=global`),
 * pip's site config (`<python prefix>/pip.conf`), RubyGems' system config
 * (`<ruby prefix>/etc/gemrc`). Relative to the home; a `*` segment matches
 * any one name. Expanded at plan time by `expandSecretPatterns` (a listing
 * of each `*` directory) and matched by the file tools with
 * `secretPatternCovers`.
 */
export const HOME_SECRET_PATTERNS: readonly string[] = [
  ".nvm/versions/node/*/etc/npmrc",
  ".volta/tools/image/node/*/etc/npmrc",
  ".asdf/installs/nodejs/*/etc/npmrc",
  ".local/share/mise/installs/node/*/etc/npmrc",
  ".fnm/node-versions/*/installation/etc/npmrc",
  ".local/share/pnpm/global/*/.npmrc",
  ".local/share/pnpm/.npmrc",
  ".pyenv/versions/*/pip.conf",
  ".pyenv/versions/*/envs/*/pip.conf",
  ".asdf/installs/python/*/pip.conf",
  ".local/share/mise/installs/python/*/pip.conf",
  ".local/share/uv/python/*/pip.conf",
  ".local/share/uv/tools/*/pip.conf",
  ".local/share/uv/tools/*/uv-receipt.toml",
  ".rbenv/versions/*/etc/gemrc",
  ".asdf/installs/ruby/*/etc/gemrc",
  ".local/share/mise/installs/ruby/*/etc/gemrc",
];

/** The absolute secret paths under `home` (whether or not they exist). */
export function homeSecrets(home: string): string[] {
  return HOME_SECRETS.map((p) => join(home, p));
}

/**
 * Credentials in the user's runtime directory (`$XDG_RUNTIME_DIR`, else
 * `/run/user/<uid>`), relative: podman, buildah and skopeo keep their
 * registry logins in `containers/auth.json` there by default.
 */
export const RUNTIME_SECRETS: readonly string[] = ["containers"];

/**
 * The runtime-directory secrets for `env`: each runtime directory whole when it is one as the
 * XDG specification has it (a directory of the user's, mode 0700: a Kerberos ticket cache, a
 * keyring, flatpak and gvfs state lie there; its sockets are refused by the seccomp filter anyway:
 * attack round 29 l18), else {@linkcode RUNTIME_SECRETS} in it (whether or not they exist).
 */
export function runtimeSecrets(env: Record<string, string>): string[] {
  const dirs = new Set<string>();
  const xdg = env["XDG_RUNTIME_DIR"];
  if (xdg && isAbsolute(xdg) && resolve(xdg) !== "/") dirs.add(resolve(xdg));
  let uid: number | null = null;
  try {
    uid = Deno.uid();
    if (uid !== null) dirs.add(`/run/user/${uid}`);
  } catch {
    // no uid on this platform
  }
  const own = (d: string) => {
    try {
      const info = Deno.lstatSync(d);
      return info.isDirectory && info.uid === uid && ((info.mode ?? 0o777) & 0o077) === 0;
    } catch {
      return false;
    }
  };
  return [...dirs].flatMap((d) => own(d) ? [d] : RUNTIME_SECRETS.map((p) => join(d, p)));
}

/**
 * The machine's own secrets that the read-only root would show a command of penguin running as
 * root (attack round 28 f: `/etc/shadow` was read): the password hashes and the SSH host keys.
 * For another user they are unreadable anyway; hidden all the same.
 */
export const SYSTEM_SECRETS: readonly string[] = [
  "/etc/shadow",
  "/etc/shadow-",
  "/etc/gshadow",
  "/etc/gshadow-",
  "/etc/security/opasswd",
];

/**
 * Where machines keep credentials beside the password files (attack round 29 l12: a backup of
 * `/etc/shadow`, a TLS private key and debconf's passwords were read by a command of penguin
 * running as root): hidden when present, a directory whole.
 */
export const SYSTEM_SECRET_PLACES: readonly string[] = [
  "/etc/ssl/private",
  "/etc/pki/tls/private",
  "/etc/letsencrypt",
  "/etc/krb5.keytab",
  "/etc/ipsec.secrets",
  "/etc/ppp/chap-secrets",
  "/etc/ppp/pap-secrets",
  "/etc/wireguard",
  "/etc/NetworkManager/system-connections",
  "/etc/mysql/debian.cnf",
  "/etc/sssd",
  "/etc/samba/smbpasswd",
  "/etc/ceph",
  "/etc/kubernetes",
  "/etc/rancher",
  "/etc/docker/key.json",
  "/var/cache/debconf/passwords.dat",
  "/var/cache/private",
  "/var/lib/private",
  "/var/lib/samba/private",
  "/var/lib/kubelet/pki",
  "/var/lib/rancher/k3s/server",
];

/**
 * The directories whose entries only root may read are hidden from the commands of a penguin
 * running as root ({@linkcode rootOnlyEntries}): a sandboxed root has no capability left, so it
 * reads a file by its owner bits, which makes every root-owned file there its own.
 */
export const ROOT_ONLY_DIRS: readonly string[] = ["/etc", "/var/backups"];

/**
 * The entries of `dirs` (not below them) that root owns, or root's group, and others may not
 * read; a directory whole, a link never (what it names is judged where it lies).
 */
export function rootOnlyEntries(dirs: readonly string[]): string[] {
  const out: string[] = [];
  for (const dir of dirs) {
    let names: string[];
    try {
      names = [...Deno.readDirSync(dir)].filter((e) => !e.isSymlink).map((e) => e.name);
    } catch {
      continue;
    }
    for (const name of names.sort()) {
      const path = join(dir, name);
      try {
        const info = Deno.lstatSync(path);
        // Root's own, or its group's (a sandboxed root reads by group too: attack round 30 o05).
        const rootish = info.uid === 0 || info.gid === 0;
        if (rootish && info.mode !== null && (info.mode & 0o004) === 0) out.push(path);
      } catch {
        // Gone meanwhile.
      }
    }
  }
  return out;
}

let systemSecretsFound: { key: string; paths: string[] } | undefined;

/** The directories whose change may change {@linkcode systemSecrets}: where each one lies. */
const SECRET_DIRS = [
  ...new Set(["/etc/ssh", ...ROOT_ONLY_DIRS, ...SYSTEM_SECRET_PLACES.map((p) => dirname(p))]),
];

/** What tells that `SECRET_DIRS` changed: each one's modification time, or its absence. */
function secretDirsStamp(): string {
  return SECRET_DIRS.map((d) => {
    try {
      const info = Deno.lstatSync(d);
      return `${info.mtime?.getTime()}:${info.ino}`;
    } catch {
      return "-";
    }
  }).join(",");
}

/**
 * {@linkcode SYSTEM_SECRETS}, the SSH host keys of `/etc/ssh`, the {@linkcode SYSTEM_SECRET_PLACES}
 * that exist and, for a penguin running as root, the root-only entries of
 * {@linkcode ROOT_ONLY_DIRS}: looked up again when one of the directories they lie in changed
 * (a backup of `/etc/shadow` or a TLS key made during a session was shown: attack round 30 o04).
 */
export function systemSecrets(): string[] {
  const key = secretDirsStamp();
  if (systemSecretsFound?.key === key) return systemSecretsFound.paths;
  const keys: string[] = [];
  try {
    for (const e of Deno.readDirSync("/etc/ssh")) {
      if (/^ssh_host_.*_key$/.test(e.name)) keys.push(join("/etc/ssh", e.name));
    }
  } catch {
    // No /etc/ssh (or not readable): nothing of it to hide.
  }
  const places = SYSTEM_SECRET_PLACES.filter((p) => {
    try {
      Deno.lstatSync(p);
      return true;
    } catch {
      return false;
    }
  });
  const asRoot = Deno.uid() === 0 ? rootOnlyEntries(ROOT_ONLY_DIRS) : [];
  const paths = [...new Set([...SYSTEM_SECRETS, ...keys.sort(), ...places, ...asRoot])];
  systemSecretsFound = { key, paths };
  return paths;
}

/**
 * The directory of the key that marks penguin's data roots (`lib/state/root_mark.ts`) when
 * `PENGUIN_KEY_DIR` puts it outside `~/.penguin` (hidden with the home secrets).
 */
function keyDirOf(env: Record<string, string>): string[] {
  const dir = env["PENGUIN_KEY_DIR"];
  return dir && isAbsolute(dir) && resolve(dir) !== "/" ? [resolve(dir)] : [];
}

/** Inputs of {@linkcode createPolicy}. */
export interface PolicyOptions {
  /** Workspace directory (resolved against the cwd). */
  workspace: string;
  /**
   * The workspace's identity, taken when the session started
   * (`workspace_identity.ts`): used when its path is `workspace`, so the
   * directory is not pinned down a second time. Absent: taken now.
   */
  workspaceId?: WorkspaceId;
  /** Default `workspace-write`. */
  mode?: SandboxMode;
  /** Default false. */
  network?: boolean;
  /** Session scratchpad directory. */
  scratchpad?: string;
  /** More writable directories. */
  extraWritable?: string[];
  /** penguin's data root: hidden (except the workspace/scratchpad inside it). */
  dataRoot?: string | undefined;
  /** Home directory, hidden except its toolchains (see `home.ts`); default `$HOME`. */
  home?: string;
  /** More paths in the home shown read-only (absolute, or `~/…`). */
  homeReadable?: string[];
  /** Let a root be or contain a home directory (`--allow-home-workspace`). */
  allowHomeWorkspace?: boolean;
  /** More paths to hide. */
  hide?: string[];
  /** Paths inside hidden ones to show read-only (e.g. the agent's skills). */
  reveal?: string[];
  /** Paths inside hidden ones to show writable (the agent's memory and shared_env directories). */
  revealWritable?: string[];
  /** Vault values for the child environment. */
  vault?: Record<string, string>;
  /** Extra host variable names to pass through. */
  allowEnv?: string[];
  /** Host environment (default `Deno.env.toObject()`). */
  hostEnv?: Record<string, string>;
  /** RLIMIT_NPROC inside the sandbox. */
  maxProcesses?: number;
  /** Explicit bubblewrap binary. */
  bwrapPath?: string;
  /** Git directory access for commands; default `read-only`. */
  git?: GitAccess;
}

/**
 * A policy with penguin's defaults: workspace-write, network off, the data
 * root, the home directory (but its toolchains) and the home secrets hidden (Unix sockets are refused by the seccomp
 * filter of `seccomp.ts`, wherever they are).
 */
export function createPolicy(opts: PolicyOptions): SandboxPolicy {
  const hostEnv = opts.hostEnv;
  const home = opts.home ?? (hostEnv ?? Deno.env.toObject())["HOME"];
  const hide = [
    ...(opts.dataRoot ? [resolve(opts.dataRoot)] : []),
    ...(home ? homeSecrets(resolve(home)) : []),
    ...runtimeSecrets(hostEnv ?? Deno.env.toObject()),
    ...keyDirOf(hostEnv ?? Deno.env.toObject()),
    ...systemSecrets(),
    ...sudoHomes(home ? resolve(home) : undefined),
    ...(opts.hide ?? []).map((p) => resolve(p)),
  ];
  const policy: SandboxPolicy = {
    mode: opts.mode ?? "workspace-write",
    workspace: resolve(opts.workspace),
    extraWritable: (opts.extraWritable ?? []).map((p) => resolve(p)),
    network: opts.network ?? false,
    hide,
    env: { allow: opts.allowEnv ?? [], vault: opts.vault ?? {} },
    maxProcesses: opts.maxProcesses ?? DEFAULT_MAX_PROCESSES,
  };
  if (home) policy.home = resolve(home);
  if (home && opts.homeReadable?.length) {
    policy.homeReadable = opts.homeReadable.map((p) =>
      p === "~" || p.startsWith("~/") ? join(resolve(home), p.slice(1)) : resolve(p)
    );
  }
  if (opts.dataRoot) policy.dataRoot = resolve(opts.dataRoot);
  if (opts.allowHomeWorkspace) policy.allowHomeWorkspace = true;
  if (opts.git) policy.git = opts.git;
  if (hostEnv) policy.env.host = hostEnv;
  if (opts.scratchpad) policy.scratchpad = resolve(opts.scratchpad);
  if (opts.reveal?.length) policy.reveal = opts.reveal.map((p) => resolve(p));
  if (opts.revealWritable?.length) {
    policy.revealWritable = opts.revealWritable.map((p) => resolve(p));
  }
  if (opts.bwrapPath) policy.bwrapPath = opts.bwrapPath;
  // The session's workspace is the directory there now: a path swapped later (by a process that
  // can rename it or one of its parents) must not lead the sandbox to another one.
  // So is every other writable root, which may lie where another session can rename it too (a
  // trusted `writable_roots: ["../shared"]` in an enclosing session's workspace). All are pinned
  // down by one shell; the workspace only when the session has not done so already.
  const given = opts.workspaceId?.path === policy.workspace ? opts.workspaceId : undefined;
  const others = writableRootPaths(policy);
  const ids = workspaceIdentities(given ? others : [policy.workspace, ...others]);
  const id = given ?? ids.shift();
  if (id && !("problem" in id)) policy.workspaceId = id;
  const rootIds: Record<string, WorkspaceId> = {};
  others.forEach((p, i) => {
    const rid = ids[i]!;
    if (!("problem" in rid)) rootIds[p] = rid;
  });
  if (Object.keys(rootIds).length > 0) policy.rootIds = rootIds;
  return policy;
}

/**
 * The writable roots of `policy` besides the workspace, as given: the
 * scratchpad, the revealed writable directories and (in `workspace-write`)
 * the extra writable directories.
 */
export function writableRootPaths(policy: SandboxPolicy): string[] {
  return [
    ...(policy.scratchpad ? [policy.scratchpad] : []),
    ...(policy.revealWritable ?? []),
    ...(policy.mode === "workspace-write" ? policy.extraWritable : []),
  ];
}

/** Parse a `--sandbox` value; throws a usage error naming `flag` otherwise. */
export function parseSandboxMode(value: string, flag = "--sandbox"): SandboxMode {
  if ((SANDBOX_MODES as readonly string[]).includes(value)) return value as SandboxMode;
  throw new PenguinError(
    "usage",
    `${flag} must be one of ${SANDBOX_MODES.join(", ")}, got ${JSON.stringify(value)}`,
  );
}

/** Throw a usage error when a policy path is not absolute (relative paths are ambiguous in a sandbox). */
export function assertPolicyPaths(policy: SandboxPolicy): void {
  const paths: [string, string][] = [["workspace", policy.workspace]];
  if (policy.scratchpad !== undefined) paths.push(["scratchpad", policy.scratchpad]);
  for (const p of policy.extraWritable) paths.push(["extraWritable", p]);
  for (const p of policy.revealWritable ?? []) paths.push(["revealWritable", p]);
  for (const p of policy.hide) paths.push(["hide", p]);
  for (const [name, p] of paths) {
    if (!isAbsolute(p)) {
      throw new PenguinError(
        "usage",
        `Sandbox policy ${name} path must be absolute, got ${JSON.stringify(p)}`,
      );
    }
  }
}
