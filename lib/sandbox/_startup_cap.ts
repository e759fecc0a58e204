/**
 * The startup files' cap, failing closed: penguin reads at most
 * {@linkcode STARTUP_FILES_READ} of the files a home's shell startup files
 * source and name, each up to {@linkcode MAX_STARTUP_FILE}
 * (`home.ts` {@linkcode startupReferences}). What an unread file sources or
 * names is unknown, so it cannot be held; when such a file lies in a
 * writable root, or the kernel could lead its path there (a link on the way
 * in a root, which a command could re-point), the sandbox is refused, and
 * so is every write of the file tools. A file left outside every writable
 * root (under `/etc`, `/usr`) is not the model's to change, and is let be.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";
import {
  MAX_STARTUP_FILE,
  STARTUP_FILES_READ,
  type StartupReferences,
  type Unfollowed,
} from "./home.ts";
import { inside } from "./_paths.ts";
import { walkAsKernel } from "./_link_walk.ts";

/** An unread file that reaches a writable root, and that root. */
export interface UnfollowedInRoot extends Unfollowed {
  /** The writable root it lies in or could lead into. */
  root: string;
  /** The startup file that sourced or named it, when known. */
  by?: string;
}

/**
 * The first file of `refs.unfollowed` that lies in one of `roots` (real
 * paths), or whose path the kernel leads into one or through a link lying
 * in one; undefined when every unread file stays outside the roots.
 */
export function unfollowedInRoots(
  refs: StartupReferences,
  roots: readonly string[],
): UnfollowedInRoot | undefined {
  const rootOf = (p: string) => roots.find((r) => inside(p, r));
  for (const u of refs.unfollowed) {
    const walk = walkAsKernel(u.path);
    const at = [u.path, ...(walk.target !== undefined ? [walk.target] : []), ...walk.links];
    for (const p of at) {
      const root = rootOf(p);
      if (root === undefined) continue;
      const by = refs.namedBy.get(u.path);
      return { ...u, root, ...(by !== undefined ? { by } : {}) };
    }
  }
  return undefined;
}

/** Why the file `u` was not read, as words. */
function whyUnread(u: Unfollowed): string {
  return u.why === "size"
    ? `it is larger than the ${MAX_STARTUP_FILE >> 20} MiB penguin reads of a file`
    : `penguin reads at most ${STARTUP_FILES_READ} of the files they source and name`;
}

/** What the user can do about `u`. */
function advice(u: UnfollowedInRoot): string {
  const fix = u.why === "size"
    ? `make "${u.path}" smaller`
    : `shorten the chain of files the startup files source and name`;
  return `${fix}, or use a workspace (and writable directories) the chain does not reach`;
}

/** The words naming where following stopped: the file and what sourced or named it. */
function where(u: UnfollowedInRoot): string {
  const by = u.by !== undefined ? ` (sourced or named by "${u.by}")` : "";
  return `"${u.path}"${by}`;
}

/** The sandbox's refusal: see the module's documentation. */
export function unfollowedRefusal(home: string, u: UnfollowedInRoot): PenguinError {
  return new PenguinError(
    "runtime",
    `Cannot sandbox: penguin stopped following the shell startup files of the home "${home}" ` +
      `at ${where(u)}: ${whyUnread(u)}. It lies in or leads into the writable root ` +
      `"${u.root}", so a command could change what the host's next shell reads there. ` +
      `To fix: ${advice(u)}`,
  );
}

/** The file tools' refusal of every write: see the module's documentation. */
export function unfollowedWriteRefusal(home: string, u: UnfollowedInRoot): string {
  return `penguin stopped following the shell startup files of the home directory "${home}" at ` +
    `${where(u)}: ${whyUnread(u)}. It lies in or leads into this workspace ("${u.root}"), so ` +
    `penguin cannot tell which files there the host's next shell reads, and refuses every ` +
    `write. Ask the user to ${advice(u)}`;
}
