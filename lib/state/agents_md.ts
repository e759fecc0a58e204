/**
 * `AGENTS.md`: free Markdown developer instructions, injected (trimmed) into
 * the system prompt at `{{AGENTS_MD}}`.
 *
 * @module
 */
import { dirname } from "node:path";
import { mkdirPrivate, readTextIfExists, writeFileAtomic } from "./_fs.ts";

/** The file's text, or `""` when it does not exist. */
export async function readAgentsMd(path: string): Promise<string> {
  return (await readTextIfExists(path)) ?? "";
}

/** Replace the file's text (atomic write, mode 0644). */
export async function writeAgentsMd(path: string, text: string): Promise<void> {
  await mkdirPrivate(dirname(path));
  await writeFileAtomic(path, text, 0o644);
}
