/**
 * Writing a file the user named with `-o`: a regular file (or a new one) is
 * written beside its real path and renamed into place, so a write that
 * fails (a full disk) leaves no partial file and an existing file as it
 * was; a device or FIFO (`-o /dev/stdout`) is written directly.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";

async function realOrSelf(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return path;
    throw err;
  }
}

/** Write `text` to `path` whole or not at all (see the module doc). */
export async function writeOutputFile(path: string, text: string): Promise<void> {
  const target = await realOrSelf(path);
  const info = await Deno.stat(target).catch(() => undefined);
  if (info !== undefined && !info.isFile) return await Deno.writeTextFile(target, text);
  const tmp = join(
    dirname(target),
    `.${basename(target).slice(0, 200)}.tmp-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`,
  );
  try {
    await Deno.writeTextFile(tmp, text, { createNew: true });
    if (info?.mode != null && Deno.build.os !== "windows") {
      await Deno.chmod(tmp, info.mode & 0o7777);
    }
    await Deno.rename(tmp, target);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}
