/**
 * Skills: `agent_state/skills/<name>/SKILL.md` plus any auxiliary files.
 *
 * `SKILL.md` may start with a frontmatter block between `---` lines; its
 * `key: value` lines are read one by one (a BOM and CRLF line ends are
 * fine): `name`, `description`, `short_description`, `version` (a natural
 * number, else 1) and `updated`. The directory name is the skill's name;
 * a missing or broken frontmatter leaves the description empty. Listing reads
 * only the first 64 KiB of each SKILL.md, and an install refuses a SKILL.md
 * over 1 MiB.
 *
 * Installing takes a directory or a `.tar.gz` archive holding `SKILL.md`
 * (at its top, or in its one top-level directory). Only regular files and
 * directories are taken: a symlink, a device, an absolute path, a path with
 * `..` or a backslash refuses the whole install, so a skill can never bring
 * in a file from outside itself. A skill holds no git repository
 * (lib/state/_git_shapes.ts): an archive holding a `.git` entry, or a
 * directory laid out as a bare repository, is refused; from a directory (a
 * `git clone` of the skill, say) they are left out and named in
 * {@linkcode InstalledSkill.leftOut}. The skill directory is replaced whole,
 * atomically (the new tree is built beside it, then renamed into place).
 *
 * @module
 */
import { basename, dirname, join, relative } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import { mkdirPrivate, openRegularFile, readOpenUpTo } from "./_fs.ts";
import { bareRepoDirs, dotGitIn, GIT_REPO_REASON } from "./_git_shapes.ts";
import type { TarHeader } from "./_tar.ts";
import type { Placement } from "./_unpack.ts";

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

/**
 * The `key: value` lines of a leading `---` block (quotes around a value
 * removed). Only the block itself is looked at: line ends are normalised in
 * it, never over the whole text (a SKILL.md of millions of `\r\n` lines cost
 * ~1.5 GB that way).
 */
export function skillFrontmatter(text: string): Record<string, string> {
  const start = text.startsWith("\uFEFF") ? 1 : 0;
  const open = text.startsWith("---\r\n", start) ? 5 : text.startsWith("---\n", start) ? 4 : 0;
  if (open === 0) return {};
  const end = text.indexOf("\n---", start + 3);
  if (end < 0) return {};
  const out: Record<string, string> = {};
  for (const raw of text.slice(start + open, end).split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
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

/** Bytes of a SKILL.md read for its frontmatter (by every run, `chat` and `skills list`). */
export const SKILL_HEAD_BYTES = 64 * 1024;

/**
 * The largest SKILL.md `skills install` takes, as `agent import` does
 * (`TEXT_BYTES` in ./snapshot.ts): the model reads it whole when it uses the skill.
 */
export const SKILL_MD_BYTES = 1024 * 1024;

/** The start of the file at `path` as text (enough for the frontmatter). */
async function headText(path: string): Promise<string> {
  using f = await Deno.open(path, { read: true });
  const buf = new Uint8Array(SKILL_HEAD_BYTES);
  let got = 0;
  while (got < buf.length) {
    const n = await f.read(buf.subarray(got));
    if (n === null) break;
    got += n;
  }
  return new TextDecoder().decode(buf.subarray(0, got));
}

async function headIfExists(path: string): Promise<string | undefined> {
  try {
    return await headText(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    throw err;
  }
}

/**
 * The installed skills of `skillsDir`, sorted by name (a missing directory
 * has none). Only the first {@linkcode SKILL_HEAD_BYTES} of each SKILL.md
 * are read: a frontmatter past them is not seen.
 */
export async function listSkills(skillsDir: string): Promise<SkillInfo[]> {
  const out: SkillInfo[] = [];
  try {
    for await (const e of Deno.readDir(skillsDir)) {
      if (!e.isDirectory || !SKILL_NAME.test(e.name)) continue;
      const dir = join(skillsDir, e.name);
      out.push(infoOf(e.name, dir, await headIfExists(join(dir, "SKILL.md"))));
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
  // What file systems take (a longer path fails to be written); the path is shown cut.
  const bytes = (s: string) => new TextEncoder().encode(s).length;
  if (parts.some((p) => bytes(p) > 255) || bytes(path) > 1024) {
    throw refuse(
      source,
      `${
        JSON.stringify(path.slice(0, 120))
      }… is too long (names up to 255 bytes, paths up to 1024)`,
    );
  }
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

async function filesOfDir(
  source: string,
): Promise<{ files: SkillFile[]; leftOut: string[] }> {
  let out: SkillFile[] = [];
  const dirs: string[] = [];
  const leftOut: string[] = [];
  const count = budget(source);
  const tooLarge = () =>
    refuse(source, `more than ${SKILL_LIMITS.bytes / 1024 / 1024} MiB once unpacked`);
  let read = 0;
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const abs = join(dir, e.name);
      const rel = relative(source, abs);
      if (dotGitIn(e.name) !== undefined) {
        leftOut.push(rel); // a clone's own: never read
        continue;
      }
      if (e.isSymlink) throw refuse(source, `${rel} is a symbolic link (skills hold plain files)`);
      if (e.isDirectory) {
        dirs.push(rel);
        await walk(abs);
      } else if (e.isFile) {
        count(0); // one file more
        // Opened only as a regular file (a FIFO swapped in is refused unopened), and read with
        // what is left of the whole budget: a file that grows after it was looked at is refused
        // by what is read, not by the size it had then (attack round 16 bounded S1).
        using file = await openRegularFile(abs, { label: "Cannot install the skill from" });
        const data = await readOpenUpTo(file, SKILL_LIMITS.bytes - read);
        if (data === undefined) throw tooLarge();
        read += data.length;
        out.push({ path: safePath(source, rel), data });
      } else throw refuse(source, `${rel} is not a regular file`);
    }
  };
  await walk(source);
  for (const repo of bareRepoDirs([...dirs, ...out.map((f) => f.path)])) {
    if (repo === "") throw refuse(source, `it is laid out as ${GIT_REPO_REASON}`);
    out = out.filter((f) => !f.path.startsWith(`${repo}/`));
    leftOut.push(repo);
  }
  return { files: out, leftOut };
}

/**
 * Unpack the archive `source` into `stage` as it is decompressed (memory
 * holds one decompressed piece), checking every entry before its bytes are
 * written; returns the files' paths.
 */
async function unpackArchive(source: string, stage: string): Promise<string[]> {
  const count = budget(source);
  const seen = new Set<string>();
  const paths: string[] = [];
  const dirs: string[] = [];
  const noRepo = (path: string) => {
    const git = dotGitIn(path);
    if (git !== undefined) {
      throw refuse(source, `${JSON.stringify(git)} is ${GIT_REPO_REASON}; a skill holds none`);
    }
  };
  const place = (e: TarHeader): Placement => {
    if (e.kind === "directory") {
      // Checked like files (a directory entry alone writes nothing); "./" is the top.
      if (e.path.split("/").some((p) => p !== "" && p !== ".")) {
        dirs.push(safePath(source, e.path));
        noRepo(dirs.at(-1)!);
      }
      return undefined;
    }
    if (e.kind !== "file") {
      throw refuse(source, `${JSON.stringify(e.path)} is a ${e.kind} (skills hold plain files)`);
    }
    count(e.size); // refused from its header, before its bytes
    const path = safePath(source, e.path);
    noRepo(path);
    if (seen.has(path)) throw refuse(source, `${JSON.stringify(e.path)} appears twice`);
    seen.add(path);
    paths.push(path);
    return { file: join(stage, ...path.split("/")), mode: 0o644 };
  };
  // The tar and gzip readers load with the first archive installed, not with every session.
  const { ArchiveFormatError, unpackTarGz } = await import("./_unpack.ts");
  let fits;
  try {
    // Tar headers add 1 MiB on top of the files' bytes.
    fits = await unpackTarGz(
      source,
      SKILL_LIMITS.bytes + 1024 * 1024,
      place,
      (path, why) =>
        refuse(source, `cannot unpack ${JSON.stringify(relative(stage, path))}: ${why}`),
    );
  } catch (err) {
    if (err instanceof ArchiveFormatError) {
      throw refuse(
        source,
        err.layer === "gzip"
          ? `not a gzip file (${err.message})`
          : `not a tar archive (${err.message})`,
      );
    }
    throw err;
  }
  if (!fits) {
    throw refuse(source, `more than ${SKILL_LIMITS.bytes / 1024 / 1024} MiB once unpacked`);
  }
  const [repo] = bareRepoDirs([...dirs, ...paths]);
  if (repo !== undefined) {
    throw refuse(
      source,
      `${
        JSON.stringify(repo === "" ? "./" : `${repo}/`)
      } holds HEAD with objects or commondir, which makes it ${GIT_REPO_REASON}; a skill holds none`,
    );
  }
  return paths;
}

/** The skill's root among `paths`: the top, or the one top directory holding SKILL.md. */
function rooted(source: string, paths: string[]): { top?: string } {
  if (paths.includes("SKILL.md")) return {};
  const tops = new Set(paths.map((p) => p.split("/")[0]!));
  const [top] = tops;
  if (tops.size === 1 && top && paths.includes(`${top}/SKILL.md`)) return { top };
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
  /** What of a source directory was left out (paths inside it), and why: its git repositories. */
  leftOut: { path: string; reason: string }[];
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
  /** The name when neither `name` nor the frontmatter gives one (default: `source`'s). */
  sourceName?: string,
): Promise<InstalledSkill> {
  // Long because: one install, in order: stat, unpack or copy (leaving out repositories), the
  // size checks, the name and frontmatter checks, then the replace; each step may refuse.
  let stat: Deno.FileInfo;
  try {
    stat = await Deno.stat(source);
  } catch {
    throw new PenguinError(
      "not_found",
      `Cannot install the skill from "${source}": no such file or directory`,
    );
  }
  if (!stat.isDirectory) {
    // An archive: only a regular file (a FIFO would block the first read, a device such as
    // /dev/zero read without end).
    const label = "Cannot install the skill from";
    (await openRegularFile(source, { label, kind: "usage" })).close();
  }
  await mkdirPrivate(skillsDir);
  // Unpacked or copied here first; what is checked afterwards (the name) may still refuse it.
  // Beside the skills directory, not in it: sessions' commands see that one (read-only), and
  // what a copy read by mistake would lie there before any check (attack round 30 p01).
  const stage = join(dirname(skillsDir), `.skill-install-${crypto.randomUUID().slice(0, 8)}`);
  const old = join(dirname(skillsDir), `.skill-old-${crypto.randomUUID().slice(0, 8)}`);
  let replaced = false;
  try {
    await Deno.mkdir(stage, { mode: 0o700 });
    let paths: string[];
    let leftOut: string[] = [];
    if (stat.isDirectory) {
      const { files, leftOut: repos } = await filesOfDir(source);
      leftOut = repos;
      for (const f of files) {
        const path = join(stage, ...f.path.split("/"));
        await Deno.mkdir(join(path, ".."), { recursive: true });
        await Deno.writeFile(path, f.data, { createNew: true, mode: 0o644 });
      }
      paths = files.map((f) => f.path);
    } else paths = await unpackArchive(source, stage);
    const { top } = rooted(source, paths);
    const root = top === undefined ? stage : join(stage, top);
    const size = (await Deno.stat(join(root, "SKILL.md"))).size;
    if (size > SKILL_MD_BYTES) {
      throw refuse(
        source,
        `its SKILL.md is ${size} bytes, over the ${
          SKILL_MD_BYTES / 1024 / 1024
        } MiB a SKILL.md may hold (the model reads it whole)`,
      );
    }
    const text = await headText(join(root, "SKILL.md"));
    const fm = skillFrontmatter(text);
    const fallback = top ?? basename(sourceName ?? source).replace(/\.(tar\.gz|tgz)$/, "");
    const chosen = name ?? (SKILL_NAME.test(fm.name ?? "") ? fm.name! : fallback);
    if (!SKILL_NAME.test(chosen)) {
      throw refuse(
        source,
        `${
          JSON.stringify(chosen)
        } is not a valid skill name (letters, digits, _ and -); pass --name`,
      );
    }
    const target = join(skillsDir, chosen);
    try {
      await Deno.rename(target, old);
      replaced = true;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    try {
      await Deno.rename(root, target);
    } catch (err) {
      if (replaced) await Deno.rename(old, target).catch(() => {});
      replaced = false;
      throw err;
    }
    if (Deno.build.os !== "windows") await Deno.chmod(target, 0o755);
    await Deno.remove(stage, { recursive: true }).catch(() => {});
    if (replaced) await Deno.remove(old, { recursive: true }).catch(() => {});
    return {
      skill: infoOf(chosen, target, text),
      files: paths.length,
      replaced,
      leftOut: leftOut.map((path) => ({ path, reason: GIT_REPO_REASON })),
    };
  } catch (err) {
    await Deno.remove(stage, { recursive: true }).catch(() => {});
    throw err;
  }
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
