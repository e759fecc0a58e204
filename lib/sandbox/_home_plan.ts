/**
 * The mounts the home directory's rule (see `home.ts`) adds to a plan: the
 * hidden home and its read-only toolchain directories, or, for a home in a
 * writable root, the sealing of its top level and of the directories that
 * programs on the host run or load.
 *
 * @module
 */
import { listDirInPlan } from "./_plan_scope.ts";
import { basename, dirname, join, relative, sep } from "node:path";
import { HOME_SECRET_PATTERNS, HOME_SECRETS, homeSecrets, type SandboxPolicy } from "./policy.ts";
import { type Placeholder, standInPaths } from "./_placeholders.ts";
import { isStandInName } from "./_standin_ops.ts";
import { sanitizedGitConfigFile } from "./git_identity.ts";
import { shownCopyOf } from "./_shown_copies.ts";
import { credentialFilesIn } from "./_toolchain_creds.ts";
import {
  absentAmong,
  absentFromHome,
  accountHome,
  expandHomePaths,
  expandSecretPatterns,
  HOME_READABLE_DEFAULTS,
  homeRefusal,
  homesInRoots,
  SEALED_DIRS,
  SEALED_SHOWN,
  sealedHomes,
  STARTUP_DIRS,
  STARTUP_FILES_READ,
  STARTUP_NAMES,
  STARTUP_TEXT_PATHS,
  startupReferences,
  TOOLCHAIN_PATHS,
} from "./home.ts";
import { inside, realOf } from "./_paths.ts";
import { multiLinkFilesIn, otherNames, WALK_BUDGET } from "./_hard_links.ts";
import { type ProtectedFiles, protectedWithOtherNames } from "./_protected_files.ts";
import { PenguinError } from "../protocol/errors.ts";
import {
  existsNow,
  listDirNow,
  lstatOrNone,
  openableNow,
  realPathOrNone,
  statOrNone,
} from "./_look.ts";
import { walkAsKernel } from "./_link_walk.ts";
import { sshConfigReferences } from "./_ssh_config.ts";
import { unfollowedInRoots, unfollowedRefusal } from "./_startup_cap.ts";
import { xdgConfigHomes, xdgStartupPaths } from "./_xdg_config.ts";
import { ownXdgEnv, relocatedXdgDirs, XDG_NAMES } from "./_xdg_hidden.ts";
import { startupValues } from "./_startup_values.ts";
import { otherUserHomes } from "./_user_homes.ts";
import { CREDENTIAL_VARS, ownStoreEnv, relocatedStorePaths } from "./_relocated_stores.ts";

/**
 * A read-only bind of `source` at `target` (they differ when a symlink in the
 * home leads elsewhere). The sandbox's launcher opens `source` and checks
 * that it is still a `kind` reached with no symbolic link on the way before
 * bwrap binds what it opened (`_supervisor.ts`): a directory on the way may
 * be another session's workspace, whose model can swap it for a link at any
 * time (attack round 22).
 */
export interface Reveal {
  /** Real path of what is shown. */
  source: string;
  /** Where it is shown: its path in the home directory. */
  target: string;
  /** What `source` was when the plan was made. */
  kind: "dir" | "file";
}

/**
 * The reveal of `source` at `target`, or undefined when it is neither a directory nor a file
 * now, or one the launcher could not open (a directory it cannot list, a file it cannot read:
 * shown, it would refuse every command). A file is shown as penguin's copy of it
 * (`_shown_copies.ts`), unless it is penguin's own (`own`: the sanitized `~/.gitconfig`).
 */
async function revealOf(
  source: string,
  target: string,
  own: boolean,
): Promise<Reveal | undefined> {
  const kind = openableNow(source);
  if (kind === "dir" || (kind === "file" && own)) return { source, target, kind };
  if (kind !== "file") return undefined;
  const copy = await shownCopyOf(source);
  return copy === undefined ? undefined : { source: copy, target, kind };
}

/** Add the reveal of `source` at `target` to `out` unless something is shown there already. */
async function addReveal(
  out: HomeMounts,
  source: string,
  target: string,
  own = false,
): Promise<void> {
  if (out.reveals.some((r) => r.target === target)) return;
  const r = await revealOf(source, target, own);
  if (r !== undefined) out.reveals.push(r);
}

/** What {@linkcode homeMounts} adds to a plan. */
export interface HomeMounts {
  /**
   * Real directories to cover with an empty read-only tmpfs: the hidden home
   * directories (`$HOME` and the account's home from `/etc/passwd`) and the
   * hidden top-level entries of sealed homes.
   */
  hidden: string[];
  /** The hidden home directories alone (a subset of `hidden`). */
  hiddenHomes: string[];
  /** Real files to cover with `/dev/null`: hidden top-level files of sealed homes. */
  hiddenFiles: string[];
  /** More secret paths to hide like `policy.hide` (those of the account's home). */
  hideMore: string[];
  /** Toolchain directories shown read-only in the hidden home. */
  reveals: Reveal[];
  /** Paths re-bound read-only: sealed homes, their loaded directories, linked startup files. */
  protect: string[];
  /** Subdirectories of sealed homes bound writable onto themselves. */
  pinned: string[];
  /** Stand-ins for missing read-only paths in writable directories (also in `protect`). */
  placeholders: Placeholder[];
}

/** Options of {@linkcode homeMounts}. */
export interface HomeMountOptions {
  /**
   * Only what can refuse the plan is looked at: the walk for credential files
   * in the shown toolchains (which never refuses one) is not made, and the
   * mounts leave those files out; nor is the walk of the hidden homes for
   * files with other names (`_protected_files.ts`). For a check before any
   * command runs, which must not hold up the session's first request; the
   * plans commands run in make the walks (once per process).
   */
  check?: boolean;
  /**
   * Real paths the plan hides besides the homes: the other data roots and
   * penguin's run directories. A toolchain path leading out of the home may
   * lead neither into nor over one of them.
   */
  hiddenElsewhere?: readonly string[];
}

/** The `PATH` directories of the host and of the child environment. */
function pathDirs(policy: SandboxPolicy): string[] {
  const host = policy.env.host ?? Deno.env.toObject();
  const all = [host["PATH"], policy.env.login?.["PATH"]].filter((p) => p !== undefined);
  return all.flatMap((p) => p.split(":")).filter((d) => d.startsWith("/"));
}

/** Whether `p` is a directory (following links). */
function isDir(p: string): boolean {
  return statOrNone(p)?.isDirectory === true;
}

/** A home directory hidden from commands, with what of it is shown. */
interface HiddenHome {
  lexical: string;
  real: string;
  more: readonly string[];
}

/**
 * `$HOME` (real path, and whether it is a directory) and the homes hidden
 * from commands: `$HOME`, and the account's own home (from /etc/passwd)
 * when they differ, or when HOME is `/` or unset, so a command cannot read
 * the user's files through it (its secrets go on `out.hideMore`).
 */
async function hiddenHomesOf(
  policy: SandboxPolicy,
  out: HomeMounts,
): Promise<{ home: string | undefined; homeDir: boolean; hiddenHomes: HiddenHome[] }> {
  const home = policy.home ? await realOf(policy.home) : undefined;
  const homeDir = home !== undefined && home !== "/" && await isDir(home);
  const account = await accountHome();
  const accountReal = account ? await realOf(account) : undefined;
  const hiddenHomes: HiddenHome[] = [];
  if (homeDir) {
    hiddenHomes.push({ lexical: policy.home!, real: home!, more: policy.homeReadable ?? [] });
  }
  if (
    accountReal !== undefined && accountReal !== "/" && accountReal !== home &&
    await isDir(accountReal)
  ) {
    hiddenHomes.push({ lexical: account!, real: accountReal, more: [] });
    out.hideMore.push(...homeSecrets(account!));
  }
  return { home, homeDir, hiddenHomes };
}

/**
 * The home mounts of `policy` over `roots` (real paths; `roots[0]` is the
 * workspace). Throws the refusal of `home.ts` when a root is or contains a
 * home directory and `policy.allowHomeWorkspace` is not set.
 */
export async function homeMounts(
  policy: SandboxPolicy,
  roots: string[],
  writableRoots: boolean,
  opts: HomeMountOptions = {},
): Promise<HomeMounts> {
  const out: HomeMounts = {
    hidden: [],
    hiddenHomes: [],
    hiddenFiles: [],
    hideMore: [],
    reveals: [],
    protect: [],
    pinned: [],
    placeholders: [],
  };
  const workspace = roots[0]!;
  const homes = await homesInRoots(roots, policy.home);
  if (homes.length > 0 && !policy.allowHomeWorkspace) throw homeRefusal(homes[0]!, workspace);
  const hidePaths = policy.hide;
  const isHidden = (p: string) => hidePaths.some((h) => inside(p, h));
  const { home, homeDir, hiddenHomes } = await hiddenHomesOf(policy, out);
  // Credentials kept per installed version inside the shown toolchains (a node version's global
  // npmrc, a python's pip.conf): found by listing the version directories.
  for (const h of hiddenHomes) out.hideMore.push(...await expandSecretPatterns(h.lexical));
  const allHidden = (p: string) => isHidden(p) || out.hideMore.some((h) => inside(p, h));
  const elsewhere = [...hiddenHomes.map((h) => h.real), ...opts.hiddenElsewhere ?? []];
  for (const h of hiddenHomes) {
    await showInHiddenHome(h, policy, roots, { allHidden, elsewhere }, out);
  }
  const relocated = await hideRelocated(policy, roots, out);
  // Credential files planted at any depth in the shown toolchains (`.cache/pip/.netrc`). Only
  // the directories are walked (a file holds no entries and costs the walk nothing), so the
  // plans that show the startup files too (the shell snapshot's) share the walk of commands'.
  // A check does not walk: the walk would hold up the session's first request, and the plans
  // of its commands (the warm-up's first, once the request is answered) walk once for all.
  if (!opts.check) await hideShownCredentialFiles(out, isHidden);
  if (!writableRoots) {
    await hideOutsideSecretNames(policy, roots, out, opts);
    return out;
  }
  const standIns = await standInPaths();
  const sealed = policy.allowHomeWorkspace ? await sealedHomes(roots, workspace, policy.home) : [];
  const loaded = [...SEALED_DIRS, ...TOOLCHAIN_PATHS];
  // A root below a hidden path (the agent's shared_env and memory in the hidden data root) is
  // mounted over it: what lies in that root is the model's to write, not hidden.
  const hiddenHere = (p: string) =>
    allHidden(p) && !roots.some((r) => inside(p, r) && !coveredBelow(r, p, hidePaths, out));
  const ctx: SealContext = {
    paths: pathDirs(policy),
    isHidden: hiddenHere,
    roots,
    standIns,
    out,
    showStartup: policy.showStartupFiles === true,
    pinLater: [],
    sealedDirs: sealed.map((s) => s.dir),
  };
  for (const { dir } of sealed) {
    if (!hiddenHomes.some((h) => h.real === dir)) await hideSecretsOf(dir, out);
    await seal(dir, loaded, ctx);
  }
  await hideSealedToolchainCredentials(ctx, opts);
  // A startup file of the home that links into a writable root (a dotfiles repository), and
  // what the startup files source (`. ~/dotfiles/aliases.sh`): read-only, or held if missing.
  const startupHomes = startupHomesOf(homeDir ? home : undefined, sealed, policy.home);
  await guardStartupFiles(startupHomes, sealed.map((s) => s.dir), ctx);
  // A link on the way to a relocated store or XDG directory in a root: re-pointed, the next plan
  // hid the decoy it then led to (attack round 32 u11, u12b, x08).
  guardWalks(relocated, ctx, relocatedLinkRefusal);
  await guardXdgStartup(xdgConfigHomes(policy.env, policy.home, otherXdgConfigs(policy)), ctx);
  await guardOtherNames(ctx, [...hidePaths, ...out.hideMore], policy, opts);
  pinHiddenInRoots(ctx);
  // Last, once every hidden and read-only path is known (a pinned directory inside one would
  // show it again, writable).
  for (const p of ctx.pinLater) pinBetween(p, ctx);
  return out;
}

/**
 * Whether a hidden path lies between the root `r` and `p` (or is `p`): a
 * secret hidden inside the root (`.netrc` in shared_env) stays hidden.
 */
function coveredBelow(
  r: string,
  p: string,
  hidePaths: readonly string[],
  out: HomeMounts,
): boolean {
  return [...hidePaths, ...out.hideMore].some((h) => inside(p, h) && inside(h, r) && h !== r);
}

/**
 * Credential files by name in the toolchain directories the sealed homes
 * show (`~/.cache/pip/.netrc`), found as in a hidden home's: hidden, and
 * refused by the file tools (`workspace_path.ts`, by name at any depth).
 */
async function hideSealedToolchainCredentials(
  ctx: SealContext,
  opts: HomeMountOptions,
): Promise<void> {
  const shown = ctx.showStartup ? [...HOME_READABLE_DEFAULTS, ...SEALED_SHOWN] : TOOLCHAIN_PATHS;
  const dirs = ctx.sealedDirs.flatMap((h) => expandHomePaths(h, shown))
    .filter((p) => !ctx.isHidden(p));
  if (dirs.length === 0 || opts.check) return;
  for (const p of await credentialFilesIn(dirs)) {
    if (!ctx.isHidden(p)) ctx.out.hideMore.push(p);
  }
}

/**
 * What is hidden inside a root is hidden by its path: the directories on the way are pinned too,
 * or `mv .cargo .cargo2` moved a hidden credentials file where the next command's plan did not
 * look (attack round 31 t09).
 */
function pinHiddenInRoots(ctx: SealContext): void {
  const { out, roots } = ctx;
  for (const p of [...out.hidden, ...out.hiddenFiles, ...out.hideMore]) {
    if (roots.some((r) => inside(p, r) && p !== r)) {
      ctx.pinLater.push(p);
      continue;
    }
    // Named from outside through a link into a root: where it lies is pinned (round 32 x14).
    const real = realPathOrNone(p);
    if (real !== undefined && real !== p && roots.some((r) => inside(real, r) && real !== r)) {
      ctx.pinLater.push(real);
    }
  }
}

/**
 * Pin the directories between the deepest root holding `real` and `real`
 * (those not read-only already), so that `real`, hidden or read-only, cannot
 * be moved aside with its directory and a command's own file made at its path
 * (`mv dotfiles/sub x && mkdir dotfiles/sub`, where `~/.bashrc` leads).
 */
function pinBetween(real: string, ctx: SealContext): void {
  const root = ctx.roots.filter((r) => inside(real, r)).sort((a, b) => b.length - a.length)[0];
  if (root === undefined || root === real) return;
  for (let dir = dirname(real); dir !== root && inside(dir, root); dir = dirname(dir)) {
    if (readOnlyAlready(dir, ctx.out, ctx.roots)) continue;
    if (!ctx.out.pinned.includes(dir)) ctx.out.pinned.push(dir);
  }
}

/**
 * The other names (hard links) in the roots of the files hidden or kept
 * read-only there: hidden or read-only alike. Refused when the search for
 * them stopped at its budget with names unfound.
 */
async function guardOtherNames(
  ctx: SealContext,
  secrets: readonly string[],
  policy: SandboxPolicy,
  opts: HomeMountOptions,
): Promise<void> {
  const { out, roots } = ctx;
  const inRoots = (p: string) => roots.some((r) => inside(p, r) && p !== r);
  const hiddenFiles = out.hiddenFiles.filter(inRoots);
  // The secrets hidden by name (`~/.netrc`) that lie in a root.
  for (const p of secrets) {
    if (!inRoots(p)) continue; // no look-up for each secret of a hidden home
    const real = await realOf(p);
    if (real !== undefined && inRoots(real) && !hiddenFiles.includes(real)) hiddenFiles.push(real);
  }
  // What a secret directory outside the roots holds that links into one (a dotfiles manager's
  // `~/.ssh/id_ed25519 -> ~/dotfiles/ssh/id_ed25519`, `~/.kube/config -> …`): hidden where it
  // lies, as the directory is. Read and rewritten there, the key reached the model and the kube
  // config's `exec` ran at the user's next `kubectl` (attack round 25 concgit c08, c12, c19).
  for (const real of secretLinksIntoRoots(secrets, roots)) {
    if (statOrNone(real)?.isDirectory === true) {
      if (!out.hidden.includes(real)) out.hidden.push(real);
    } else {
      if (!hiddenFiles.includes(real)) hiddenFiles.push(real);
      if (!out.hiddenFiles.includes(real)) out.hiddenFiles.push(real);
    }
    ctx.pinLater.push(real);
  }
  const readOnly = out.protect.filter((p) =>
    inRoots(p) && !out.placeholders.some((h) => h.path === p)
  );
  // Files with other names inside hidden or read-only directories of a root (a key in `~/.ssh`,
  // a program in `~/bin` or `~/.local/bin`, an `~/.ipython` startup file), bounded per process;
  // a home itself is not walked (its top level is read-only, not its subdirectories).
  const isDirNow = (p: string) => statOrNone(p)?.isDirectory === true;
  const homes = ctx.sealedDirs;
  // The secret directories first (small, and what matters most), then the read-only ones.
  for (const d of [...hiddenFiles]) if (isDirNow(d)) hiddenFiles.push(...multiLinkFilesIn(d).files);
  const loadedDirs = [
    ...readOnly,
    ...out.reveals.map((r) => r.source),
    ...ctx.paths,
    ...(await Promise.all(homes.map((h) => expandHomePaths(h, SEALED_DIRS)))).flat(),
  ];
  for (const d of new Set(loadedDirs)) {
    if (inRoots(d) && !homes.includes(d) && isDirNow(d)) {
      readOnly.push(...multiLinkFilesIn(d).files);
    }
  }
  for (const d of out.hidden.filter((p) => inRoots(p) && isDirNow(p))) {
    hiddenFiles.push(...multiLinkFilesIn(d).files);
  }
  // The files kept from commands outside the roots (the hidden home's startup files, keys,
  // programs, git configuration): their other names in a root are hidden or read-only alike.
  const outside = await outsideWithOtherNames(policy, roots, out, opts);
  hiddenFiles.push(...outside.secret);
  readOnly.push(...outside.kept);
  const skip = (dir: string) => coveredByHidden(dir, out.hidden, roots);
  const hidden = await otherNames(hiddenFiles, roots, skip);
  for (const name of hidden.names) {
    if (!out.hiddenFiles.includes(name)) out.hiddenFiles.push(name);
    ctx.pinLater.push(name);
  }
  const kept = await otherNames(readOnly, roots, skip);
  // A name hidden already stays hidden: a read-only bind over it would show it again.
  for (const name of kept.names) if (!out.hiddenFiles.includes(name)) protectInRoots(name, ctx);
  const unfound = [...hidden.unfound, ...kept.unfound];
  if (unfound.length > 0) throw unfoundRefusal(unfound[0]!);
}

/** The refusal when the search for the other names of `file` stopped at its budget. */
function unfoundRefusal(file: string): PenguinError {
  return new PenguinError(
    "runtime",
    `Cannot sandbox: "${file}" has other names (hard links) in the workspace that ` +
      `penguin did not find in the first ${WALK_BUDGET} entries it read; a command could read or ` +
      `change the file through them. Remove the extra links (find <workspace> -samefile ` +
      `"${file}"), or use a smaller workspace`,
  );
}

/**
 * Read-only roots: nothing is written, but a second name of a key or a
 * token file in the workspace is still read; hidden like the file.
 */
async function hideOutsideSecretNames(
  policy: SandboxPolicy,
  roots: readonly string[],
  out: HomeMounts,
  opts: HomeMountOptions,
): Promise<void> {
  const outside = await outsideWithOtherNames(policy, roots, out, opts);
  const hidden = await otherNames(outside.secret, roots, () => false);
  for (const name of hidden.names) {
    if (!out.hiddenFiles.includes(name)) out.hiddenFiles.push(name);
  }
  if (hidden.unfound.length > 0) throw unfoundRefusal(hidden.unfound[0]!);
}

/** The protected files outside the roots with more than one name (`_protected_files.ts`). */
function outsideWithOtherNames(
  policy: SandboxPolicy,
  roots: readonly string[],
  out: HomeMounts,
  opts: HomeMountOptions,
): Promise<ProtectedFiles> {
  return protectedWithOtherNames({
    homes: out.hiddenHomes,
    secrets: [...policy.hide, ...out.hideMore],
    pathDirs: pathDirs(policy),
    roots,
  }, { check: opts.check === true });
}

/**
 * Where a sealed home's dot-entry link leads in a writable root (a dotfiles
 * repository): the user's configuration is hidden there too, its directories
 * pinned; one holding a root stays read-only.
 */
async function hideLinkTarget(real: string, ctx: SealContext): Promise<void> {
  const { out, roots } = ctx;
  if (roots.some((r) => inside(r, real))) {
    if (!roots.includes(real)) protectInRoots(real, ctx);
    return;
  }
  const list = await isDir(real) ? out.hidden : out.hiddenFiles;
  if (!list.includes(real)) list.push(real);
  ctx.pinLater.push(real);
}

/** Keep `real` (in a writable root) read-only, its directories pinned at the end. */
function protectInRoots(real: string, ctx: SealContext): void {
  if (!ctx.out.protect.includes(real)) ctx.out.protect.push(real);
  ctx.pinLater.push(real);
}

/** The `XDG_CONFIG_HOME` values the startup files of the user's other homes set (round 32 u08). */
function otherXdgConfigs(policy: SandboxPolicy): string[] {
  return otherUserHomes(policy.home).flatMap((h) =>
    startupValues(h, ["XDG_CONFIG_HOME"]).map((e) => e["XDG_CONFIG_HOME"]!)
  );
}

/**
 * The homes whose startup files are guarded: penguin's (`home`, when it is a directory), the
 * sealed ones, and the user's other homes (the sudo or doas user's, `/etc/passwd`'s): their
 * shells source what their startup files name too (attack round 31 t07: a sudo user's
 * `~/.bash_aliases` sourcing a workspace file the model rewrote).
 */
function startupHomesOf(
  home: string | undefined,
  sealed: readonly { dir: string }[],
  policyHome: string | undefined,
): string[] {
  return [
    ...new Set([
      ...(home !== undefined ? [home] : []),
      ...sealed.map((s) => s.dir),
      ...otherUserHomes(policyHome).filter((h) => statOrNone(h)?.isDirectory === true),
    ]),
  ];
}

/**
 * The startup files of `homes` that link into a writable root, the files
 * they source (read-only, or held if missing) and the existing files of the
 * home they name (read-only); in a sealed home (outside the login shell's
 * plan) an existing sourced or named file is hidden instead.
 */
async function guardStartupFiles(
  homes: readonly string[],
  sealedDirs: readonly string[],
  ctx: SealContext,
): Promise<void> {
  const { out, roots } = ctx;
  for (const h of homes) {
    const names = [...new Set([...STARTUP_NAMES, ...STARTUP_TEXT_PATHS, ...STARTUP_DIRS])];
    // Most are missing: the home listed once tells them without a failed look-up each.
    const absent = absentFromHome(h, names);
    // The startup file's own path is resolved again by the host's next shell: the links on the
    // way to it (`~/.bashrc -> proj/dotfiles/bashrc`, `proj/dotfiles` a link) are held as well.
    // A missing one meets what the way to the home meets: the first stands for them all.
    const firstAbsent = names.find(absent);
    const own = names.filter((n) => !absent(n) || n === firstAbsent).map((n) => join(h, n));
    guardWalks(own, ctx, ownLinkRefusal);
    for (const name of names) {
      const link = join(h, name);
      if (absent(name) || !(lstatOrNone(link)?.isSymlink === true)) continue;
      const real = await realOf(link);
      if (real === undefined || !roots.some((r) => inside(real, r) && real !== r)) continue;
      // Hidden where it lies (a sealed home's): a read-only bind over it would show it again.
      if (out.hiddenFiles.includes(real) || coveredByHidden(real, out.hidden, roots)) continue;
      protectInRoots(real, ctx);
    }
    // One lying in place in a writable root (a workspace that is a home subdirectory holding it:
    // `~/.config/nvim`, `~/.config/tmux`, `~/.bashrc.d`) is read-only there too: only links were
    // guarded, and the user's next `nvim`, `tmux` or shell ran what the model wrote (attack
    // round 25 concgit c24, c25).
    for (const name of names) {
      const path = join(h, name);
      const info = absent(name) ? undefined : lstatOrNone(path);
      if (info === undefined || info.isSymlink) continue;
      if (!roots.some((r) => inside(path, r))) continue;
      if (out.hiddenFiles.includes(path) || coveredByHidden(path, out.hidden, roots)) continue;
      protectInRoots(path, ctx);
    }
    // What a startup directory holds that links into a root (`~/.ssh/config`, `~/.config/git/config`,
    // `~/.bashrc.d/x.sh` -> `~/dotfiles/...`) is read-only there too (attack round 22 concgit 2–4).
    for (const name of names) {
      const dir = join(h, name);
      if (absent(name) || lstatOrNone(dir)?.isDirectory !== true) continue;
      for (const real of linksIntoRoots(dir, roots)) {
        if (out.hiddenFiles.includes(real) || coveredByHidden(real, out.hidden, roots)) continue;
        protectInRoots(real, ctx);
      }
    }
    const sealedHome = sealedDirs.includes(h);
    // Paths named in a writable root (the agent's shared_env outside the home) count like the
    // home's: a missing one is held there.
    const refs = await startupReferences(h, STARTUP_FILES_READ, roots);
    const stopped = unfollowedInRoots(refs, roots);
    if (stopped !== undefined) throw unfollowedRefusal(h, stopped);
    const { sourced, named, missing, exact, dotted, namedBy } = refs;
    for (const p of [...sourced, ...named]) {
      // In a sealed home what they source or name is hidden from commands like them (it holds tokens).
      if (sealedHome && !ctx.showStartup && inside(p, h) && hideFile(p, ctx)) continue;
      await holdMissing(p, true, ctx);
    }
    // A missing named path (in the home or a writable root) is held too: a string bash runs later
    // (`PROMPT_COMMAND`, `trap`, `alias`, `eval`) may source it.
    const whole = new Set(exact);
    for (const p of missing) await holdMissing(p, whole.has(p), ctx);
    // `~/a/../b.sh` read as the kernel reads it (`a` followed first), besides as joined text.
    for (const p of dotted) {
      if (sealedHome && !ctx.showStartup && hideFile(p, ctx)) continue;
      await holdMissing(p, true, ctx);
    }
    guardWalks(
      [...sourced, ...named, ...missing, ...dotted],
      ctx,
      (path, link, dir) => linkInRootRefusal(namedBy.get(path), path, link, dir),
    );
    await guardSshConfig(h, sealedHome, ctx);
  }
}

/**
 * The startup files of the relocated configuration directories `dirs`
 * (`$XDG_CONFIG_HOME`, `_xdg_config.ts`) that lie in a writable root, or
 * lead into one: kept like the home's own (read-only where they are, what a
 * startup directory holds that links into a root read-only too), a missing
 * one held by a stand-in, the links on the way to each held like those to a
 * startup file of the home (attack round 28 f07: the model appended to
 * `$XDG_CONFIG_HOME/fish/config.fish` and made an autostart entry and a
 * systemd user unit in a dotfiles workspace). A directory outside every
 * root is listed once: its missing entries need no look-up.
 */
async function guardXdgStartup(dirs: readonly string[], ctx: SealContext): Promise<void> {
  const { out, roots } = ctx;
  for (const dir of dirs) {
    const paths = xdgStartupPaths(dir);
    const real = realPathOrNone(dir) ?? await realParent(dir);
    const inRoot = real !== undefined && roots.some((r) => inside(real, r));
    const absent = inRoot ? () => false : absentFromHome(dir, paths.map((p) => p.entry.rel));
    const own: string[] = [];
    for (const { path, entry } of paths) {
      if (absent(entry.rel)) continue;
      own.push(path);
      const { target, missingAt } = walkAsKernel(path);
      if (target === undefined) continue;
      const kept = (p: string) =>
        out.hiddenFiles.includes(p) || coveredByHidden(p, out.hidden, roots);
      // What it holds that links into a root (`fish/conf.d/a.fish -> ~/dotfiles/a.fish`).
      if (missingAt === undefined && statOrNone(target)?.isDirectory === true) {
        for (const link of linksIntoRoots(target, roots)) {
          if (!kept(link)) protectInRoots(link, ctx);
        }
      }
      if (!roots.some((r) => inside(target, r)) || kept(target)) continue;
      // A workspace that is one (`$XDG_CONFIG_HOME/nvim`) is read-only whole, as the home's is.
      if (roots.includes(target)) {
        if (missingAt === undefined) protectInRoots(target, ctx);
        continue;
      }
      if (missingAt !== undefined) {
        if (!entry.holdMissing) continue;
        // A link's missing target that the rest then leaves is held as a directory.
        if (!inside(target, missingAt)) await holdAt(missingAt, "dir", true, ctx);
      }
      await holdAt(target, entry.kind, true, ctx);
    }
    guardWalks(own, ctx, ownLinkRefusal);
  }
}

/**
 * What ssh's configuration in the home `h` includes and names (`_ssh_config.ts`) is kept like
 * what the startup files name: read-only (or held if missing) in a writable root, hidden in a
 * sealed home; a directory an `Include` glob lists is read-only whole, so no file can be added
 * to match.
 */
async function guardSshConfig(h: string, sealedHome: boolean, ctx: SealContext): Promise<void> {
  const { paths, globDirs } = sshConfigReferences(h);
  const inRoot = (p: string) => ctx.roots.some((r) => inside(p, r) && p !== r);
  for (const p of paths) {
    if (!inRoot(p) && !inRoot(dirname(p))) continue;
    if (sealedHome && !ctx.showStartup && inside(p, h) && hideFile(p, ctx)) continue;
    await holdMissing(p, true, ctx);
  }
  for (const d of globDirs) {
    if (!inRoot(d)) continue;
    if (existsNow(d)) protectInRoots((await realOf(d)) ?? d, ctx);
    else await holdMissing(d, true, ctx);
  }
  guardWalks(
    [...paths, ...globDirs].filter(inRoot),
    ctx,
    (path, link, dir) => linkInRootRefusal(undefined, path, link, dir),
  );
}

/**
 * What a command could re-point on the way to a path the startup files
 * name, or to a startup file itself ({@linkcode walkAsKernel}): the directory holding each symbolic link
 * met in a writable root is kept read-only (a link itself cannot be bound),
 * refused when that directory is a writable root itself; each directory a
 * `..` step leaves is kept read-only too, so that it cannot be replaced by
 * a link (`mv sub x && ln -s elsewhere sub`).
 */
function guardWalks(
  paths: readonly string[],
  ctx: SealContext,
  refuse: (path: string, link: string, root: string) => PenguinError,
) {
  const { out, roots } = ctx;
  const inRoot = (p: string) => roots.some((r) => inside(p, r) && p !== r);
  const done = new Set<string>();
  for (const path of new Set(paths)) {
    const walk = walkAsKernel(path);
    for (const link of walk.links) {
      if (!inRoot(link) || done.has(link)) continue;
      done.add(link);
      const dir = dirname(link);
      if (ctx.isHidden(link) || readOnlyAlready(dir, out, roots)) continue;
      if (roots.includes(dir)) throw refuse(path, link, dir);
      protectInRoots(dir, ctx);
    }
    for (const dir of walk.upFrom) {
      if (!inRoot(dir) || done.has(dir) || ctx.isHidden(dir)) continue;
      done.add(dir);
      if (!readOnlyAlready(dir, out, roots)) protectInRoots(dir, ctx);
    }
  }
}

/** The refusal when a link on the way to a path a startup file names lies directly in a root. */
function linkInRootRefusal(
  file: string | undefined,
  path: string,
  link: string,
  root: string,
): PenguinError {
  return new PenguinError(
    "runtime",
    `Cannot sandbox: the startup file "${file ?? "?"}" names "${path}", reached through the ` +
      `symbolic link "${link}", which lies directly in the writable root "${root}"; a command ` +
      `could re-point the link and the host's next shell would read a file of its making. ` +
      `Write the real path (where the link leads) in the startup file instead of the link, or ` +
      `use a workspace that does not hold the link`,
  );
}

/** The refusal when a link on the way to a startup file itself lies directly in a root. */
function ownLinkRefusal(file: string, link: string, root: string): PenguinError {
  return new PenguinError(
    "runtime",
    `Cannot sandbox: the startup file "${file}" is reached through the symbolic link ` +
      `"${link}", which lies directly in the writable root "${root}"; a command could re-point ` +
      `the link and the host's next shell would read a file of its making. Make "${file}" ` +
      `lead to the real path (where the link leads), or use a workspace that does not hold ` +
      `the link`,
  );
}

/**
 * Hold what the kernel leads `path` to ({@linkcode walkAsKernel}: links
 * followed, each `..` taken after them, never as text), like
 * {@linkcode holdAt}: read-only if it exists, else held while missing. A
 * link's missing target that a `..` then leaves (`~/a -> <ws>/sub`, `.
 * ~/a/../b.sh`) is held too, as a directory: made, it would lead the path on.
 */
async function holdMissing(path: string, exact: boolean, ctx: SealContext): Promise<void> {
  const { target, missingAt } = walkAsKernel(path);
  if (target === undefined) return;
  if (missingAt !== undefined && !inside(target, missingAt)) {
    await holdAt(missingAt, "dir", exact, ctx);
  }
  await holdAt(target, "file", exact, ctx);
}

/**
 * Hold the real path `real` (its missing rest as written, no `..` in it)
 * like {@linkcode holdInRoots} when a stand-in can take the name of its
 * first missing component; else (`cr.sh<CR>`, `q{a,b}.sh`) keep the
 * directory it would be made in read-only, when bash may read it whole
 * (`exact`): a name of a cut or as written with such characters is left.
 */
async function holdAt(
  real: string,
  kind: "file" | "dir",
  exact: boolean,
  ctx: SealContext,
): Promise<void> {
  let parent = real;
  let name = "";
  while (parent !== "/" && lstatOrNone(parent) === undefined) {
    name = basename(parent);
    parent = dirname(parent);
  }
  if (name === "" || isStandInName(name)) return await holdInRoots(real, kind, ctx);
  if (exact && statOrNone(parent)?.isDirectory === true) await holdInRoots(parent, "dir", ctx);
}

/**
 * Hide the home `h` (outside every root) and show its toolchains read-only
 * (its startup files too, for the shell snapshot's login shell), and a
 * sanitized git configuration at `~/.gitconfig` for `$HOME`.
 */
async function showInHiddenHome(
  h: { lexical: string; real: string; more: readonly string[] },
  policy: SandboxPolicy,
  roots: readonly string[],
  hidden: { allHidden: (p: string) => boolean; elsewhere: readonly string[] },
  out: HomeMounts,
): Promise<void> {
  const { allHidden, elsewhere } = hidden;
  if (roots.some((r) => inside(h.real, r))) return;
  out.hidden.push(h.real);
  out.hiddenHomes.push(h.real);
  // The startup files only for the login shell of the shell snapshot: users export tokens there.
  const defaults = policy.showStartupFiles ? HOME_READABLE_DEFAULTS : TOOLCHAIN_PATHS;
  const wanted = [...await expandHomePaths(h.lexical, defaults), ...h.more];
  const named = new Set(h.more);
  const hiddenNow = () => [...policy.hide, ...out.hidden, ...out.hideMore];
  for (const target of wanted) {
    const source = await realOf(target);
    if (source === undefined || source === "/") continue;
    // Inside a root it is visible anyway, and a root's contents are the model's to plant.
    if (roots.some((r) => inside(target, r) || inside(source, r))) continue;
    if (allHidden(target) || allHidden(source)) continue;
    // Shown elsewhere than where it lies, nothing hidden inside it would be hidden there: never the
    // home, a directory holding it, or one holding a hidden path (attack round 21 concgit break 1).
    if (source !== target && hiddenNow().some((x) => inside(x, source))) continue;
    // Where it lies with no link below the home, from the same look as `source`: a link on the
    // way may be a model's (another session's workspace), made at any time. A path penguin.jsonc
    // names is shown only there (a second look for links let one swapped in between pass, attack
    // round 23 concgit break 2); a toolchain path may lead out of the home too (`~/.cargo ->
    // /opt/cargo`), never elsewhere in it (`~/go/bin -> ../.bashrc` by a session whose workspace
    // is `~/go`, break 4).
    const inPlace = inside(target, h.lexical)
      ? join(h.real, relative(h.lexical, target))
      : undefined;
    if (source !== inPlace && (named.has(target) || inside(source, h.real))) continue;
    // Out of the home, never into or over what a plan hides there: the account's own home, the
    // other data roots, penguin's run directories (attack round 24 concgit 1: `~/go/bin` linked
    // to another data root by a session whose workspace is `~/go` showed its keys and traces).
    const hides = (x: string) => inside(source, x) || inside(x, source);
    if (source !== inPlace && (elsewhere.some(hides) || hiddenNow().some(hides))) continue;
    await addReveal(out, source, target);
  }
  // Git finds the user's identity at ~/.gitconfig: a sanitized copy, never the real file.
  if (h.lexical === policy.home) {
    await showSanitizedGitConfig(h.lexical, join(h.real, ".gitconfig"), out);
  }
}

/** Hide the relocated XDG directories and credential stores; the paths hidden, as named. */
async function hideRelocated(
  policy: SandboxPolicy,
  roots: readonly string[],
  out: HomeMounts,
): Promise<string[]> {
  return [
    ...await hideRelocatedXdg(policy, roots, out),
    ...hideRelocatedStores(policy, roots, out),
  ];
}

/**
 * Hide the XDG base directories moved out of the home (`_xdg_hidden.ts`; attack round 28 f14),
 * showing the toolchains in them read-only where they lie (a link elsewhere is not followed),
 * inside a root too (a dotfiles workspace: attack rounds 30 o08b, o11 and 31 t03); a root inside
 * one is mounted over it, and one that is a root keeps only its named secrets hidden.
 */
async function hideRelocatedXdg(
  policy: SandboxPolicy,
  roots: readonly string[],
  out: HomeMounts,
): Promise<string[]> {
  // The policy's host environment may carry only what commands get: penguin's own counts too.
  // And the values the login shell exports (`~/.profile`), which the user's own shells have
  // though penguin was started without them (attack round 29 l07).
  const found = [
    ...relocatedXdgDirs(policy.env.host ?? {}, policy.home),
    ...relocatedXdgDirs(ownXdgEnv(), policy.home),
    ...relocatedXdgDirs(policy.env.login ?? {}, policy.home),
    // And what startup files the snapshot's `bash -l` does not run assign (`~/.zshenv`, below
    // `~/.bashrc`'s interactive guard: attack round 30 o03).
    ...startupValues(policy.home, XDG_NAMES).flatMap((e) => relocatedXdgDirs(e, policy.home)),
    // And the user's other homes' (the sudo user's `~/.profile`: attack round 32 u08).
    ...otherUserHomes(policy.home).flatMap((h) =>
      startupValues(h, XDG_NAMES).flatMap((e) => relocatedXdgDirs(e, h))
    ),
  ];
  const hidden: string[] = [];
  for (const x of found) {
    const real = await realOf(x.dir);
    if (real === undefined || real === "/") continue;
    if (!isDir(real)) continue;
    if (roots.includes(real)) {
      // A root itself (the workspace is the configuration directory): the model's, but the
      // home's secrets there hidden by name.
      for (const p of await xdgSecrets(real, x.usual, true)) {
        if (!out.hideMore.includes(p)) out.hideMore.push(p);
      }
      continue;
    }
    // In a root (a dotfiles repository as the workspace) it is hidden whole as well, as the
    // home's `~/.config` is: a list of credential directories missed eleven programs' tokens
    // (attack round 31 t03), and the configuration of direnv, wezterm, starship, … there runs at
    // the user's next use of them (round 30 o11).
    if (!out.hideMore.includes(real)) out.hideMore.push(real);
    hidden.push(x.dir);
    for (const target of x.toolchains) {
      const source = await realOf(target);
      if (source === undefined || source !== join(real, relative(x.dir, target))) continue;
      await addReveal(out, source, target);
    }
    // The home's secrets inside those toolchains, mapped there as well (`uv/credentials`,
    // `pnpm/.npmrc`, `mise/installs/python/*/pip.conf`: attack round 29 l06).
    for (const p of await xdgSecrets(real, x.usual)) {
      if (p !== real && !out.hideMore.includes(p)) out.hideMore.push(p);
    }
  }
  return hidden;
}

/**
 * The home's secrets in the XDG directory `real` that stands for `usual` (`.local/share/`) of a
 * home, that exist: the directory itself when the home's list names it whole (`.config`; in a
 * root, its credential directories), else the named entries and patterns below it, mapped there.
 */
async function xdgSecrets(real: string, usual: string, inRoot = false): Promise<string[]> {
  if (HOME_SECRETS.includes(usual.replace(/\/$/, ""))) {
    // In a root, what of a configuration directory holds credentials (a dotfiles repository's
    // other files stay the model's to edit).
    return inRoot ? CONFIG_SECRETS.map((n) => join(real, n)).filter((p) => lstatOrNone(p)) : [real];
  }
  const mapped = (list: readonly string[]) =>
    list.filter((p) => p.startsWith(usual)).map((p) => p.slice(usual.length));
  const named = mapped(HOME_SECRETS).map((p) => join(real, p)).filter((p) => lstatOrNone(p));
  return [...named, ...await expandSecretPatterns(real, mapped(HOME_SECRET_PATTERNS))];
}

/**
 * Hide the credential stores the tools' own variables move out of the home (`CARGO_HOME`,
 * `GNUPGHOME`, `KUBECONFIG`, …: `_relocated_stores.ts`), as penguin, the commands' environment
 * and the login shell have them; not a root, nor one holding a root.
 */
function hideRelocatedStores(
  policy: SandboxPolicy,
  roots: readonly string[],
  out: HomeMounts,
): string[] {
  const envs = [
    policy.env.host ?? {},
    ownStoreEnv(),
    policy.env.login ?? {},
    ...startupValues(policy.home, Object.keys(CREDENTIAL_VARS)),
  ];
  const hidden: string[] = [];
  for (const p of new Set(envs.flatMap(relocatedStorePaths))) {
    if (roots.some((r) => inside(r, p)) || lstatOrNone(p) === undefined) continue;
    if (!out.hideMore.includes(p)) out.hideMore.push(p);
    hidden.push(p);
  }
  return hidden;
}

/** The refusal when a link on the way to a relocated store or XDG directory lies directly in a root. */
function relocatedLinkRefusal(path: string, link: string, root: string): PenguinError {
  return new PenguinError(
    "runtime",
    `Cannot sandbox: "${path}", which a variable names as a credential store or XDG directory ` +
      `to hide, is reached through the symbolic link "${link}", which lies directly in the ` +
      `writable root "${root}"; a command could re-point the link, and the next command's ` +
      `sandbox would hide where it then leads instead. Set the variable to the real path (where ` +
      `the link leads), or use a workspace that does not hold the link`,
  );
}

/**
 * Hide the credential files the walk finds in the shown directories, unless the policy hides it
 * or a hide below what shows one covers it already: a relocated XDG directory is hidden whole above its shown
 * toolchains, which made every file found there count as hidden (attack round 29 l06:
 * `$XDG_CACHE_HOME/pip/pip.conf`).
 */
async function hideShownCredentialFiles(
  out: HomeMounts,
  isHidden: (p: string) => boolean,
): Promise<void> {
  const shown = out.reveals.map((r) => r.target);
  for (const p of await credentialFilesIn(shown.filter(isDir))) {
    if (isHidden(p)) continue; // a secret the policy names (`.gem/credentials`)
    const at = shown.filter((t) => inside(p, t)).reduce((a, t) => t.length > a.length ? t : a, "");
    if (!out.hideMore.some((h) => inside(p, h) && inside(h, at))) out.hideMore.push(p);
  }
}

/**
 * Whether commands cannot see `p` because a hidden directory covers it: the
 * deepest of the hidden directories and the roots holding `p` is a hidden one.
 * A root inside a hidden directory (a workspace in the hidden home,
 * `~/dotfiles`) is mounted over it, and what lies in the root is the model's
 * to write (attack round 21 concgit break 2: `~/.gitconfig` linking into
 * `~/dotfiles` was left writable, as "hidden").
 */
export function coveredByHidden(
  p: string,
  hidden: readonly string[],
  roots: readonly string[],
): boolean {
  let deepest = -1;
  let covered = false;
  for (const d of hidden) {
    if (inside(p, d) && d.length >= deepest) [deepest, covered] = [d.length, true];
  }
  for (const r of roots) {
    if (inside(p, r) && r.length > deepest) [deepest, covered] = [r.length, false];
  }
  return covered;
}

/** Entries a startup directory's look for links into a root reads at most. */
const STARTUP_DIR_ENTRIES = 4096;

/**
 * The real paths in `roots` (not a root itself) that the symbolic links below
 * the directory `dir` lead to, three levels down at most, within
 * {@linkcode STARTUP_DIR_ENTRIES} entries.
 */
function linksIntoRoots(dir: string, roots: readonly string[]): string[] {
  const out: string[] = [];
  let left = STARTUP_DIR_ENTRIES;
  const queue: Array<{ path: string; depth: number }> = [{ path: dir, depth: 1 }];
  while (queue.length > 0 && left > 0) {
    const { path, depth } = queue.shift()!;
    let entries: Deno.DirEntry[];
    try {
      entries = listDirInPlan(path);
    } catch {
      continue;
    }
    for (const e of entries) {
      if (--left < 0) break;
      const p = join(path, e.name);
      if (e.isSymlink) {
        const real = realPathOrNone(p);
        if (real !== undefined && roots.some((r) => inside(real, r) && real !== r)) out.push(real);
      } else if (e.isDirectory && depth < 3) queue.push({ path: p, depth: depth + 1 });
    }
  }
  return out;
}

/**
 * The names of `~/.config` that hold credentials, whose links into a root
 * are hidden (the rest of `~/.config`, editors' and shells' settings a
 * dotfiles workspace holds, stays visible there).
 */
const CONFIG_SECRETS = [
  ...["gh", "gcloud", "rclone", "hub", "op", "doctl", "netlify", "heroku", "glab-cli"],
  ...["containers", "git/credentials", "Code/User/globalStorage", "github-copilot"],
  // Attack round 31 t03: eleven more programs' tokens were read in a workspace holding them.
  ...["pip", "sops", "ngrok", "configstore", "hcloud", "stripe", "pypoetry", "msmtp", "helm"],
  ...["tea", "aerc", "age", "gopass", "rbw", "Bitwarden CLI", "atuin", "mc", "wrangler"],
  ...["openstack", "scw", "linode-cli", "kaggle", "huggingface", "vercel", "com.vercel.cli"],
  ...["jira", ".jira", "twilio", "fly", "gitlab", "sentry", "aws", "azure", "docker"],
  ...["chromium", "google-chrome", "BraveSoftware", "Slack", "discord", "keepassxc", "Signal"],
];

/**
 * The real paths in `roots` that the secret directories of `secrets` (those
 * outside every root) hold links to, up to three levels down; for
 * `~/.config`, only in its {@linkcode CONFIG_SECRETS}.
 */
function secretLinksIntoRoots(secrets: readonly string[], roots: readonly string[]): string[] {
  const out: string[] = [];
  const outside = secrets.filter((p) => !roots.some((r) => inside(p, r) || inside(r, p)));
  const named = outside.flatMap((p) =>
    p.endsWith("/.config") ? CONFIG_SECRETS.map((n) => join(p, n)) : [p]
  );
  // Most are missing (a hundred and more names): their directories listed once tell them.
  const absent = absentAmong(named);
  for (const p of outside) {
    const dirs = p.endsWith("/.config") ? CONFIG_SECRETS.map((n) => join(p, n)) : [p];
    for (const d of dirs) {
      const info = absent(d) ? undefined : lstatOrNone(d);
      if (info === undefined) continue;
      if (info.isSymlink) {
        // A whole secret directory linked into a root: hidden where it lies.
        const real = realPathOrNone(d);
        if (real !== undefined && roots.some((r) => inside(real, r) && real !== r)) out.push(real);
      } else if (info.isDirectory) out.push(...linksIntoRoots(d, roots));
    }
  }
  return out;
}

/** A sealed home other than `$HOME`: its credentials are hidden like those of `$HOME`. */
async function hideSecretsOf(dir: string, out: HomeMounts): Promise<void> {
  for (const p of [...homeSecrets(dir), ...await expandSecretPatterns(dir)]) {
    if (!out.hideMore.includes(p)) out.hideMore.push(p);
  }
}

interface SealContext {
  paths: readonly string[];
  isHidden: (p: string) => boolean;
  roots: readonly string[];
  standIns: ReadonlySet<string>;
  out: HomeMounts;
  /** The plan is the shell snapshot's login shell's: startup files shown read-only, not hidden. */
  showStartup: boolean;
  /** Hidden or read-only paths in a root whose directories are pinned at the end. */
  pinLater: string[];
  /** The sealed homes (real paths). */
  sealedDirs: readonly string[];
}

/**
 * Cover the existing regular file `path` leads to (as the kernel leads it,
 * {@linkcode walkAsKernel}) with `/dev/null`; false when it is no such file.
 */
function hideFile(path: string, ctx: SealContext): boolean {
  const { target: real, missingAt } = walkAsKernel(path);
  if (real === undefined || missingAt !== undefined || !(statOrNone(real)?.isFile === true)) {
    return false;
  }
  if (!ctx.roots.some((r) => inside(real, r))) return false;
  if (!ctx.out.hiddenFiles.includes(real)) ctx.out.hiddenFiles.push(real);
  ctx.pinLater.push(real);
  return true;
}

/**
 * Keep `path` read-only when it lies in a writable root: bound read-only if
 * it exists, else a stand-in for its first missing component (an empty
 * directory, or an empty file when that is `path` and `kind` is `file`), and
 * the directories between the root and either pinned, so that they cannot be
 * renamed away and the path made anew. A path under a link is followed to
 * where the link leads.
 */
async function holdInRoots(path: string, kind: "file" | "dir", ctx: SealContext): Promise<void> {
  const { out, roots, standIns } = ctx;
  const resolved = await realOf(path) ?? await realParent(path);
  if (resolved === undefined) return;
  const root = roots.filter((r) => inside(resolved, r)).sort((a, b) => b.length - a.length)[0];
  if (root === undefined || root === resolved || ctx.isHidden(resolved)) return;
  if (readOnlyAlready(resolved, out, roots)) return;
  let cur = root;
  const between: string[] = [];
  for (const part of relative(root, resolved).split(sep)) {
    if (cur !== root) between.push(cur);
    cur = join(cur, part);
    const info = standIns.has(cur) ? undefined : lstatOrNone(cur);
    if (info === undefined) {
      if (!out.placeholders.some((p) => p.path === cur)) {
        out.placeholders.push(
          cur === resolved && kind === "file"
            ? { path: cur, kind: "file", content: "" }
            : { path: cur, kind: "dir" },
        );
        out.protect.push(cur);
      }
      break;
    }
    if (cur === resolved && !out.protect.includes(cur)) out.protect.push(cur);
  }
  for (const dir of between) {
    if (readOnlyAlready(dir, out, roots)) continue;
    if (!out.pinned.includes(dir)) out.pinned.push(dir);
  }
}

/** Whether the deepest mount over `p` so far is read-only (a sealed home, a hidden entry). */
function readOnlyAlready(p: string, out: HomeMounts, roots: readonly string[]): boolean {
  let best: { len: number; ro: boolean } | undefined;
  const consider = (m: string, ro: boolean) => {
    if (inside(p, m) && (best === undefined || m.length >= best.len)) best = { len: m.length, ro };
  };
  for (const m of [...roots, ...out.pinned]) consider(m, false);
  for (const m of [...out.protect, ...out.hidden]) consider(m, true);
  return best?.ro ?? false;
}

/** `path` with its existing ancestors resolved (its missing tail kept), or undefined. */
async function realParent(path: string): Promise<string | undefined> {
  const tail: string[] = [];
  for (let p = path; p !== "/"; p = dirname(p)) {
    const r = await realOf(p);
    if (r !== undefined) return join(r, ...tail.reverse());
    tail.push(basename(p));
  }
  return undefined;
}

/**
 * Seal the home `dir` in a writable root: its top level read-only; every
 * top-level dot-entry (the user's configuration and credentials) hidden,
 * except the toolchain and startup paths, shown read-only; its other
 * subdirectories writable (pinned) except `.git` (the git guard's) and those
 * of `loaded` and the `PATH` directories, which stay read-only, with a
 * stand-in where one is missing.
 */
async function seal(dir: string, loaded: readonly string[], ctx: SealContext): Promise<void> {
  const { out, roots, isHidden } = ctx;
  if (!out.protect.includes(dir)) out.protect.push(dir);
  // The startup files only for the login shell of the shell snapshot: users export tokens there.
  const shown = ctx.showStartup ? [...HOME_READABLE_DEFAULTS, ...SEALED_SHOWN] : TOOLCHAIN_PATHS;
  const readOnly = [
    ...await expandHomePaths(dir, loaded),
    ...ctx.paths.filter((p) => inside(p, dir) && p !== dir),
  ];
  const rootBelow = (p: string) => roots.some((r) => inside(r, p));
  const dotEntries: Deno.DirEntry[] = [];
  for (const e of listDirNow(dir)) {
    const child = join(dir, e.name);
    if (e.name === ".git" || isHidden(child)) continue;
    if (e.name.startsWith(".")) {
      dotEntries.push(e);
      continue;
    }
    if (!e.isDirectory || readOnly.includes(child)) continue;
    // A root below it is bound on its own.
    if (roots.includes(child)) continue;
    out.pinned.push(child);
  }
  for (const e of dotEntries) {
    const child = join(dir, e.name);
    // Shown whole (a startup file, `.rustup`): read-only with the top level.
    if (shown.includes(e.name)) {
      if (e.isSymlink) await keepLinked(child, ctx);
      continue;
    }
    if (rootBelow(child)) continue;
    const real = await realOf(child);
    if (real === undefined) continue; // a dangling link in a read-only top level
    if (e.isSymlink && roots.some((r) => inside(real, r))) {
      await hideLinkTarget(real, ctx);
      continue;
    }
    if (await isDir(real)) {
      if (!out.hidden.includes(real)) out.hidden.push(real);
      // The toolchain paths below it are shown read-only again.
      const below = shown.filter((rel) => rel.startsWith(e.name + "/"));
      for (const target of await expandHomePaths(dir, below)) {
        const source = await realOf(target);
        if (source === undefined || isHidden(target) || isHidden(source)) continue;
        if (roots.some((r) => inside(source, r)) && !inside(source, real)) {
          protectInRoots(source, ctx);
        }
        await addReveal(out, source, target);
      }
    } else {
      if (!out.hiddenFiles.includes(real)) out.hiddenFiles.push(real);
      if (e.name === ".gitconfig" && e.isFile) await showSanitizedGitConfig(dir, child, out);
    }
  }
  // Loaded directories outside the dot-entries (`bin`, `go/bin`, PATH directories): read-only,
  // held by a stand-in when missing below a writable subdirectory.
  for (const rel of loaded.filter((r) => !r.startsWith(".") && !r.endsWith("*"))) {
    const first = join(dir, rel.split("/")[0]!);
    if (existsNow(first)) {
      await holdInRoots(join(dir, rel), "dir", ctx);
    }
  }
  for (const p of ctx.paths) {
    if (!inside(p, dir) || p === dir) continue;
    const first = relative(dir, p).split(sep)[0]!;
    // Below a dot-entry: hidden or shown read-only whole (a missing one cannot be made).
    if (first.startsWith(".")) continue;
    if (existsNow(join(dir, first))) {
      await holdInRoots(p, "dir", ctx);
    }
  }
}

/**
 * Bind the sanitized global git configuration of `home` (`git_identity.ts`)
 * read-only at `target`, over the hidden real one.
 */
async function showSanitizedGitConfig(home: string, target: string, out: HomeMounts) {
  const source = await sanitizedGitConfigFile(home);
  if (source !== undefined) await addReveal(out, source, target, true);
}

/** A shown top-level link of a sealed home: what it leads to in a writable root stays read-only. */
async function keepLinked(link: string, ctx: SealContext): Promise<void> {
  const real = await realOf(link);
  if (real === undefined || ctx.isHidden(real)) return;
  if (ctx.roots.some((r) => inside(real, r)) && !ctx.roots.includes(real)) {
    protectInRoots(real, ctx);
  }
}
