/**
 * System prompt assembly. The template's placeholders are
 * replaced with plain split/join in a fixed order, then `{{MEMORY}}`,
 * `{{VAULT}}`, `{{SKILLS}}` and `{{SCHEDULES}}` in ONE final pass (their
 * products are never rescanned), then the result is trimmed. The vault
 * contributes key names only, never values.
 *
 * @module
 */

/** The per-session values substituted into the template. */
export interface PromptVars {
  /** `{{AGENTS_MD}}`: the `AGENTS.md` text (trimmed here). */
  agentsMd: string;
  /** `{{AGENT_ID}}`: agent id. */
  agentId: string;
  /** `{{PROJECT_DIR}}`: project directory ("App Data Dir"). */
  projectDir: string;
  /** `{{SESSION_ID}}`: session id. */
  sessionId: string;
  /** `{{CWD}}`: workspace path. */
  cwd: string;
  /** `{{PROVIDER}}`: provider group of the model pair. */
  provider: string;
  /** `{{MODEL_ID}}`: model id of the model pair. */
  modelId: string;
  /** `{{PLATFORM}}`: platform name as Node spells it (`linux`, `darwin`, `win32`). */
  platform: string;
  /** `{{OS_VERSION}}`: `<os type> <release>`, or `unknown`. */
  osVersion: string;
  /** `{{SHELL}}`: shell name, e.g. `bash`. */
  shell: string;
  /** `{{DATE}}`: local date `yyyy-mm-dd`. */
  date: string;
}

/** The rendered sections (empty string = the section is off). */
export interface PromptSections {
  /** `{{VAULT}}`. */
  vault: string;
  /** `{{SKILLS}}`. */
  skills: string;
  /** `{{MEMORY}}`. */
  memory: string;
  /** `{{SCHEDULES}}`. */
  schedules: string;
  /** The vault key list (`- KEY` lines), for a template's legacy inline `{{VAULT_KEYS}}`. */
  vaultKeys: string;
  /** The skill list, for a template's legacy inline `{{SKILL_METADATA}}`. */
  skillMetadata: string;
}

/** The vars filled one at a time after `{{SKILL_METADATA}}`, in this order. */
const IN_ORDER = [
  "agentId",
  "projectDir",
  "sessionId",
  "cwd",
  "provider",
  "modelId",
  "platform",
  "osVersion",
  "shell",
  "date",
] as const;

/** The placeholder of var `name`: its name in upper snake case in braces (`{{AGENT_ID}}`). */
function placeholderOf(name: string): string {
  return `{{${name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}}}`;
}

function sub(text: string, placeholder: string, value: string): string {
  return text.split(placeholder).join(value);
}

/**
 * Fill `template`'s placeholders one at a time in a fixed order, then
 * `{{MEMORY}}`, `{{VAULT}}`, `{{SKILLS}}` and `{{SCHEDULES}}` in one pass,
 * then trim.
 */
export function assembleSystemPrompt(
  template: string,
  vars: PromptVars,
  sections: PromptSections,
): string {
  let t = template;
  t = sub(t, "{{AGENTS_MD}}", vars.agentsMd.trim());
  t = sub(t, "{{VAULT_KEYS}}", sections.vaultKeys);
  t = sub(t, "{{SKILL_METADATA}}", sections.skillMetadata);
  for (const name of IN_ORDER) t = sub(t, placeholderOf(name), vars[name]);
  const byName: Record<string, string> = {
    "{{MEMORY}}": sections.memory,
    "{{VAULT}}": sections.vault,
    "{{SKILLS}}": sections.skills,
    "{{SCHEDULES}}": sections.schedules,
  };
  t = t.replace(
    /\{\{MEMORY\}\}|\{\{VAULT\}\}|\{\{SKILLS\}\}|\{\{SCHEDULES\}\}/g,
    (m) => byName[m]!,
  );
  return t.trim();
}

/** Node's name for the platform (`process.platform`). */
export function platformName(): string {
  return Deno.build.os === "windows" ? "win32" : Deno.build.os;
}

/** `<os type> <release>` (Linux, Darwin, Windows_NT), or `unknown` when it cannot be read. */
export function osVersion(): string {
  const type = { linux: "Linux", darwin: "Darwin", windows: "Windows_NT" }[
    Deno.build.os as "linux" | "darwin" | "windows"
  ] ?? Deno.build.os;
  try {
    return `${type} ${Deno.osRelease()}`;
  } catch {
    return "unknown";
  }
}

/** The command shell's name: the basename of `PENGUIN_SHELL` when set, else `bash`. */
export function shellName(env: (name: string) => string | undefined): string {
  const override = env("PENGUIN_SHELL");
  if (override) return override.split(/[\\/]/).pop()!.replace(/\.exe$/i, "") || "bash";
  return "bash";
}
