/**
 * The line each entry of `tools.mcpServers` is written at in a
 * `system_config.yaml`, for the warnings of `parseMcpServers`
 * (mcp_servers.ts), which loads this module (and the YAML library) only
 * when it has a warning to give.
 *
 * @module
 */
import { LineCounter } from "yaml";
import { parseYamlDocument, YAML_CONFIG_MAX_NODES } from "./bounded_yaml.ts";
import type { Locator } from "./_config_errors.ts";
import { yamlLocator } from "./_yaml_locator.ts";

/**
 * `file:line` of entry i of `tools.mcpServers` in `file`, or `file` alone when
 * it cannot be read or located. The file is read once.
 */
export async function mcpEntryLines(file: string): Promise<(i: number) => string> {
  let locate: Locator | undefined;
  try {
    const lineCounter = new LineCounter();
    const doc = parseYamlDocument(await Deno.readTextFile(file), file, {
      lineCounter,
      maxNodes: YAML_CONFIG_MAX_NODES,
    });
    locate = yamlLocator(doc.contents, lineCounter);
  } catch {
    locate = undefined;
  }
  return (i) => {
    const pos = locate?.(["tools", "mcpServers", i]);
    return pos === undefined ? file : `${file}:${pos.line}`;
  };
}
