/**
 * What an inspect command works on. A target is a trace file, a directory
 * (searched recursively), or a session looked up in the data root
 * (`<root>/*\/agents/*\/traces/*\/<id>_NNN.jsonl`): an id, a unique part of
 * one, or `latest`. Files are grouped into
 * sessions by their name (`<session>_<NNN>.jsonl`), or by the session_meta's
 * `session_id` for other names. Paths need no data root; only a session id
 * does. Nothing here writes.
 *
 * @module
 */
import { resolve } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import { resolveDataRoot } from "../state/root.ts";
import { walkTraceFiles } from "../trace/layout.ts";
import { openTrace } from "../trace/lines.ts";
import { groupSessions, type SessionFiles } from "../trace/session_files.ts";
import { locateInRoot } from "../session/locate.ts";

export type { SessionFiles, TraceFile } from "../trace/session_files.ts";

/** Options of {@linkcode resolveTargets}. */
export interface TargetOptions {
  /** The `--root` flag; only used for session ids. */
  root?: string | undefined;
  /** Environment lookup for the data root; default `Deno.env.get`. */
  env?: (name: string) => string | undefined;
}

const SESSION_ARG_RE = /^[A-Za-z0-9_-]+$/;

async function statOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.stat(path);
  } catch {
    return null;
  }
}

/**
 * The files of session `target` in the data root: a session id, a unique
 * part of one, or `latest`, resolved as every command resolves a session
 * ({@linkcode locateInRoot}). Throws not_found when nothing matches and
 * usage, listing the candidates, when several sessions do.
 */
export async function findSessionInRoot(root: string, target: string): Promise<SessionFiles> {
  const located = await locateInRoot(root, target);
  return {
    key: located.sessionId,
    files: located.files.map((f) => ({ path: f.path, index: f.index })),
  };
}

/**
 * Resolve one target (file, directory, session id, unique part of one, or
 * `latest`) to its sessions. A path that exists wins over a session id of
 * the same name.
 */
export async function resolveTarget(
  target: string,
  options: TargetOptions = {},
): Promise<SessionFiles[]> {
  const info = await statOrNull(target);
  if (info?.isDirectory) return groupSessions(await walkTraceFiles(target));
  if (info) {
    // Refused now when not a regular file (a FIFO would block the first read, a device such as
    // /dev/zero read without end); read later through openTrace, which looks again.
    (await openTrace(target)).close();
    return groupSessions([target]);
  }
  if (!SESSION_ARG_RE.test(target)) {
    throw new PenguinError("not_found", `Cannot read "${target}": no such file or directory`);
  }
  const root = resolveDataRoot({ root: options.root, env: options.env });
  return [await findSessionInRoot(root, target)];
}

/** Resolve several targets; sessions found twice are kept once. */
export async function resolveTargets(
  targets: readonly string[],
  options: TargetOptions = {},
): Promise<SessionFiles[]> {
  const out: SessionFiles[] = [];
  const seen = new Set<string>();
  for (const t of targets) {
    for (const s of await resolveTarget(t, options)) {
      const id = s.files.map((f) => resolve(f.path)).join("\0");
      if (seen.has(id)) continue;
      seen.add(id);
      out.push(s);
    }
  }
  return out;
}
