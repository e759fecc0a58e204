/**
 * What a snapshot would set up that sends data off the machine or runs
 * programs, beyond the model's own commands, in words for the importer to
 * accept (see `penguin agent import`):
 *
 * - every MCP server: a stdio server's command line, cwd and env names (and
 *   what it may reach beyond the sandbox: network, writable directories, the
 *   workspace as its cwd), an HTTP server's URL and header names, and a server whose tools
 *   are marked read-only (`permission: r`, run unasked under
 *   `--approve read-only`);
 * - every scheduled task (`schedule/<name>.toml`), with where it runs: the
 *   enabled ones, the disabled ones (a later edit enables them) and the ones
 *   that do not parse (a later edit fixes them);
 * - skills that may run commands: a skill holding any file other than its
 *   `SKILL.md` and documents or images (`.md`, `.markdown`, `.txt`, `.png`,
 *   `.jpg`, `.jpeg`, `.gif`, `.webp`, `.svg`), or one of those that is
 *   executable, starts with `#!` or lies under `scripts/` or `bin/`. The rule
 *   names what is safe to leave out rather than what runs: no list of
 *   interpreters (Makefile, `.awk`, `.R`, `.go`, Dockerfile…) is complete.
 *
 * The telemetry endpoint and the built-in tools' settings are listed by the
 * import command (`lib/cli/commands/agent.ts`), which resolves them as a
 * session does: the endpoint through `lib/telemetry/config.ts`, the tools
 * against their defaults.
 *
 * `telemetry.include_content` is never taken from a snapshot:
 * {@linkcode dropIncludeContent} removes it from the archive's
 * `system_config.yaml` (comments and the rest kept) and says so.
 *
 * @module
 */
import { parseYamlDocument, YAML_MAX_ALIAS_COUNT } from "./bounded_yaml.ts";
import { mcpServerConfigs } from "./mcp_servers.ts";
import { parseScheduledTask } from "./schedule.ts";
import type { SystemConfig } from "./system_config.ts";

/** One file of an archive, relative to `agent_state/`. */
export interface ReachFile {
  /** `skills/x/SKILL.md`, `schedule/nightly.toml`, … */
  path: string;
  /** Permission bits. */
  mode: number;
  /** Contents. */
  data: Uint8Array;
}

/** Where the archive's config file is named in messages. */

/** Everything an archive sets up that reaches off the machine or runs programs, in words. */
export function snapshotReach(config: SystemConfig, files: readonly ReachFile[]): string[] {
  return [
    ...mcpReach(config.tools?.mcpServers ?? []),
    ...scheduleReach(files),
    ...skillReach(files),
  ];
}

const SIMPLE_WORD = /^[A-Za-z0-9_@%+=:,./~-]+$/;

/** A command line as the user would read it (words with spaces or quotes shown quoted). */
function commandLine(words: readonly string[]): string {
  return words.map((w) => SIMPLE_WORD.test(w) ? w : JSON.stringify(w)).join(" ");
}

function names(record: Record<string, string> | undefined): string[] {
  return Object.keys(record ?? {}).sort();
}

/** Every MCP server of the archive's configuration, in words. */
function mcpReach(entries: readonly unknown[]): string[] {
  return mcpServerConfigs(entries).map((s) => {
    const unasked = s.permission === "r"
      ? "; its tools are marked read-only, so --approve read-only runs them unasked"
      : "";
    if (s.transport !== "stdio") {
      const headers = names(s.headers);
      const sent = headers.length > 0 ? ` sending the headers ${headers.join(", ")}` : "";
      return `MCP server "${s.name}" connects to ${s.url}${sent}${unasked}`;
    }
    const wider = [
      ...(s.sandbox.network ? ["network on"] : []),
      ...(s.sandbox.writable.length > 0 ? [`writable ${s.sandbox.writable.join(", ")}`] : []),
      ...(s.sandbox.readable.length > 0 ? [`readable ${s.sandbox.readable.join(", ")}`] : []),
      // Started in the workspace, its runtime may load what the model wrote there.
      ...(s.sandbox.workspaceCwd && s.cwd === undefined ? ["the workspace as its cwd"] : []),
    ];
    const where = wider.length > 0 ? ` with ${wider.join(" and ")}` : " in the sandbox";
    const env = names(s.env);
    const facts = [
      ...(s.cwd !== undefined ? [`cwd ${s.cwd}`] : []),
      ...(env.length > 0 ? [`env ${env.join(", ")}`] : []),
    ];
    const withFacts = facts.length > 0 ? ` (${facts.join("; ")})` : "";
    return `MCP server "${s.name}" runs ${
      commandLine([s.command, ...s.args])
    }${withFacts}${where}${unasked}`;
  });
}

/**
 * The scheduled tasks of an archive (`schedule/<name>.toml`), in words:
 * enabled ones run on their own; a disabled one, or one that does not parse,
 * runs once a later edit enables or fixes it, so it is listed too.
 */
function scheduleReach(files: readonly ReachFile[]): string[] {
  const out: string[] = [];
  for (const f of files) {
    const m = /^schedule\/([^/]+)\.toml$/.exec(f.path);
    if (!m) continue;
    let task;
    try {
      task = parseScheduledTask(new TextDecoder().decode(f.data), `agent_state/${f.path}`, m[1]!);
    } catch {
      out.push(
        `scheduled task file agent_state/${f.path} (invalid as written; once fixed it runs on its own)`,
      );
      continue;
    }
    const where = task.sessionId !== undefined
      ? `continuing session ${task.sessionId}`
      : task.workspace !== undefined
      ? `in ${task.workspace}`
      : "in a new temporary workspace";
    out.push(
      task.enabled
        ? `scheduled task "${task.name}" runs on its own ${where}`
        : `scheduled task "${task.name}" (disabled; once enabled it runs on its own ${where})`,
    );
  }
  return out;
}

/**
 * Extensions of the files a skill may hold without being listed: documents
 * and images. Anything else (a Makefile, a Dockerfile, `.awk`, `.R`, `.go`,
 * a file without an extension, a dotfile…) may be a program the skill's
 * instructions tell the model to run, and no list of interpreters is
 * complete, so it is listed.
 */
const DOCUMENT_EXTENSIONS = new Set([
  "md",
  "markdown",
  "txt",
  "png",
  "jpg",
  "jpeg",
  "gif",
  "webp",
  "svg",
]);

/**
 * True when a skill's file (`rel` inside the skill) may be something to run:
 * anything but `SKILL.md` and documents or images by their extension, and
 * even those when executable, starting with `#!`, or under a `scripts/` or
 * `bin/` directory.
 */
function mayRun(rel: string, mode: number, data: Uint8Array): boolean {
  if ((mode & 0o111) !== 0) return true;
  if (data[0] === 0x23 && data[1] === 0x21) return true; // #!
  if (rel === "SKILL.md") return false;
  const parts = rel.split("/");
  if (parts.slice(0, -1).some((p) => p === "scripts" || p === "bin")) return true;
  const ext = /.\.([^./]+)$/.exec(parts.at(-1)!)?.[1]?.toLowerCase();
  return ext === undefined || !DOCUMENT_EXTENSIONS.has(ext);
}

/** The skills of an archive holding files that may be programs for the model to run, in words. */
function skillReach(files: readonly ReachFile[]): string[] {
  const bySkill = new Map<string, string[]>();
  for (const f of files) {
    const m = /^skills\/([^/]+)\/(.+)$/.exec(f.path);
    if (!m || !mayRun(m[2]!, f.mode, f.data)) continue;
    const list = bySkill.get(m[1]!) ?? [];
    list.push(m[2]!);
    bySkill.set(m[1]!, list);
  }
  return [...bySkill].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([name, programs]) => {
    programs.sort();
    const shown = programs.slice(0, 3).join(", ");
    const more = programs.length > 3 ? ` and ${programs.length - 3} more` : "";
    return `skill "${name}" may run commands: it holds files other than text and images: ` +
      `${shown}${more}`;
  });
}

/** The outcome of {@linkcode dropIncludeContent}. */
export interface DroppedSetting {
  /** The config's new text. */
  text: string;
  /** What was dropped, in words (empty when nothing was). */
  dropped: string[];
}

/**
 * `text` (a `system_config.yaml` that parsed as `config`) without
 * `telemetry.include_content`: whether message contents go to a telemetry
 * endpoint is the user's choice on this machine, never a snapshot's.
 * Returns undefined when the key cannot be removed (e.g. written through
 * a YAML alias); the caller refuses the archive then.
 */
export function dropIncludeContent(text: string, config: SystemConfig): DroppedSetting | undefined {
  const telemetry = config.telemetry;
  if (telemetry === undefined || !("include_content" in telemetry)) return { text, dropped: [] };
  const doc = parseYamlDocument(text, "system_config.yaml");
  try {
    doc.deleteIn(["telemetry", "include_content"]);
  } catch {
    return undefined;
  }
  const out = doc.toString();
  const after = parseYamlDocument(out, "system_config.yaml").toJS({
    maxAliasCount: YAML_MAX_ALIAS_COUNT,
  }) as SystemConfig | null;
  if (after?.telemetry !== undefined && "include_content" in (after.telemetry ?? {})) {
    return undefined;
  }
  return {
    text: out,
    dropped: [
      `telemetry.include_content: ${
        JSON.stringify(telemetry.include_content)
      } (whether message contents go to telemetry is never taken from a snapshot; set it in the agent's system_config.yaml yourself)`,
    ],
  };
}
