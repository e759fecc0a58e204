/**
 * Skills: `agent_state/skills/<name>/SKILL.md` plus any auxiliary files.
 *
 * `SKILL.md` may start with a frontmatter block between `---` lines; its
 * `key: value` lines are read one by one (a BOM and CRLF line ends are
 * fine): `name`, `description`, `short_description`, `version` (a natural
 * number, else 1) and `updated`. The directory name is the skill's name;
 * a missing or broken frontmatter leaves the description empty.
 *
 * Installing takes a directory or a `.tar.gz` archive holding `SKILL.md`
 * (at its top, or in its one top-level directory). Only regular files and
 * directories are taken: a symlink, a device, an absolute path, a path with
 * `..` or a backslash refuses the whole install, so a skill can never bring
 * in a file from outside itself. The skill directory is replaced whole,
 * atomically (the new tree is built beside it, then renamed into place).
 *
 * @module
 */
import { basename, join, relative } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import { mkdirPrivate, readUpTo } from "./_fs.ts";
import { gunzipFile } from "./_gzip.ts";
import { readTar } from "./_tar.ts";

/** What a skill name must look like (it is a directory name and a word in prompts). */
export const SKILL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The largest install accepted: files, and bytes once unpacked. */
export const SKILL_LIMITS = { files: 2000, bytes: 64 * 1024 * 1024 } as const;

/** One installed skill. */
export interface SkillInfo {
  /** Directory name. */
  name: string;
  /** Frontmatter `description` ("" when absent). */
  description: string;
  /** Frontmatter `short_description`, when given. */
  shortDescription?: string;
  /** Frontmatter `version` (natural number, default 1). */
  version: number;
  /** Frontmatter `updated` ("" when absent). */
  updated: string;
  /** Absolute path of the skill directory. */
  dir: string;
}

/** The `key: value` lines of a leading `---` block (quotes around a value removed). */
export function skillFrontmatter(text: string): Record<string, string> {
  const body = text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  if (!body.startsWith("---\n")) return {};
  const end = body.indexOf("\n---", 3);
  if (end < 0) return {};
  const out: Record<string, string> = {};
  for (const line of body.slice(4, end).split("\n")) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$/.exec(line);
    if (m && !(m[1]! in out)) out[m[1]!] = m[2]!.trim().replace(/^(["'])(.*)\1$/, "$2");
  }
  return out;
}

function infoOf(name: string, dir: string, text: string | undefined): SkillInfo {
  const fm = text === undefined ? {} : skillFrontmatter(text);
  const version = /^\d+$/.test(fm.version ?? "") && Number(fm.version) > 0 ? Number(fm.version) : 1;
  return {
    name,
    description: fm.description ?? "",
    ...(fm.short_description ? { shortDescription: fm.short_description } : {}),
    version,
    updated: fm.updated ?? "",
    dir,
  };
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    throw err;
  }
}

/** The installed skills of `skillsDir`, sorted by name (a missing directory has none). */
export async function listSkills(skillsDir: string): Promise<SkillInfo[]> {
  const out: SkillInfo[] = [];
  try {
    for await (const e of Deno.readDir(skillsDir)) {
      if (!e.isDirectory || !SKILL_NAME.test(e.name)) continue;
      const dir = join(skillsDir, e.name);
      out.push(infoOf(e.name, dir, await readIfExists(join(dir, "SKILL.md"))));
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** One file of a skill being installed: its path inside the skill, and its bytes. */
interface SkillFile {
  path: string;
  data: Uint8Array;
}

function refuse(source: string, why: string): PenguinError {
  return new PenguinError("usage", `Cannot install the skill from "${source}": ${why}`);
}

/** Check one relative path of the source; returns it in `/` form. */
function safePath(source: string, path: string): string {
  if (path.includes("\\")) throw refuse(source, `${JSON.stringify(path)} contains a backslash`);
  if (path.startsWith("/")) throw refuse(source, `${JSON.stringify(path)} is an absolute path`);
  const parts = path.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) throw refuse(source, `${JSON.stringify(path)} leaves the skill (..)`);
  if (parts.length === 0) throw refuse(source, `an entry has an empty path`);
  return parts.join("/");
}

function budget(source: string) {
  let files = 0;
  let bytes = 0;
  return (size: number) => {
    files++;
    bytes += size;
    if (files > SKILL_LIMITS.files) {
      throw refuse(source, `more than ${SKILL_LIMITS.files} files`);
    }
    if (bytes > SKILL_LIMITS.bytes) {
      throw refuse(source, `more than ${SKILL_LIMITS.bytes / 1024 / 1024} MiB once unpacked`);
    }
  };
}

async function filesOfDir(source: string): Promise<SkillFile[]> {
  const out: SkillFile[] = [];
  const count = budget(source);
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const abs = join(dir, e.name);
      const rel = relative(source, abs);
      if (e.isSymlink) throw refuse(source, `${rel} is a symbolic link (skills hold plain files)`);
      if (e.isDirectory) await walk(abs);
      else if (e.isFile) {
        count((await Deno.stat(abs)).size); // refused from its size before it is read
        const data = await readUpTo(abs, SKILL_LIMITS.bytes);
        if (data === undefined) {
          throw refuse(source, `more than ${SKILL_LIMITS.bytes / 1024 / 1024} MiB once unpacked`);
        }
        out.push({ path: safePath(source, rel), data });
      } else throw refuse(source, `${rel} is not a regular file`);
    }
  };
  await walk(source);
  return out;
}

/** `source` unpacked, refusing more than the size limit (tar headers get 1 MiB on top). */
async function unpackGzip(source: string): Promise<Uint8Array> {
  let tar: Uint8Array | undefined;
  try {
    tar = await gunzipFile(source, SKILL_LIMITS.bytes + 1024 * 1024);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.PermissionDenied) {
      throw err;
    }
    throw refuse(source, `not a gzip file (${err instanceof Error ? err.message : String(err)})`);
  }
  if (tar === undefined) {
    throw refuse(source, `more than ${SKILL_LIMITS.bytes / 1024 / 1024} MiB once unpacked`);
  }
  return tar;
}

async function filesOfArchive(source: string): Promise<SkillFile[]> {
  const tar = await unpackGzip(source);
  let entries;
  try {
    entries = readTar(tar);
  } catch (err) {
    throw refuse(source, `not a tar archive (${err instanceof Error ? err.message : String(err)})`);
  }
  const count = budget(source);
  const out: SkillFile[] = [];
  for (const e of entries) {
    if (e.kind === "directory") {
      // Checked like files (a directory entry alone writes nothing); "./" is the top.
      if (e.path.split("/").some((p) => p !== "" && p !== ".")) safePath(source, e.path);
      continue;
    }
    if (e.kind !== "file") {
      throw refuse(source, `${JSON.stringify(e.path)} is a ${e.kind} (skills hold plain files)`);
    }
    count(e.data.length);
    out.push({ path: safePath(source, e.path), data: e.data });
  }
  return out;
}

/** Files relative to the skill root: strip one common top directory when SKILL.md is inside it. */
function rooted(source: string, files: SkillFile[]): { files: SkillFile[]; top?: string } {
  if (files.some((f) => f.path === "SKILL.md")) return { files };
  const tops = new Set(files.map((f) => f.path.split("/")[0]!));
  const [top] = tops;
  if (tops.size === 1 && top && files.some((f) => f.path === `${top}/SKILL.md`)) {
    return { files: files.map((f) => ({ ...f, path: f.path.slice(top.length + 1) })), top };
  }
  throw refuse(source, "no SKILL.md at its top (or in its one top-level directory)");
}

/** The outcome of {@linkcode installSkill}. */
export interface InstalledSkill {
  /** The installed skill. */
  skill: SkillInfo;
  /** Number of files written. */
  files: number;
  /** An earlier skill of that name was replaced. */
  replaced: boolean;
}

/**
 * Install the skill at `source` (a directory or a `.tar.gz`/`.tgz` file)
 * into `skillsDir`, under `name` if given, else the frontmatter `name`, else
 * the directory (or archive) name.
 */
export async function installSkill(
  skillsDir: string,
  source: string,
  name?: string,
): Promise<InstalledSkill> {
  let stat: Deno.FileInfo;
  try {
    stat = await Deno.stat(source);
  } catch {
    throw new PenguinError(
      "not_found",
      `Cannot install the skill from "${source}": no such file or directory`,
    );
  }
  const raw = stat.isDirectory ? await filesOfDir(source) : await filesOfArchive(source);
  const { files, top } = rooted(source, raw);
  const fm = skillFrontmatter(
    new TextDecoder().decode(files.find((f) => f.path === "SKILL.md")!.data),
  );
  const fallback = top ?? basename(source).replace(/\.(tar\.gz|tgz)$/, "");
  const chosen = name ?? (SKILL_NAME.test(fm.name ?? "") ? fm.name! : fallback);
  if (!SKILL_NAME.test(chosen)) {
    throw refuse(
      source,
      `${JSON.stringify(chosen)} is not a valid skill name (letters, digits, _ and -); pass --name`,
    );
  }
  await mkdirPrivate(skillsDir);
  const target = join(skillsDir, chosen);
  const stage = join(skillsDir, `.install-${chosen}-${crypto.randomUUID().slice(0, 8)}`);
  const old = join(skillsDir, `.old-${chosen}-${crypto.randomUUID().slice(0, 8)}`);
  let replaced = false;
  try {
    for (const f of files) {
      const path = join(stage, ...f.path.split("/"));
      await Deno.mkdir(join(path, ".."), { recursive: true });
      await Deno.writeFile(path, f.data, { createNew: true, mode: 0o644 });
    }
    try {
      await Deno.rename(target, old);
      replaced = true;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    await Deno.rename(stage, target);
  } catch (err) {
    await Deno.remove(stage, { recursive: true }).catch(() => {});
    if (replaced) await Deno.rename(old, target).catch(() => {});
    throw err;
  }
  if (replaced) await Deno.remove(old, { recursive: true }).catch(() => {});
  const text = new TextDecoder().decode(files.find((f) => f.path === "SKILL.md")!.data);
  return { skill: infoOf(chosen, target, text), files: files.length, replaced };
}

/** Remove the skill `name`; false when there is none. */
export async function removeSkill(skillsDir: string, name: string): Promise<boolean> {
  if (!SKILL_NAME.test(name)) return false;
  try {
    const info = await Deno.lstat(join(skillsDir, name));
    if (!info.isDirectory) return false;
  } catch {
    return false;
  }
  await Deno.remove(join(skillsDir, name), { recursive: true });
  return true;
}
