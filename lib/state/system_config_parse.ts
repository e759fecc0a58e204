/**
 * `system_config.yaml` as text: parsed (bounded, see bounded_yaml.ts) and
 * validated, with errors naming the file, line and column; rendered; loaded
 * and saved.
 * Loaded only when a configuration file is really parsed or written.
 *
 * @module
 */
import { dirname } from "node:path";
import { LineCounter, stringify } from "yaml";
import { parseYamlDocument, YAML_CONFIG_MAX_NODES, YAML_MAX_ALIAS_COUNT } from "./bounded_yaml.ts";
import { schemaError, yamlSyntaxError, zodProblems } from "./_config_errors.ts";
import { yamlLocator } from "./_yaml_locator.ts";
import { systemConfigSchema } from "./_system_config_schema.ts";
import type { SystemConfig } from "./system_config.ts";
import { mkdirPrivate, writeFileAtomic } from "./_fs.ts";

/** Parse and validate YAML `text`; `file` names the file in errors (with line and column). */
export function parseSystemConfig(text: string, file: string): SystemConfig {
  const lineCounter = new LineCounter();
  const doc = parseYamlDocument(text, file, {
    lineCounter,
    prettyErrors: true,
    maxNodes: YAML_CONFIG_MAX_NODES,
  });
  if (doc.errors.length > 0) throw yamlSyntaxError(file, doc.errors[0]);
  const value = doc.toJS({ maxAliasCount: YAML_MAX_ALIAS_COUNT });
  const result = systemConfigSchema.safeParse(value, { reportInput: true });
  if (!result.success) {
    throw schemaError(
      file,
      zodProblems(result.error.issues),
      yamlLocator(doc.contents, lineCounter),
    );
  }
  return result.data as SystemConfig;
}

/** Render `cfg` as YAML (multi-line strings as literal blocks, no line folding). */
export function renderSystemConfig(cfg: SystemConfig): string {
  return stringify(cfg, { lineWidth: 0 });
}

/** Load the file at `path` (it must exist). */
export async function loadSystemConfig(path: string): Promise<SystemConfig> {
  return parseSystemConfig(await Deno.readTextFile(path), path);
}

/** Write `cfg` to `path` atomically (mode 0644), creating parent dirs (0700). */
export async function saveSystemConfig(path: string, cfg: SystemConfig): Promise<void> {
  await mkdirPrivate(dirname(path));
  await writeFileAtomic(path, renderSystemConfig(cfg), 0o644);
}
