/**
 * penguin's built-in prompt texts, embedded in the binary as text imports.
 * The system prompt is a template with `{{…}}` placeholders (`{{AGENTS_MD}}`, `{{MEMORY}}`, …);
 * the section prompts carry their own inner placeholders.
 *
 * @module
 */
import systemPrompt from "./default_prompt.md" with { type: "text" };
import compaction from "./prompts/compaction.md" with { type: "text" };
import compactionRetry from "./prompts/compaction_retry.md" with { type: "text" };
import memory from "./prompts/memory.md" with { type: "text" };
import memoryWorkspace from "./prompts/memory_workspace.md" with { type: "text" };
import vault from "./prompts/vault.md" with { type: "text" };
import skills from "./prompts/skills.md" with { type: "text" };
import schedules from "./prompts/schedules.md" with { type: "text" };

/** Drop a leading `<!-- deno-fmt-ignore-file -->` line (it keeps `deno fmt` off the template). */
function stripFmtDirective(text: string): string {
  return text.replace(/^<!--\s*deno-fmt-ignore-file\s*-->\r?\n/, "");
}

/** The default system prompt template (its `{{…}}` placeholders are filled per session). */
export const DEFAULT_SYSTEM_PROMPT: string = stripFmtDirective(systemPrompt).trim() + "\n";

/** Default `compaction.prompt`: asks for `[summary]…[/summary]`. */
export const DEFAULT_COMPACTION_PROMPT: string = compaction.trim();

/** The corrective note sent when a compaction reply was unusable. */
export const DEFAULT_COMPACTION_RETRY_PROMPT: string = compactionRetry.trim();

/** Default `memory.prompt`; placeholder `{{USER_MEMORY_INDEX}}`. */
export const DEFAULT_MEMORY_PROMPT: string = memory.trim();

/** Default `memory.workspace_prompt`; placeholders `{{WORKSPACE_MEMORY_INDEX}}`, `{{WORKSPACE_MEMORY_DIR}}`. */
export const DEFAULT_MEMORY_WORKSPACE_PROMPT: string = memoryWorkspace.trim();

/** Default `vault.prompt`; placeholder `{{VAULT_KEYS}}`. */
export const DEFAULT_VAULT_PROMPT: string = vault.trim();

/** Default `skills.prompt`; placeholders `{{SKILL_METADATA}}` and `{{SKILLS_DIR}}`. */
export const DEFAULT_SKILLS_PROMPT: string = skills.trim();

/** Default `schedules.prompt`; placeholders `{{SCHEDULE_LIST}}` and `{{SCHEDULE_DIR}}`. */
export const DEFAULT_SCHEDULES_PROMPT: string = schedules.trim();
