/**
 * The MCP secrets of an agent's `system_config.yaml`, left out of a
 * snapshot the way the vault is: every value of an entry's `config.env`
 * (stdio servers) and `config.headers` (remote servers) under
 * `tools.mcpServers` is written as an empty string; a server's `url` is cut
 * to `scheme://host[:port]` when it has userinfo, a path, a query or a
 * fragment (lib/state/mcp_url_secrets.ts), with a comment
 * ({@linkcode URL_LEFT_OUT}) marking the server as needing its URL; and
 * every secret in `args` is left out (`""`, `--api-key=`, `Authorization:`,
 * a URL cut to its origin): every value that is not an option name or an
 * existing path (the closed rule of lib/state/mcp_arg_secrets.ts), with a
 * comment ({@linkcode ARG_LEFT_OUT}) marking it. Keys, comments and
 * everything else are kept. The importer sees which variables, headers,
 * URLs and arguments a server needs and sets them again (`penguin mcp add`;
 * `penguin agent import` lists the marked servers with the line to run,
 * every word shell-quoted, {@linkcode serversNeedingUrl}).
 *
 * A value that would still be in the text afterwards (reached through a
 * YAML alias, say) refuses the snapshot rather than pack it.
 *
 * @module
 */
import { isAlias, isMap, isScalar, isSeq, type parseDocument, visit, type YAMLMap } from "yaml";
import { parseYamlDocument, YAML_CONFIG_MAX_NODES } from "./bounded_yaml.ts";
import { PenguinError } from "../protocol/errors.ts";
import { argSecrets, argsWithoutSecrets, elided } from "./mcp_arg_secrets.ts";
import { urlOrigin, urlSecretParts } from "./mcp_url_secrets.ts";

/** The comment written beside a URL cut to its origin (the mark {@linkcode serversNeedingUrl} reads). */
export const URL_LEFT_OUT =
  " penguin: userinfo, path, query and fragment left out; set the full URL";

/** The comment written beside an argument whose secret was left out. */
export const ARG_LEFT_OUT = " penguin: argument left out; set it again";

/** What {@linkcode withoutMcpSecrets} made of a configuration. */
export interface StrippedConfig {
  /** The text to pack. */
  text: string;
  /** `<server>.<NAME>` of every value left out (entries without a name show their index). */
  removed: string[];
}

/**
 * Refuses a `system_config.yaml` that uses a YAML alias (`*name`) or a merge
 * key (`<<`, which a `%YAML 1.1` document applies) anywhere: the credentials
 * penguin leaves out of a snapshot are looked up by their keys, and a value, a
 * map or a whole section (`telemetry: *t`, `<<: {headers: …}`) reached through
 * an alias or a merge would be packed as written. A quoted `"<<"` key is
 * refused too: whether it merges depends on the reader.
 */
export function refuseAliases(text: string, file: string): void {
  const doc = parseYamlDocument(text, file, { maxNodes: YAML_CONFIG_MAX_NODES });
  let at: number | undefined;
  let what = "";
  visit(doc, {
    Alias(_, node) {
      at = node.range?.[0] ?? 0;
      what = `the YAML alias *${node.source}`;
      return visit.BREAK;
    },
    Pair(_, pair) {
      // A `%YAML 1.1` merge key's value is a symbol; a 1.2 document's plain `<<` a string.
      if (!isScalar(pair.key)) return;
      const key = pair.key.value;
      if (typeof key !== "symbol" && key !== "<<") return;
      at = pair.key.range?.[0] ?? 0;
      what = "the YAML merge key <<";
      return visit.BREAK;
    },
  });
  if (at === undefined) return;
  const line = text.slice(0, at).split("\n").length;
  throw new PenguinError(
    "config",
    `Cannot snapshot "${file}": line ${line} uses ${what}, and penguin leaves ` +
      `credentials (MCP env, headers and URLs, telemetry headers and endpoints) out of a ` +
      `snapshot by their keys, which an alias or a merge hides. Write the values out in place ` +
      `of the ${what.startsWith("the YAML alias") ? "alias" : "merge"} and snapshot again`,
  );
}

/** `system_config.yaml` (`file`) parsed to strip it; throws a config error naming the first problem. */
export function parseForSnapshot(text: string, file: string): ReturnType<typeof parseDocument> {
  const doc = parseYamlDocument(text, file, { maxNodes: YAML_CONFIG_MAX_NODES });
  if (doc.errors.length > 0) {
    throw new PenguinError(
      "config",
      `Cannot snapshot "${file}": it is not valid YAML (${doc.errors[0]!.message.split("\n")[0]})`,
    );
  }
  return doc;
}

/** `system_config.yaml` text with every MCP `env` and header value emptied. */
export function withoutMcpSecrets(text: string, file: string): StrippedConfig {
  const doc = parseForSnapshot(text, file);
  const servers = doc.getIn(["tools", "mcpServers"]);
  const removed: string[] = [];
  const values: string[] = [];
  if (isSeq(servers)) {
    servers.items.forEach((entry, i) => {
      if (!isMap(entry)) return;
      const name = entry.get("name");
      const label = typeof name === "string" ? name : `#${i}`;
      const config = entry.get("config");
      if (!isMap(config)) return;
      for (const field of ["env", "headers"]) {
        let map = config.get(field, true) as unknown;
        if (isAlias(map)) map = map.resolve(doc);
        if (!isMap(map)) continue;
        for (const pair of (map as YAMLMap).items) {
          const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
          const v = isScalar(pair.value) ? pair.value.value : undefined;
          if (typeof v === "string" && v !== "") values.push(v);
          if (isScalar(pair.value)) pair.value.value = "";
          else pair.value = doc.createNode("");
          removed.push(`${label}.${key}`);
        }
      }
      removed.push(...withoutInlineSecrets(doc, config, label, values));
    });
  }
  const out = removed.length > 0 ? doc.toString() : text;
  const left = values.find((v) => v.length >= 4 && out.includes(v));
  if (left !== undefined) {
    throw new PenguinError(
      "runtime",
      `Cannot snapshot "${file}": an MCP server's env, header, URL or argument secret is still in ` +
        `it after ` +
        `removing the values (written twice, or through an alias); write each value once`,
    );
  }
  return { text: out, removed };
}

/** Empties the credentials of `config.url` and `config.args` in place; their labels, values pushed on `values`. */
function withoutInlineSecrets(
  doc: ReturnType<typeof parseDocument>,
  config: YAMLMap,
  label: string,
  values: string[],
): string[] {
  const removed: string[] = [];
  const url = config.get("url", true) as unknown;
  if (isScalar(url) && typeof url.value === "string") {
    const found = urlSecretParts(url.value);
    if (found.length > 0) {
      values.push(...found.filter((s) => s.mask).map((s) => s.value));
      removed.push(...new Set(found.map((s) => `${label}.${s.where}`)));
      url.value = urlOrigin(url.value);
      url.comment = URL_LEFT_OUT;
    }
  }
  let args = config.get("args", true) as unknown;
  if (isAlias(args)) args = args.resolve(doc);
  if (isSeq(args)) {
    const items = args.items.map((i) => isScalar(i) ? String(i.value) : "");
    const cwd = config.get("cwd");
    const found = argSecrets(items, typeof cwd === "string" ? cwd : undefined);
    if (found.length > 0) {
      const clean = argsWithoutSecrets(items, typeof cwd === "string" ? cwd : undefined);
      for (const s of found) {
        const node = doc.createNode(clean[s.index]);
        node.comment = ARG_LEFT_OUT;
        args.items[s.index] = node;
        if (s.mask) values.push(s.value);
        if (!removed.includes(`${label}.${s.where}`)) removed.push(`${label}.${s.where}`);
      }
    }
  }
  return removed;
}

/** `s` quoted for a POSIX shell. */
function quoted(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** A server of a snapshot whose URL or arguments were left out, and the command that sets them again. */
export interface ServerNeedingUrl {
  /** The server's name. */
  name: string;
  /**
   * `penguin mcp add '<name>' --url 'scheme://host[:port]/…' [--sse] [--header 'K: …']…`,
   * or `penguin mcp add '<name>' [--env 'K=…']… -- '<command>' '<arg>'…` (a left-out argument as
   * `'…'`), every word shell-quoted.
   */
  command: string;
}

/** The names of map `field` of `config`. */
function keysOf(config: YAMLMap, field: string): string[] {
  const map = config.get(field);
  return isMap(map) ? map.items.map((p) => String(isScalar(p.key) ? p.key.value : p.key)) : [];
}

/** The words of the `penguin mcp add` line completing remote server `config`, when its URL was cut. */
function urlLine(config: YAMLMap): string[] | undefined {
  const url = config.get("url", true);
  if (!isScalar(url) || typeof url.value !== "string" || url.comment !== URL_LEFT_OUT) return;
  return [
    "--url",
    quoted(`${url.value}/…`),
    ...(config.get("transport") === "sse" ? ["--sse"] : []),
    ...keysOf(config, "headers").map((h) => `--header ${quoted(`${h}: …`)}`),
  ];
}

/** The words of the `penguin mcp add` line completing stdio server `config`, when an argument was left out. */
function argsLine(config: YAMLMap): string[] | undefined {
  const command = config.get("command");
  const args = config.get("args", true);
  if (typeof command !== "string" || !isSeq(args)) return;
  const items = args.items.map((i) =>
    isScalar(i) ? { value: String(i.value ?? ""), marked: i.comment === ARG_LEFT_OUT } : undefined
  );
  if (!items.some((i) => i?.marked)) return;
  return [
    ...keysOf(config, "env").map((k) => `--env ${quoted(`${k}=…`)}`),
    "--",
    quoted(command),
    ...items.map((i) => quoted(i === undefined ? "…" : i.marked ? elided(i.value) : i.value)),
  ];
}

/**
 * The servers of snapshot configuration `text` marked by
 * {@linkcode withoutMcpSecrets} as needing their URL ({@linkcode URL_LEFT_OUT})
 * or arguments ({@linkcode ARG_LEFT_OUT}), each with the `penguin mcp add`
 * line to complete it, every word shell-quoted (the names come from the
 * snapshot's author); none when the text does not parse.
 */
export function serversNeedingUrl(text: string): ServerNeedingUrl[] {
  const doc = parseYamlDocument(text, "system_config.yaml", {
    maxNodes: YAML_CONFIG_MAX_NODES,
  });
  const servers = doc.getIn(["tools", "mcpServers"]);
  if (doc.errors.length > 0 || !isSeq(servers)) return [];
  const out: ServerNeedingUrl[] = [];
  for (const entry of servers.items) {
    if (!isMap(entry)) continue;
    const name = entry.get("name");
    const config = entry.get("config");
    if (typeof name !== "string" || !isMap(config)) continue;
    const rest = urlLine(config) ?? argsLine(config);
    if (rest === undefined) continue;
    out.push({ name, command: ["penguin mcp add", quoted(name), ...rest].join(" ") });
  }
  return out;
}
