/**
 * The agent's memory on disk: `agent_state/memory/user/` (user scope) and
 * `agent_state/memory/<key>/` (one per persistent workspace, with a
 * `.workspace` marker holding the workspace path). Each scope holds an index,
 * `MEMORY.md`, and flat topic files with a `name`, `description`,
 * `updated_at` frontmatter.
 *
 * The model writes these directories (they are the only writable part of
 * `agent_state` in its sandbox), so penguin treats their contents as hostile
 * when it reads or writes them itself (`untrusted_file.ts`): a symbolic
 * link, or a file swapped in while penguin reads, is refused, and penguin's
 * own writes there never follow a link.
 *
 * @module
 */
import { basename, join } from "node:path";
import type { AgentPaths } from "./paths.ts";
import { skillFrontmatter } from "./skills.ts";
import {
  isPlainName,
  readUntrustedFile,
  replaceUntrustedFile,
  UNTRUSTED_READ_LIMIT,
  type UntrustedRead,
} from "./untrusted_file.ts";
import { hexOf } from "../protocol/hex.ts";

/** The index file of a memory scope. */
export const MEMORY_INDEX = "MEMORY.md";

/** The marker file of a workspace scope (its workspace path and a newline). */
export const WORKSPACE_MARKER = ".workspace";

/** The most bytes penguin reads of one memory file. */
export const MEMORY_READ_LIMIT: number = UNTRUSTED_READ_LIMIT;

/** One memory scope directory. */
export interface MemoryScope {
  /** `user`, or the workspace key. */
  key: string;
  /** Absolute directory. */
  dir: string;
  /** The workspace it belongs to (from the marker); absent for the user scope. */
  workspace?: string;
}

/** A topic file's frontmatter. */
export interface MemoryTopic {
  /** File name inside the scope. */
  file: string;
  /** Frontmatter `name` ("" when absent). */
  name: string;
  /** Frontmatter `description` ("" when absent). */
  description: string;
  /** Frontmatter `updated_at` ("" when absent). */
  updatedAt: string;
}

/** The outcome of {@linkcode readMemoryFile}. */
export type MemoryRead = UntrustedRead;

/** The workspace memory key: sanitized basename (≤ 40, lower-case, or `workspace`) + first 8 hex of sha256(path). */
export async function workspaceMemoryKey(realWorkspace: string): Promise<string> {
  const base = basename(realWorkspace).replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "")
    .slice(0, 40).replace(/-+$/, "").toLowerCase() || "workspace";
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(realWorkspace));
  const hex = hexOf(digest);
  return `${base}-${hex.slice(0, 8)}`;
}

/** The memory directory of a (real) workspace path. */
export async function workspaceMemoryDir(
  paths: AgentPaths,
  realWorkspace: string,
): Promise<string> {
  return join(paths.memory, await workspaceMemoryKey(realWorkspace));
}

function isMissing(err: unknown): boolean {
  return err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory;
}

/**
 * Read `name` (a plain file name) of the memory directory `dir` the way
 * penguin reads everything the model can write: a symbolic link, a
 * directory, a FIFO or a file swapped in while it is read is refused (see
 * `untrusted_file.ts`). Reads at most {@linkcode MEMORY_READ_LIMIT} bytes.
 */
export function readMemoryFile(dir: string, name: string): Promise<MemoryRead> {
  return readUntrustedFile(dir, name, MEMORY_READ_LIMIT);
}

/** Make `dir` (0700) with an empty index unless one exists (never following a link there). */
async function ensureScope(dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  try {
    await Deno.writeTextFile(join(dir, MEMORY_INDEX), "", { createNew: true, mode: 0o600 });
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
  }
}

/** The memory directories of one session. */
export interface SessionMemory {
  /** The user scope, when it could be created. */
  user?: string;
  /** The workspace scope (persistent workspaces only), when it could be created. */
  workspace?: string;
}

/**
 * Create the memory directories of a session (user scope always, the
 * workspace scope for a persistent workspace) with empty `MEMORY.md` files
 * and the `.workspace` marker. A scope that cannot be created is left out.
 */
export async function prepareMemory(
  paths: AgentPaths,
  realWorkspace: string,
  temporary: boolean,
): Promise<SessionMemory> {
  const out: SessionMemory = {};
  try {
    await ensureScope(paths.userMemory);
    out.user = paths.userMemory;
  } catch {
    // no user memory scope; the prompt shows an empty index
  }
  if (temporary) return out;
  try {
    const dir = await workspaceMemoryDir(paths, realWorkspace);
    await ensureScope(dir);
    const marker = await readMemoryFile(dir, WORKSPACE_MARKER);
    if (!(marker.ok && marker.text === `${realWorkspace}\n`)) {
      await replaceUntrustedFile(dir, WORKSPACE_MARKER, `${realWorkspace}\n`);
    }
    out.workspace = dir;
  } catch {
    // no workspace memory scope
  }
  return out;
}

/** Every memory scope of the agent: the user scope first, then workspace scopes by key. */
export async function listMemoryScopes(paths: AgentPaths): Promise<MemoryScope[]> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(paths.memory)) {
      if (e.isDirectory && isPlainName(e.name)) names.push(e.name);
    }
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
  names.sort();
  const scopes: MemoryScope[] = [];
  if (names.includes("user")) scopes.push({ key: "user", dir: paths.userMemory });
  for (const key of names) {
    if (key === "user") continue;
    const dir = join(paths.memory, key);
    const marker = await readMemoryFile(dir, WORKSPACE_MARKER);
    const workspace = marker.ok ? marker.text.split("\n")[0]!.trim() : "";
    scopes.push({ key, dir, ...(workspace ? { workspace } : {}) });
  }
  return scopes;
}

/** The topic files of a scope (regular `*.md` files other than the index), sorted by name. */
export async function listMemoryTopics(dir: string): Promise<MemoryTopic[]> {
  const files: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile && e.name.endsWith(".md") && e.name !== MEMORY_INDEX) files.push(e.name);
    }
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
  files.sort();
  const out: MemoryTopic[] = [];
  for (const file of files) {
    const r = await readMemoryFile(dir, file);
    const fm = r.ok ? skillFrontmatter(r.text) : {};
    out.push({
      file,
      name: fm.name ?? "",
      description: fm.description ?? "",
      updatedAt: fm.updated_at ?? "",
    });
  }
  return out;
}

/**
 * Empty a scope: every entry but the `.workspace` marker is removed (links
 * themselves, never what they point to), and an empty index is created.
 * Returns how many entries were removed.
 */
export async function clearMemoryScope(dir: string): Promise<number> {
  let removed = 0;
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) names.push(e.name);
  } catch (err) {
    if (isMissing(err)) return 0;
    throw err;
  }
  for (const name of names) {
    if (name === WORKSPACE_MARKER) continue;
    await Deno.remove(join(dir, name), { recursive: true });
    if (name !== MEMORY_INDEX) removed++;
  }
  await ensureScope(dir);
  return removed;
}
