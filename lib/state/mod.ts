/**
 * penguin's on-disk state: the data root, ids, the directory layout, the
 * project config (`.project_config.toml`), agent config
 * (`system_config.yaml`), vault, `AGENTS.md`, agent initialization and
 * workspaces, the chat input history, and scheduled task files and their slots.
 *
 * @module
 */
export * from "./root.ts";
export * from "./ids.ts";
export * from "./paths.ts";
export * from "./project_config.ts";
export * from "./command_policy_defaults.ts";
export * from "./system_config.ts";
export * from "./system_config_parse.ts";
export * from "./mcp_servers.ts";
export * from "./mcp_servers_yaml.ts";
export * from "./skills.ts";
export * from "./memory.ts";
export * from "./untrusted_file.ts";
export * from "./default_prompts.ts";
export * from "./vault.ts";
export * from "./agents_md.ts";
export * from "./agent_init.ts";
export * from "./workspace.ts";
export * from "./chat_history.ts";
export * from "./schedule.ts";
export * from "./schedule_slots.ts";
