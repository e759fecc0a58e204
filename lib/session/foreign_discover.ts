/**
 * Finding the sessions another harness recorded, where that harness keeps
 * them: Codex under `$CODEX_HOME/sessions` (`~/.codex`) as
 * `YYYY/MM/DD/rollout-*.jsonl`; Claude Code under
 * `$CLAUDE_CONFIG_DIR/projects` (`~/.claude`), one directory per working
 * directory holding `<session id>.jsonl` (its subagent transcripts, in
 * subdirectories, go with their parent); pi under
 * `$PI_CODING_AGENT_DIR/sessions` (`~/.pi/agent`), one directory per
 * working directory. Nothing here writes.
 *
 * @module
 */
import { join } from "node:path";
import type { Harness } from "./foreign_session.ts";

/** The directory `harness` keeps its sessions in, from its environment variable or the home directory. */
export function harnessSessionDir(
  harness: Harness,
  env: (name: string) => string | undefined,
): string {
  const home = env("HOME") ?? env("USERPROFILE") ?? "/";
  switch (harness) {
    case "codex":
      return join(env("CODEX_HOME") || join(home, ".codex"), "sessions");
    case "claude":
      return join(env("CLAUDE_CONFIG_DIR") || join(home, ".claude"), "projects");
    case "pi":
      return join(env("PI_CODING_AGENT_DIR") || join(home, ".pi", "agent"), "sessions");
  }
}

/** One session file found, with the time it was last written (its last activity). */
export interface FoundSession {
  /** The session file. */
  file: string;
  /** Its modification time (epoch ms). */
  mtime: number;
}

/** The session files under `dir` (the harness's session directory), newest first; none when it does not exist. */
export async function findSessionFiles(harness: Harness, dir: string): Promise<FoundSession[]> {
  const out: FoundSession[] = [];
  // Codex nests by date (three levels); Claude Code and pi keep one level of per-directory folders.
  const depth = harness === "codex" ? 4 : 2;
  await walk(dir, depth, (name, level) => {
    if (!name.endsWith(".jsonl")) return false;
    if (harness === "codex") return name.startsWith("rollout-");
    return level === 2;
  }, out);
  return out.sort((a, b) => b.mtime - a.mtime || (a.file < b.file ? -1 : 1));
}

async function walk(
  dir: string,
  depth: number,
  want: (name: string, level: number) => boolean,
  out: FoundSession[],
  level = 1,
): Promise<void> {
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(dir));
  } catch {
    return;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    // Links are not followed: a session directory holds plain files and folders.
    if (e.isDirectory && level < depth) await walk(path, depth, want, out, level + 1);
    else if (e.isFile && want(e.name, level)) {
      const info = await Deno.lstat(path).catch(() => null);
      if (info?.isFile) out.push({ file: path, mtime: info.mtime?.getTime() ?? 0 });
    }
  }
}
