/**
 * The configuration keys a repository a command made may hold and stay a
 * repository: those `git init`, `git clone`, `git remote`, `git branch`,
 * `git submodule` and `git sparse-checkout` write, and a few more settings
 * that run nothing whatever their value ({@linkcode INERT_KEYS}).
 *
 * `GIT_EXEC_KEYS` (`git_exec_keys.ts`) lists the keys that make git run
 * something, for the user's own repository, whose configuration penguin keeps
 * read-only and whose named paths it guards. It cannot be complete: other
 * programs read `.git/config` too and run what it names (git-lfs, through the
 * user's global `filter.lfs.process`, runs `lfs.extension.*.clean` and
 * `lfs.customtransfer.*.path`; git-annex its `annex.*-command`; attack round
 * 28 f02). So a repository a command made below a writable root (checked by
 * `git_nested.ts`) is judged the other way round: any key of its own
 * configuration outside this list arms it, and it is disarmed.
 *
 * @module
 */

/** One inert key: `*` stands for any subsection. */
export interface InertKey {
  /** The key as git's documentation spells it. */
  key: string;
  /** Whether a value keeps it inert (default: every value). */
  inert?: (value: string | null) => boolean;
}

/** The URL schemes git handles itself or with the helpers it ships (`git-remote-http` …). */
const GIT_SCHEMES = new Set([
  "git",
  "ssh",
  "git+ssh",
  "ssh+git",
  "file",
  "http",
  "https",
  "ftp",
  "ftps",
]);

/**
 * A URL that names no transport helper: not `<helper>::<address>` (`ext::`
 * runs its command; any other helper is a `git-remote-<helper>` program), and
 * no `<scheme>://` but those git ships (another scheme runs a
 * `git-remote-<scheme>` program at the user's `git fetch`: attack round 29
 * j02). A path or `host:path` stays plain.
 */
const plainUrl = (v: string | null) => {
  if (v === null || v.includes("::")) return false;
  const scheme = /^([A-Za-z0-9][A-Za-z0-9+.-]*):\/\//.exec(v)?.[1];
  return scheme === undefined || GIT_SCHEMES.has(scheme);
};

/** A `submodule.<name>.update` mode that runs nothing (`!command` runs the command). */
const plainUpdate = (v: string | null) =>
  v !== null && /^\s*(?:checkout|rebase|merge|none)\s*$/i.test(v);

/** The keys a repository a command made may set and stay a repository. */
export const INERT_KEYS: readonly InertKey[] = [
  { key: "core.repositoryFormatVersion" },
  { key: "core.fileMode" },
  { key: "core.bare" },
  { key: "core.logAllRefUpdates" },
  { key: "core.ignoreCase" },
  { key: "core.precomposeUnicode" },
  { key: "core.symlinks" },
  { key: "core.autocrlf" },
  { key: "core.eol" },
  { key: "core.safecrlf" },
  { key: "core.quotePath" },
  { key: "core.sharedRepository" },
  { key: "core.sparseCheckout" },
  { key: "core.sparseCheckoutCone" },
  { key: "extensions.objectFormat" },
  { key: "extensions.worktreeConfig" },
  { key: "init.defaultBranch" },
  { key: "remote.*.url", inert: plainUrl },
  { key: "remote.*.pushurl", inert: plainUrl },
  { key: "remote.*.fetch" },
  { key: "remote.*.push" },
  { key: "remote.*.mirror" },
  { key: "remote.*.tagOpt" },
  { key: "remote.*.prune" },
  { key: "branch.*.remote" },
  { key: "branch.*.pushRemote" },
  { key: "branch.*.merge" },
  { key: "branch.*.rebase" },
  { key: "branch.*.description" },
  { key: "submodule.active" },
  { key: "submodule.*.url", inert: plainUrl },
  { key: "submodule.*.active" },
  { key: "submodule.*.branch" },
  { key: "submodule.*.update", inert: plainUpdate },
  { key: "user.name" },
  { key: "user.email" },
  { key: "pull.rebase" },
  { key: "pull.ff" },
  { key: "push.default" },
  { key: "fetch.prune" },
  { key: "lfs.repositoryFormatVersion" },
];

/** `pattern` (with `*` for a subsection) as a whole-key test; section and name compare without case. */
function keyRegExp(pattern: string): RegExp {
  const body = pattern.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".+");
  return new RegExp(`^${body}$`, "is");
}

const TESTS = INERT_KEYS.map((k) => ({ row: k, re: keyRegExp(k.key) }));

/** Whether `key` (as parsed: section and name lower-cased) set to `value` runs nothing. */
export function isInertKey(key: string, value: string | null): boolean {
  return TESTS.some((t) => t.re.test(key) && (!t.row.inert || t.row.inert(value)));
}
