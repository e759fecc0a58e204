/**
 * Where an imported session came from, in one line, from its session_meta's
 * `imported_from`: a penguin trace import records `{path, session_id}`, a
 * foreign import `{harness, id, file, version, cwd}`. Both shapes are read
 * here, so a reader never prints the fields of the other (`imported from
 * undefined`).
 *
 * @module
 */

const HARNESS_NAMES: Record<string, string> = {
  codex: "Codex",
  claude: "Claude Code",
  pi: "pi",
};

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/** The origin of a session whose meta has `importedFrom`, or null when it was not imported. */
export function importOrigin(importedFrom: unknown): string | null {
  if (importedFrom === null || typeof importedFrom !== "object") return null;
  const o = importedFrom as Record<string, unknown>;
  const harness = str(o.harness);
  if (harness !== null) {
    const name = HARNESS_NAMES[harness] ?? harness;
    const version = str(o.version);
    const id = str(o.id) ?? "(no id)";
    const file = str(o.file);
    return `${name}${version ? ` ${version}` : ""} session ${id}${file ? ` (${file})` : ""}`;
  }
  const path = str(o.path);
  const id = str(o.session_id);
  if (path === null && id === null) return "an unrecorded source";
  return `penguin trace ${path ?? "(no path)"}${id ? ` (session ${id})` : ""}`;
}
