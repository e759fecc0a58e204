/**
 * Stamps of directories for the nested-repository walk (`git_nested.ts`):
 * what tells whether a directory changed between two looks, so a walk can
 * prove that what it listed is what the tree held at one moment.
 *
 * A stamp is the directory's device and inode and its change time (ctime),
 * which the kernel sets on every entry made, removed or renamed in it and
 * which no program can set back. Deno reports ctime in whole seconds only,
 * which is enough for a directory last changed two seconds or more before the
 * look: any later change gets a later second. A directory changed more
 * recently gets its ctime in nanoseconds from `stat` (GNU coreutils), read
 * before it is listed. This relies on Linux ≥ 6.13's multigrain timestamps
 * (ext4, tmpfs, xfs, btrfs): a change after a `stat` of the directory gets a
 * ctime distinct from the one that `stat` saw. Where no such `stat` runs, the
 * modification time in milliseconds is taken, which the owner could set back.
 *
 * @module
 */
import { existsNow, lstatOrNone } from "./_look.ts";
import { findBash } from "./_executables.ts";
import { statThroughServer } from "./_stat_server.ts";

/** A directory's identity and change stamp at one look. */
export interface DirStamp {
  dev: number;
  ino: number;
  /** `s:<ctime ms>` (whole seconds, an old change), `ns:<ctime>`, or `m:<mtime ms>:<ctime ms>`. */
  stamp: string;
}

/** A ctime this close to the look (ms) is read in nanoseconds. */
const RECENT_MS = 2000;

/**
 * The stamps of `paths`, in order: undefined for one that is gone or not a
 * directory (no link followed). `fine(k)` asks for the nanosecond stamp of
 * `paths[k]` however old its change (a stamp to compare with one taken so).
 */
export async function stampDirs(
  paths: readonly string[],
  fine: (k: number) => boolean = () => false,
): Promise<(DirStamp | undefined)[]> {
  const now = Date.now();
  const out: (DirStamp | undefined)[] = [];
  const want: number[] = [];
  for (const [k, p] of paths.entries()) {
    const info = lstatOrNone(p);
    if (!info?.isDirectory) {
      out.push(undefined);
      continue;
    }
    const c = info.ctime?.getTime();
    const old = c !== undefined && c < now - RECENT_MS && !fine(k);
    out.push({ dev: info.dev, ino: info.ino ?? -1, stamp: old ? `s:${c}` : "" });
    if (!old) want.push(k);
  }
  if (want.length === 0) return out;
  const ctimes = await fineCtimes(want.map((k) => paths[k]!));
  for (const [j, k] of want.entries()) {
    const s = out[k]!;
    if (ctimes === undefined) {
      const info = lstatOrNone(paths[k]!);
      s.stamp = `m:${info?.mtime?.getTime()}:${info?.ctime?.getTime()}`;
      continue;
    }
    const f = ctimes[j];
    out[k] = f === undefined || f.ino !== String(s.ino)
      ? undefined
      : { ...s, stamp: `ns:${f.ctime}` };
  }
  return out;
}

/** GNU `stat` on the host, if any. */
function statTool(): string | undefined {
  if (Deno.build.os !== "linux") return undefined;
  return ["/usr/bin/stat", "/bin/stat"].find((p) => existsNow(p));
}

/** The longest look (its paths' bytes) the kept `stat` process answers. */
const SERVER_LOOK_BYTES = 16 * 1024;

/** Arguments' total length per `stat` run (well below the kernel's limit). */
const ARGS_BYTES = 64 * 1024;

/**
 * Inode and nanosecond ctime of each of `paths`, in order (undefined where
 * `stat` could not look at it), or undefined when no GNU `stat` answers in
 * that form. `stat` answers in the order of its arguments, leaving out the
 * ones it cannot look at: each answer goes to the next path it names, so no
 * second copy of the paths is kept.
 */
async function fineCtimes(
  paths: readonly string[],
): Promise<({ ino: string; ctime: string } | undefined)[] | undefined> {
  const tool = statTool();
  const bash = await findBash();
  if (tool === undefined || bash === undefined) return undefined;
  const out: ({ ino: string; ctime: string } | undefined)[] = paths.map(() => undefined);
  for (let i = 0; i < paths.length;) {
    const first = i;
    const batch: string[] = [];
    let size = 0;
    for (; i < paths.length && (batch.length === 0 || size < ARGS_BYTES); i++) {
      batch.push(paths[i]!);
      size += paths[i]!.length + 1;
    }
    // From the bash this process keeps (a spawn a look cost a turn 20 to 35 ms), else one spawned
    // now. Through bash: penguin's permission set runs bash, not `stat` (attack round 24 perms
    // B4: spawned directly, it was refused and every stamp fell back to whole-second ones).
    // The kept process answers a look of short paths; a look of long ones (a tree of deep paths,
    // megabytes a walk) runs `stat` itself, whose wait lets the walk's garbage be collected.
    let text = size <= SERVER_LOOK_BYTES ? await statThroughServer(tool, batch) : undefined;
    if (text === undefined) {
      try {
        const res = await new Deno.Command(bash, {
          args: ["-c", 'exec "$0" "$@"', tool, "--printf=%i %.9Z %n\\0", "--", ...batch],
          clearEnv: true,
          env: { LC_ALL: "C" },
          stdin: "null",
          stdout: "piped",
          stderr: "null",
        }).output();
        text = new TextDecoder().decode(res.stdout);
      } catch {
        return undefined;
      }
    }
    let at = first;
    for (const rec of text.split("\0")) {
      if (rec === "") continue;
      const m = /^(\d+) (\d+\.\d{9}) (.*)$/s.exec(rec);
      if (m === null) return undefined;
      let j = at;
      while (j < i && paths[j] !== m[3]) j++;
      if (j === i) continue; // not a path of this batch (none is): nothing taken from it
      out[j] = { ino: m[1]!, ctime: m[2]! };
      at = j + 1;
    }
  }
  return out;
}
