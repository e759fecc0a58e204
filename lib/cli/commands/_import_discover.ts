/**
 * `penguin sessions import --from <harness>` with no file: the sessions
 * that harness recorded, found where it keeps them, narrowed by `--all`
 * (every one), `--workspace <dir>` (those recorded in that directory; the
 * default is the current directory's) and `--latest` (the most recent of
 * those). Nothing found is one line naming where it looked.
 *
 * @module
 */
import { resolve } from "node:path";
import { PenguinError } from "../../protocol/errors.ts";
import type { Harness } from "../../session/foreign_session.ts";
import { findSessionFiles, harnessSessionDir } from "../../session/foreign_discover.ts";
import { readForeignSession } from "../../session/import_foreign.ts";
import { realDir } from "../../session/select.ts";

/** How discovered sessions are chosen. */
export interface DiscoverChoice {
  /** Every session of the harness (else those recorded in `workspace`). */
  all: boolean;
  /** Only the most recent one. */
  latest: boolean;
  /** The directory whose sessions are wanted. */
  workspace: string;
}

const NAMES: Record<Harness, string> = { codex: "Codex", claude: "Claude Code", pi: "pi" };

/** Read an environment variable penguin may not be allowed to read (then: unset). */
function env(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/** The session files to import, newest first. */
export async function discoverImports(harness: Harness, choice: DiscoverChoice): Promise<string[]> {
  const dir = harnessSessionDir(harness, env);
  const found = await findSessionFiles(harness, dir);
  let files = found.map((f) => f.file);
  const here = await realDir(choice.workspace);
  if (!choice.all) {
    const kept: string[] = [];
    for (const f of files) {
      // A file that cannot be read is left to the import, which says why; here it is not "here".
      const cwd = await readForeignSession(f, harness).then((s) => s.cwd, () => "");
      if (cwd !== "" && (resolve(cwd) === here || (await realDir(cwd)) === here)) kept.push(f);
    }
    files = kept;
  }
  if (choice.latest) files = files.slice(0, 1);
  if (files.length > 0) return files;
  throw new PenguinError(
    "not_found",
    found.length === 0
      ? `sessions import: no ${NAMES[harness]} session found in ${dir} (give a file instead)`
      : `sessions import: none of the ${found.length} ${NAMES[harness]} session(s) in ${dir} ` +
        `was recorded in ${here} (--all imports them all, --workspace <dir> picks another directory)`,
  );
}
