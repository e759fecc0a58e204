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

/**
 * Refuse `path` when it goes through a symbolic link below the current
 * directory (the workspace, typically, where a command may have made one):
 * `-o report.md` linked to `~/.ssh/authorized_keys`, or `-o out/r.md` with
 * `out` linked to the home directory, wrote there (attack round 19 imports
 * B3). Links above the current directory are the user's own (`/dev/stdout`
 * from a project directory is written).
 */
function refuseLinkOnTheWay(path: string): void {
  let cwd: string;
  try {
    cwd = Deno.cwd();
  } catch {
    return;
  }
  if (cwd === "/") return;
  const rel = relative(cwd, resolve(path));
  if (rel === "" || rel.startsWith("..") || rel.startsWith(sep)) return;
  let at = cwd;
  for (const part of rel.split(sep)) {
    at = join(at, part);
    let link = false;
    try {
      link = Deno.lstatSync(at).isSymlink;
    } catch {
      return; // missing from here on: nothing to follow
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
async function moveIntoPlace(tmp: string, target: string, info?: Deno.FileInfo): Promise<void> {
  try {
    if (info?.mode != null && Deno.build.os !== "windows") {
      await Deno.chmod(tmp, info.mode & 0o7777);
    }
    await Deno.rename(tmp, target);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}

/** Write `text` to `path` whole or not at all (see the module doc). */
export async function writeOutputFile(path: string, text: string): Promise<void> {
  refuseLinkOnTheWay(path);
  const target = await realOrSelf(path);
  const info = await Deno.stat(target).catch(() => undefined);
  if (info !== undefined && !info.isFile) return await Deno.writeTextFile(target, text);
  const tmp = tmpBeside(target);
  try {
    await Deno.writeTextFile(tmp, text, { createNew: true });
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
  await moveIntoPlace(tmp, target, info);
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
  refuseLinkOnTheWay(path);
  const target = await realOrSelf(path);
  const info = await Deno.stat(target).catch(() => undefined);
  const direct = info !== undefined && !info.isFile;
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
      await moveIntoPlace(tmp, target, info);
    },
    async abort() {
      close();
      if (!direct) await Deno.remove(tmp).catch(() => {});
    },
  };
}
