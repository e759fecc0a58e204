/**
 * Where an imported session works. A session file (a penguin trace, or a
 * Codex, Claude Code or pi session) names the directory it was recorded in;
 * that path comes from whoever wrote the file, so it is never where the
 * session continues. The user names the directory at import
 * (`--workspace`), else it is the current directory; the import records it
 * as the session's workspace, and the recorded path only as a fact of
 * `imported_from`.
 *
 * @module
 */
import { resolveWorkspace } from "../state/workspace.ts";

/** How the workspace of an import was chosen. */
export type ImportWorkspaceSource = "--workspace" | "cwd";

/** The directory imported sessions continue in. */
export interface ImportWorkspace {
  /** Absolute, with links resolved. */
  path: string;
  /** Named with `--workspace`, or the current directory. */
  from: ImportWorkspaceSource;
}

/**
 * The workspace of an import: `given` (the `--workspace` value) when set,
 * else the current directory (`cwd()`, asked only then). It must exist and
 * be a directory.
 */
export async function chooseImportWorkspace(
  given: string | undefined,
  cwd: () => string,
): Promise<ImportWorkspace> {
  const path = await Deno.realPath(await resolveWorkspace(given ?? cwd()));
  return { path, from: given !== undefined ? "--workspace" : "cwd" };
}

/** The note that says where imported sessions continue, and why there. */
export function importWorkspaceNote(ws: ImportWorkspace): string {
  const why = ws.from === "--workspace"
    ? "named with --workspace"
    : "the current directory; choose another with --workspace <dir>";
  return `The imported sessions continue in ${ws.path} (${why}), not in the directories ` +
    `their files recorded; the first resume of each runs in the directory it is started from ` +
    `(or the one --workspace names) and stays there.`;
}
