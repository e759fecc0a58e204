/**
 * The four generated sections of the system prompt: vault key names, the
 * skill list, the memory indexes and the schedule roster. Each renders its
 * configured prompt with the inner placeholder filled, or "" when the
 * section is disabled. Reading is best-effort: an unreadable directory reads
 * as empty.
 *
 * @module
 */
import type { AgentPaths } from "../state/paths.ts";
import {
  MEMORY_INDEX,
  prepareMemory,
  readMemoryFile,
  workspaceMemoryKey,
} from "../state/memory.ts";
import type { ResolvedSystemConfig } from "../state/system_config.ts";
import { listSkills } from "../state/skills.ts";
import type { PromptSections } from "./prompt.ts";

/** Lines of a memory index injected at most. */
export const MEMORY_INDEX_MAX_LINES = 200;

/** Characters of a memory index injected at most. */
export const MEMORY_INDEX_MAX_CHARS = 25_000;

/** What an empty memory index reads as. */
export const EMPTY_MEMORY_INDEX = "(the index is empty — nothing has been saved yet)";

export { prepareMemory, workspaceMemoryKey };

/** A scope's index as penguin may read it (a link or a swapped file reads as empty). */
async function readIndex(dir: string): Promise<string | undefined> {
  try {
    const r = await readMemoryFile(dir, MEMORY_INDEX);
    return r.ok ? r.text : undefined;
  } catch {
    return undefined;
  }
}

async function entries(dir: string): Promise<Deno.DirEntry[]> {
  const out: Deno.DirEntry[] = [];
  try {
    for await (const e of Deno.readDir(dir)) out.push(e);
  } catch {
    return [];
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A memory index as injected: trimmed, ≤ 200 lines, ≤ 25000 chars, with a truncation note. */
export function memoryIndexText(raw: string | undefined): string {
  const text = (raw ?? "").replace(/\r\n/g, "\n").trim();
  if (text === "") return EMPTY_MEMORY_INDEX;
  const lines = text.split("\n");
  let shown = lines.slice(0, MEMORY_INDEX_MAX_LINES).join("\n");
  let note: string | undefined;
  if (lines.length > MEMORY_INDEX_MAX_LINES) {
    note = `showing ${MEMORY_INDEX_MAX_LINES} of ${lines.length} lines`;
  }
  if (shown.length > MEMORY_INDEX_MAX_CHARS) {
    const cut = shown.lastIndexOf("\n", MEMORY_INDEX_MAX_CHARS);
    shown = shown.slice(0, cut > 0 ? cut : MEMORY_INDEX_MAX_CHARS);
    note = `showing the first ${MEMORY_INDEX_MAX_CHARS} characters`;
  }
  return note ? `${shown}\n(index truncated: ${note} — open MEMORY.md for the rest)` : shown;
}

/** The skill list: `` - `name` — description `` per skill directory, sorted by name. */
export async function skillList(skillsDir: string): Promise<string[]> {
  return (await listSkills(skillsDir)).map((s) =>
    s.description ? `- \`${s.name}\` — ${s.description}` : `- \`${s.name}\``
  );
}

/** The schedule roster: `- <name>` per `<name>.toml`. */
export async function scheduleList(scheduleDir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await entries(scheduleDir)) {
    const m = /^([A-Za-z0-9_-]+)\.toml$/.exec(e.name);
    if (e.isFile && m) out.push(`- ${m[1]}`);
  }
  return out;
}

/** Inputs of {@linkcode renderPromptSections}. */
export interface SectionInputs {
  /** The agent's paths. */
  paths: AgentPaths;
  /** The resolved agent config (section switches and prompts). */
  config: ResolvedSystemConfig;
  /** Vault key names (values are never used). */
  vaultKeys: string[];
  /** Workspace memory directory, when the workspace has a memory scope. */
  workspaceMemoryDir?: string;
  /**
   * Applied to each memory index and to the skill list before they are
   * injected: the model writes the indexes (and may have written a skill the
   * user installed), and may have put a vault value or an API key there (its
   * commands see the vault), which would otherwise reach the request and the
   * trace unmasked. Default: the text as it is.
   */
  mask?: (text: string) => string;
}

/** Render every section of the system prompt. */
export async function renderPromptSections(input: SectionInputs): Promise<PromptSections> {
  const { config, paths } = input;
  const vaultKeys = input.vaultKeys.map((k) => `- ${k}`).join("\n") || "(no vault keys are set)";
  const mask = input.mask ?? ((text: string) => text);
  // Masked too: a skill's description comes from a SKILL.md the user installed, which may be a
  // folder the model wrote (attack round 22 secrets A04).
  const skillMetadata = mask((await skillList(paths.skills)).join("\n")) ||
    "(no skills are installed)";
  const fill = (prompt: string, placeholder: string, value: string) =>
    prompt.split(placeholder).join(value);
  let memory = "";
  if (config.memory.enabled) {
    const user = memoryIndexText(mask(await readIndex(paths.userMemory) ?? ""));
    memory = fill(config.memory.prompt, "{{USER_MEMORY_INDEX}}", user);
    if (input.workspaceMemoryDir) {
      const ws = memoryIndexText(mask(await readIndex(input.workspaceMemoryDir) ?? ""));
      const part = fill(
        fill(config.memory.workspace_prompt, "{{WORKSPACE_MEMORY_INDEX}}", ws),
        "{{WORKSPACE_MEMORY_DIR}}",
        input.workspaceMemoryDir,
      );
      memory = `${memory}\n\n${part}`;
    }
  }
  const schedules = config.schedules.enabled
    ? fill(
      fill(
        config.schedules.prompt,
        "{{SCHEDULE_LIST}}",
        (await scheduleList(paths.schedule)).join("\n") || "(no scheduled tasks defined yet)",
      ),
      "{{SCHEDULE_DIR}}",
      paths.schedule,
    )
    : "";
  return {
    vault: config.vault.enabled ? fill(config.vault.prompt, "{{VAULT_KEYS}}", vaultKeys) : "",
    skills: config.skills.enabled
      ? fill(
        fill(config.skills.prompt, "{{SKILL_METADATA}}", skillMetadata),
        "{{SKILLS_DIR}}",
        paths.skills,
      )
      : "",
    memory,
    schedules,
    vaultKeys,
    skillMetadata,
  };
}
