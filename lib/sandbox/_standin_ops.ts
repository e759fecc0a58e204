/**
 * Creating and removing stand-ins inside the directory a plan saw, never
 * through a path a rename may have redirected (issue 26, red team C20).
 *
 * A session whose workspace encloses another can exchange that workspace
 * (or a parent) with a link to a directory outside both, over and over. A
 * stand-in made by path at such a moment lands in that other directory, and
 * one removed by path is looked for there. penguin's permissions do not let
 * it act relative to an open directory (`/proc/self/fd` is refused), so a
 * shell does it: for the operations of each parent it enters the parent
 * (`cd -P`), checks that the directory it is in lies at the parent's path
 * (`$PWD`, which `cd -P` sets from the kernel's working directory), and only
 * then acts on the names relative to `.` — its working directory is the
 * directory it entered, wherever a later rename takes it. A parent that no
 * longer lies at its path is reported `moved`, and nothing is done there.
 * All operations of one plan run in one shell, with one `stat` per parent
 * for the identities compared and one for those made: besides the shell,
 * `mkdir` or `ln` per stand-in made, `rmdir` or `rm` per stand-in removed.
 *
 * A file stand-in is made empty (a new file of a random name in the parent,
 * created exclusively under `set -C`, which never follows a link, then
 * linked to its name with `ln -T`, which never replaces anything); its
 * content is written by the caller once the file it opens is the one made
 * ({@linkcode writeContent}). Names are penguin's own (`.git`,
 * `penguin.jsonc`, …): an operation on any other name fails.
 *
 * @module
 */
import { basename, dirname } from "node:path";
import { tryOpen } from "../state/_fs.ts";
import { findSh } from "./_executables.ts";

/** One operation on the stand-in at `path` (absolute, its parent a real path; `rm0`: an empty file). */
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
 * Arguments come in groups, one per parent directory: the parent, the
 * number of operations, the names whose identity the removals and checks
 * compare (one `stat` for all), then per operation: the operation, the name,
 * and the device and inode the name must have ("" for none; for `file`, the
 * random part of the temporary file's name). The parent is entered and
 * checked once (`cd -P`, then `$PWD` after `cd -P /proc/self/fd/8` of a
 * descriptor of it: the kernel's path, whatever the shell; bash's own `cd -P`
 * sets `$PWD` from its look before its `chdir`); every operation of the
 * group acts there. One line of
 * output per operation, then `ids <dev> <ino> <name>` for the names made
 * (one `stat` for all), and the temporary files go (one `rm`).
 */
const SCRIPT = `
set -C
while [ "$#" -ge 3 ]; do
  dir=$1 n=$2 look=$3
  shift 3
  ok= before= made= tmps=
  if cd -P -- "$dir" 2>/dev/null && exec 8<. && cd -P /proc/self/fd/8 2>/dev/null &&
    [ "$PWD" = "$dir" ]; then ok=1; fi
  exec 8<&-
  if [ -n "$ok" ] && [ -n "$look" ]; then before=$(stat -c '%d %i %n' -- $look 2>/dev/null); fi
  while [ "$n" -gt 0 ]; do
    op=$1 name=$2 want=$3
    shift 3
    n=$((n - 1))
    if [ -z "$ok" ]; then echo moved; continue; fi
    case $op in
    dir)
      if mkdir -- "$name" 2>/dev/null; then echo made; made="$made $name"
      elif [ -e "$name" ] || [ -L "$name" ]; then echo exists
      else echo failed; fi ;;
    file)
      tmp=.penguin-stand-in.$want
      if ! true 2>/dev/null >"$tmp"; then echo failed; continue; fi
      tmps="$tmps $tmp"
      if ln -T -- "$tmp" "$name" 2>/dev/null; then echo made; made="$made $name"
      elif [ -e "$name" ] || [ -L "$name" ]; then echo exists
      else echo failed; fi ;;
    rmdir|rm|rm0|check)
      case "
$before
" in
      *"
$want $name
"*) ;;
      *" $name
"*) echo other; continue ;;
      *) echo missing; continue ;;
      esac
      if [ -z "$want" ]; then echo other
      elif [ "$op" = check ]; then echo same
      elif [ "$op" = rmdir ] && rmdir -- "$name" 2>/dev/null; then echo removed
      elif [ "$op" = rm ] && [ ! -d "$name" ] && rm -f -- "$name" 2>/dev/null; then echo removed
      elif [ "$op" = rm0 ] && [ -f "$name" ] && [ ! -s "$name" ] && rm -f -- "$name" 2>/dev/null
      then echo removed
      else echo failed; fi ;;
    *) echo failed ;;
    esac
  done
  if [ -n "$made" ]; then stat -c 'ids %d %i %n' -- $made 2>/dev/null; fi
  if [ -n "$tmps" ]; then rm -f -- $tmps 2>/dev/null; fi
done
`;

/** Names the script takes: penguin's own fixed names, safe to split on spaces unquoted. */
const SAFE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]*$|^\.[A-Za-z0-9_][A-Za-z0-9._-]*$/;

/** Whether a stand-in can be made under the name `name` (see {@linkcode SAFE_NAME}). */
export const isStandInName = (name: string): boolean => SAFE_NAME.test(name);

function parse(line: string | undefined, ids: Map<string, [number, number]>, name: string) {
  const word = (line ?? "").trim();
  if (word === "made") {
    const found = ids.get(name);
    return found ? { result: "made" as const, dev: found[0], ino: found[1] } : failed;
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
      return failed;
  }
}

const failed: StandInResult = { result: "failed" };

/** The operations of `ops` in groups of one parent each (consecutive ones), with their indexes. */
function groups(ops: readonly StandInOp[]): { dir: string; at: number[] }[] {
  const out: { dir: string; at: number[] }[] = [];
  for (const [i, o] of ops.entries()) {
    const dir = dirname(o.path);
    const last = out.at(-1);
    if (last && last.dir === dir) last.at.push(i);
    else out.push({ dir, at: [i] });
  }
  return out;
}

/** Run `ops` in one shell (see the module doc); one result each, in order. */
export async function applyStandInOps(ops: readonly StandInOp[]): Promise<StandInResult[]> {
  const results: StandInResult[] = ops.map(() => failed);
  const runnable = ops.map((o, i) => ({ o, i })).filter(({ o }) =>
    SAFE_NAME.test(basename(o.path)) && !o.path.includes("\n")
  );
  if (runnable.length === 0) return results;
  const grouped = groups(runnable.map((r) => r.o));
  const args: string[] = [];
  for (const g of grouped) {
    const look = g.at.map((j) => runnable[j]!.o).filter((o) => !(o.op === "dir" || o.op === "file"))
      .map((o) => basename(o.path));
    args.push(g.dir, String(g.at.length), [...new Set(look)].join(" "));
    for (const j of g.at) {
      const o = runnable[j]!.o;
      const want = o.op === "file"
        ? crypto.randomUUID().replaceAll("-", "")
        : "dev" in o && o.dev !== undefined && o.ino !== undefined
        ? `${o.dev} ${o.ino}`
        : "";
      args.push(o.op, basename(o.path), want);
    }
  }
  const sh = findSh();
  if (sh === undefined) throw new Error("no sh to run the stand-in operations with");
  const out = await new Deno.Command(sh, {
    args: ["-c", SCRIPT, "sh", ...args],
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", LC_ALL: "C" },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  const lines = new TextDecoder().decode(out.stdout).split("\n");
  let k = 0;
  for (const g of grouped) {
    const words = g.at.map(() => lines[k++]);
    const ids = new Map<string, [number, number]>();
    while (lines[k]?.startsWith("ids ")) {
      const [, dev, ino, ...name] = lines[k++]!.split(" ");
      const d = Number(dev);
      const i = Number(ino);
      if (dev && ino && Number.isSafeInteger(d) && Number.isSafeInteger(i)) {
        ids.set(name.join(" "), [d, i]);
      }
    }
    for (const [n, j] of g.at.entries()) {
      const { o, i } = runnable[j]!;
      results[i] = parse(words[n], ids, basename(o.path));
    }
  }
  return results;
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
  const file = await tryOpen(path, { read: true, write: true });
  if (file === null) return undefined;
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
