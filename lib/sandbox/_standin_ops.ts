/**
 * Creating and removing stand-ins inside the directory a plan saw, never
 * through a path a rename may have redirected (issue 26, red team C20).
 *
 * A session whose workspace encloses another can exchange that workspace
 * (or a parent) with a link to a directory outside both, over and over. A
 * stand-in made by path at such a moment lands in that other directory, and
 * one removed by path is looked for there. penguin's permissions do not let
 * it act relative to an open directory (`/proc/self/fd` is refused), so a
 * shell does it: for each operation it enters the stand-in's parent
 * (`cd -P`), checks that the directory it is in lies at the parent's path
 * (`pwd -P`), and only then acts on the name relative to `.` — its working
 * directory is the directory it entered, wherever a later rename takes it.
 * A parent that no longer lies at its path is reported `moved`, and nothing
 * is done there. All operations of one plan run in one shell.
 *
 * A file stand-in is made empty (`mktemp` in the parent, which never follows
 * a link, then linked to its name with `ln -T`, which never replaces
 * anything); its content is written by the caller once the file it opens is
 * the one made ({@linkcode writeContent}).
 *
 * @module
 */
import { basename, dirname } from "node:path";

/** One operation on the stand-in at `path` (absolute, its parent a real path). */
export type StandInOp =
  | { op: "dir" | "file"; path: string }
  | {
    op: "rmdir" | "rm" | "rm0" | "check";
    path: string;
    dev?: number | undefined;
    ino?: number | undefined;
  };

/**
 * What an operation found: `made` (with the new file's device and inode),
 * `exists` (the name was taken), `moved` (the parent no longer lies at its
 * path: nothing done), `removed`, `missing`, `other` (the name holds another
 * file than the one given), `same` (a `check` found the file given),
 * `failed`.
 */
export type StandInResult =
  | { result: "made"; dev: number; ino: number }
  | { result: "exists" | "moved" | "removed" | "missing" | "other" | "same" | "failed" };

/**
 * Arguments come four at a time: operation, parent, name, and the device and
 * inode the name must have ("" for none). One line of output per operation.
 */
const SCRIPT = `
ids() { stat -c '%d %i' -- "$1" 2>/dev/null; }
while [ "$#" -ge 4 ]; do
  op=$1 dir=$2 name=$3 want=$4
  shift 4
  if ! cd -P -- "$dir" 2>/dev/null || [ "$(pwd -P)" != "$dir" ]; then echo moved; continue; fi
  case $op in
  dir)
    if mkdir -- "$name" 2>/dev/null; then echo "made $(ids "$name")"
    elif [ -e "$name" ] || [ -L "$name" ]; then echo exists
    else echo failed; fi ;;
  file)
    if ! tmp=$(mktemp ./.penguin-stand-in.XXXXXXXXXX 2>/dev/null); then echo failed; continue; fi
    if ln -T -- "$tmp" "$name" 2>/dev/null; then r="made $(ids "$name")"
    elif [ -e "$name" ] || [ -L "$name" ]; then r=exists
    else r=failed; fi
    rm -f -- "$tmp"
    echo "$r" ;;
  rmdir|rm|rm0|check)
    if ! cur=$(ids "$name"); then echo missing; continue; fi
    if [ "$cur" != "$want" ]; then echo other; continue; fi
    if [ "$op" = check ]; then echo same
    elif [ "$op" = rmdir ] && rmdir -- "$name" 2>/dev/null; then echo removed
    elif [ "$op" = rm ] && [ ! -d "$name" ] && rm -f -- "$name" 2>/dev/null; then echo removed
    elif [ "$op" = rm0 ] && [ -f "$name" ] && [ ! -s "$name" ] && rm -f -- "$name" 2>/dev/null; then
      echo removed
    else echo failed; fi ;;
  *) echo failed ;;
  esac
done
`;

function parse(line: string | undefined): StandInResult {
  const [word, dev, ino] = (line ?? "").trim().split(" ");
  if (word === "made") {
    const d = Number(dev);
    const i = Number(ino);
    if (dev && ino && Number.isSafeInteger(d) && Number.isSafeInteger(i)) {
      return { result: "made", dev: d, ino: i };
    }
    return { result: "failed" };
  }
  switch (word) {
    case "exists":
    case "moved":
    case "removed":
    case "missing":
    case "other":
    case "same":
      return { result: word };
    default:
      return { result: "failed" };
  }
}

/** Run `ops` in one shell (see the module doc); one result each, in order. */
export async function applyStandInOps(ops: readonly StandInOp[]): Promise<StandInResult[]> {
  if (ops.length === 0) return [];
  const args: string[] = [];
  for (const o of ops) {
    const want = "dev" in o && o.dev !== undefined && o.ino !== undefined
      ? `${o.dev} ${o.ino}`
      : "";
    args.push(o.op, dirname(o.path), basename(o.path), want);
  }
  const out = await new Deno.Command("sh", {
    args: ["-c", SCRIPT, "sh", ...args],
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", LC_ALL: "C" },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  const lines = new TextDecoder().decode(out.stdout).split("\n");
  return ops.map((_, i) => parse(lines[i]));
}

/**
 * Open the file stand-in just made at `path` and write `content` into it,
 * when the file opened is the one made (`dev`, `ino`, still empty): the path
 * may lead elsewhere by now. Opened for reading and writing (never blocks on
 * a FIFO) and without creating or truncating anything. The open file, or
 * undefined when it is not the one made.
 */
export async function writeContent(
  path: string,
  made: { dev: number; ino: number },
  content: string,
): Promise<Deno.FsFile | undefined> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true, write: true });
  } catch {
    return undefined;
  }
  try {
    const info = await file.stat();
    if (!info.isFile || info.dev !== made.dev || info.ino !== made.ino || info.size !== 0) {
      file.close();
      return undefined;
    }
    const bytes = new TextEncoder().encode(content);
    let n = 0;
    while (n < bytes.length) n += await file.write(bytes.subarray(n));
    return file;
  } catch {
    file.close();
    return undefined;
  }
}
