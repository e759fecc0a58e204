/**
 * Adding or removing an MCP server entry (mcp_servers.ts) in an agent's
 * `system_config.yaml`, with the rest of the file, comments included, kept.
 *
 * @module
 */
import { Document, isMap, isSeq, LineCounter, YAMLMap, YAMLSeq } from "yaml";
import { parseYamlDocument, YAML_CONFIG_MAX_NODES } from "./bounded_yaml.ts";
import { PenguinError } from "../protocol/errors.ts";
import { yamlSyntaxError } from "./_config_errors.ts";
import { writeFileAtomic } from "./_fs.ts";
import { checkMcpServer, type McpServerEntryConfig } from "./mcp_servers.ts";

async function loadDocument(path: string): Promise<Document> {
  const text = await Deno.readTextFile(path);
  const doc = parseYamlDocument(text, path, {
    lineCounter: new LineCounter(),
    maxNodes: YAML_CONFIG_MAX_NODES,
  });
  if (doc.errors.length > 0) throw yamlSyntaxError(path, doc.errors[0]);
  if (!isMap(doc.contents)) {
    throw new PenguinError("config", `Cannot edit "${path}": expected a YAML mapping at the top`);
  }
  return doc;
}

/** `parent[key]`; when absent (or null) and `make` is given, set to what it makes first. */
function childNode(parent: Document | YAMLMap, key: string, make?: () => unknown): unknown {
  const value = parent.get(key);
  if ((value !== undefined && value !== null) || make === undefined) return value ?? undefined;
  parent.set(key, make());
  return parent.get(key);
}

function serverList(doc: Document, path: string, create: boolean): YAMLSeq | undefined {
  const tools = childNode(doc, "tools", create ? () => new YAMLMap() : undefined);
  if (tools === undefined) return undefined;
  if (!isMap(tools)) {
    throw new PenguinError("config", `Cannot edit "${path}": tools is not a mapping`);
  }
  const list = childNode(tools, "mcpServers", create ? () => new YAMLSeq() : undefined);
  if (list === undefined) return undefined;
  if (!isSeq(list)) {
    throw new PenguinError("config", `Cannot edit "${path}": tools.mcpServers is not a list`);
  }
  // The default file says `mcpServers: []`: entries added to it are written in block style
  // (one key a line), not folded into that one-line flow list.
  if (create) list.flow = false;
  return list;
}

function entryName(item: unknown): unknown {
  return isMap(item) ? item.get("name") : undefined;
}

/**
 * Add (or replace) the server `name` in the config file at `path`, keeping
 * the rest of the file, comments included. Returns true when an entry of
 * that name was replaced.
 */
export async function addMcpServer(
  path: string,
  name: string,
  config: McpServerEntryConfig,
): Promise<boolean> {
  checkMcpServer(name, config);
  const doc = await loadDocument(path);
  const list = serverList(doc, path, true)!;
  const node = doc.createNode({ name, config }, { flow: false });
  const at = list.items.findIndex((item) => entryName(item) === name);
  if (at >= 0) list.items[at] = node;
  else list.items.push(node);
  await writeFileAtomic(path, doc.toString({ lineWidth: 0 }), 0o644);
  return at >= 0;
}

/** Remove the server `name` from the config file at `path`; false when there was none. */
export async function removeMcpServer(path: string, name: string): Promise<boolean> {
  const doc = await loadDocument(path);
  const list = serverList(doc, path, false);
  const at = list ? list.items.findIndex((item) => entryName(item) === name) : -1;
  if (!list || at < 0) return false;
  list.items.splice(at, 1);
  await writeFileAtomic(path, doc.toString({ lineWidth: 0 }), 0o644);
  return true;
}
