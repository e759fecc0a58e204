/**
 * The input history of `penguin chat`, per agent: `<agent_state>/chat_history`,
 * one JSON string per line (messages may span lines), oldest first, mode
 * 0600, bounded to the last {@linkcode CHAT_HISTORY_LIMIT} entries. A line
 * that does not parse is skipped; a file that cannot be read is an empty
 * history, since losing recall must never stop a chat.
 *
 * @module
 */
import { parseJsonBounded } from "../protocol/bounded_json.ts";
import { dirname } from "node:path";
import { mkdirPrivate, readTextIfExists, writeFileAtomic } from "./_fs.ts";

/** Entries kept. */
export const CHAT_HISTORY_LIMIT = 500;
/** Longer messages are not kept (a pasted file is not worth recalling). */
export const CHAT_HISTORY_MAX_ENTRY = 16_000;

/** Read the history at `path` (oldest first); missing or unreadable → empty. */
export async function loadChatHistory(path: string): Promise<string[]> {
  let text: string | undefined;
  try {
    text = await readTextIfExists(path);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const line of (text ?? "").split("\n")) {
    if (line.trim() === "") continue;
    try {
      const v = parseJsonBounded(line, "a chat history line");
      if (typeof v === "string" && v.trim() !== "") out.push(v);
    } catch {
      // a torn or foreign line: skipped
    }
  }
  return out.slice(-CHAT_HISTORY_LIMIT);
}

/**
 * Write `entries` (the whole history, oldest first) to `path`, keeping the
 * newest {@linkcode CHAT_HISTORY_LIMIT} and dropping oversized ones.
 */
export async function saveChatHistory(path: string, entries: readonly string[]): Promise<void> {
  const kept = entries.filter((e) => e.length <= CHAT_HISTORY_MAX_ENTRY).slice(
    -CHAT_HISTORY_LIMIT,
  );
  await mkdirPrivate(dirname(path));
  await writeFileAtomic(path, kept.map((e) => JSON.stringify(e) + "\n").join(""), 0o600);
}
