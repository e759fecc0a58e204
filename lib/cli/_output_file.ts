/**
 * Writing a file the user named with `-o`: a regular file (or a new one) is
 * written beside its real path and renamed into place, so a write that
 * fails (a full disk) leaves no partial file and an existing file as it
 * was; a device or FIFO (`-o /dev/stdout`) is written directly.
 *
 * @module
 */
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import { renameInDir } from "../sandbox/pinned_rename.ts";

/**
 * Refuse `path` when it goes through a symbolic link below the current
 * directory (the workspace, typically, where a command may have made one):
 * `-o report.md` linked to `~/.ssh/authorized_keys`, or `-o out/r.md` with
 * `out` linked to the home directory, wrote there (attack round 19 imports
 * B3). Links above the current directory are the user's own (`/dev/stdout`
 * from a project directory is written).
 */
function refuseLinkOnTheWay(path: string): boolean {
  let cwd: string;
  try {
    cwd = Deno.cwd();
  } catch {
    return false;
  }
  if (cwd === "/") return false;
  const rel = relative(cwd, resolve(path));
  if (rel === "" || rel.startsWith("..") || rel.startsWith(sep)) return false;
  let at = cwd;
  for (const part of rel.split(sep)) {
    at = join(at, part);
    let link = false;
    try {
      link = Deno.lstatSync(at).isSymlink;
    } catch {
      return true; // missing from here on: nothing to follow
    }
    if (link) {
      throw new PenguinError(
        "usage",
        `Cannot write "${path}": "${at}" is a symbolic link, and penguin does not write ` +
          `through a link in the current directory (a command may have made it to lead elsewhere). ` +
          `Remove the link, or name a path without it`,
      );
    }
  }
  return true;
}

/**
 * Where `-o path` is written, and how the written file takes its place: a
 * path below the current directory (checked free of links just before) is
 * taken as it is, never resolved again, and the file is renamed onto it by
 * name in its directory as checked ({@linkcode renameInDir}): a rename
 * replaces a link a command swaps in meanwhile instead of following it, and
 * a directory swapped for a link refuses it (attack round 20 imports G1: a
 * link flipped in between the check and the write took `~/.bashrc`).
 */
async function placeOf(path: string): Promise<{ target: string; pinned: boolean }> {
  if (refuseLinkOnTheWay(path)) return { target: resolve(path), pinned: true };
  return { target: await realOrSelf(path), pinned: false };
}

/** The file there now, for a pinned place without following a link (a link counts as none). */
async function infoOf(target: string, pinned: boolean): Promise<Deno.FileInfo | undefined> {
  const info = await (pinned ? Deno.lstat(target) : Deno.stat(target)).catch(() => undefined);
  return pinned && info?.isSymlink ? undefined : info;
}

async function realOrSelf(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return path;
    throw err;
  }
}

/** A fresh temporary name in the directory of `target`. */
function tmpBeside(target: string): string {
  return join(
    dirname(target),
    `.${basename(target).slice(0, 200)}.tmp-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`,
  );
}

/** Rename the written `tmp` to `target`, with the mode `target` had; `tmp` is removed on failure. */
async function moveIntoPlace(
  tmp: string,
  target: string,
  info: Deno.FileInfo | undefined,
  pinned: boolean,
): Promise<void> {
  try {
    if (info?.mode != null && Deno.build.os !== "windows") {
      await Deno.chmod(tmp, info.mode & 0o7777);
    }
    if (pinned) await renameInDir(tmp, target, { replace: true });
    else await Deno.rename(tmp, target);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}

/** Write `text` to `path` whole or not at all (see the module doc). */
export async function writeOutputFile(path: string, text: string): Promise<void> {
  const { target, pinned } = await placeOf(path);
  const info = await infoOf(target, pinned);
  if (info !== undefined && !info.isFile) {
    if (pinned) throw notRegular(path);
    return await Deno.writeTextFile(target, text);
  }
  const tmp = tmpBeside(target);
  try {
    await Deno.writeTextFile(tmp, text, { createNew: true });
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
  await moveIntoPlace(tmp, target, info, pinned);
}

function notRegular(path: string): PenguinError {
  return new PenguinError(
    "usage",
    `Cannot write "${path}": it is not a regular file, and penguin writes only a regular file ` +
      `in the current directory. Name another path`,
  );
}

/** A file being written piece by piece by {@linkcode openOutputFile}. */
export interface OutputFile {
  /** Append `text`. */
  write(text: string): Promise<void>;
  /** Finish: the file takes its place. */
  commit(): Promise<void>;
  /** Give up: nothing is left behind (an existing file stays as it was). */
  abort(): Promise<void>;
}

/**
 * Open `path` for writing in pieces, with the guarantees of
 * {@linkcode writeOutputFile}: a regular file (or a new one) is written
 * beside its real path and renamed into place on `commit`; a device or FIFO
 * is written directly.
 */
export async function openOutputFile(path: string): Promise<OutputFile> {
  const { target, pinned } = await placeOf(path);
  const info = await infoOf(target, pinned);
  const direct = info !== undefined && !info.isFile;
  if (direct && pinned) throw notRegular(path);
  const tmp = direct ? target : tmpBeside(target);
  const file = await Deno.open(tmp, direct ? { write: true } : { write: true, createNew: true });
  const enc = new TextEncoder();
  let closed = false;
  const close = () => {
    if (!closed) file.close();
    closed = true;
  };
  return {
    async write(text: string) {
      const bytes = enc.encode(text);
      let off = 0;
      while (off < bytes.length) off += await file.write(bytes.subarray(off));
    },
    async commit() {
      close();
      if (direct) return;
      await moveIntoPlace(tmp, target, info, pinned);
    },
    async abort() {
      close();
      if (!direct) await Deno.remove(tmp).catch(() => {});
    },
  };
}
