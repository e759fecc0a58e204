/**
 * File-system failures a user must fix (permission denied, a read-only or
 * full file system, a disk quota), turned into a user error when a command
 * let one through: `Read-only file system (os error 30): mkdir '/x/y'`
 * becomes `Cannot create the directory "/x/y": the file system is
 * read-only`, printed without "internal error" or a stack hint.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";

const WHY: Record<string, string> = {
  "1": "the operation is not permitted",
  "13": "permission denied",
  "28": "no space left on the device",
  "30": "the file system is read-only",
  "122": "the disk quota is exceeded",
};

const VERB: Record<string, string> = {
  mkdir: "create the directory",
  open: "open",
  remove: "remove",
  rename: "rename",
  write: "write",
  copy: "copy",
  chmod: "change the mode of",
  symlink: "create the link",
  link: "create the link",
  truncate: "truncate",
};

/** The user error for `err` when it is one of those failures, else undefined. */
export function osFailure(err: unknown): PenguinError | undefined {
  if (!(err instanceof Error)) return undefined;
  const m = err.message.match(/\(os error (\d+)\)(?:: (\w+) '([^']*)')?/);
  const why = m ? WHY[m[1]!] : undefined;
  if (why === undefined) return undefined;
  const op = m![2];
  // Without the operation and path, the OS's own words are all there is to say.
  if (op === undefined) return new PenguinError("runtime", err.message, { cause: err });
  return new PenguinError("runtime", `Cannot ${VERB[op] ?? op} ${JSON.stringify(m![3])}: ${why}`, {
    cause: err,
  });
}
