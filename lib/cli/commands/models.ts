/**
 * `penguin models list`: the catalog's presets together with the project's
 * configured models. (`models test` lives elsewhere.)
 *
 * @module
 */
import {
  findPreset,
  findProviderGroup,
  MODEL_PRESETS,
  PROVIDER_GROUPS,
  type ProviderGroup,
} from "../../models/catalog.ts";
import { PenguinError } from "../../protocol/errors.ts";
import {
  loadProjectConfig,
  type ModelEntry,
  type ProjectConfig,
  samePair,
} from "../../state/project_config.ts";
import { bool, type Flag, flagHelp, parseDeclared, str } from "../args.ts";
import { JSON_OUTPUT, PROJECT_ID, PROVIDER } from "./_common_flags.ts";
import { type Command, type CommandContext, commandGroup } from "../command.ts";
import { didYouMeanText } from "../suggest.ts";
import { formatMarkedTable, maskSecret, printHelp, projectTarget } from "./_config_common.ts";

const LIST_FLAGS: readonly Flag<unknown>[] = [
  { ...PROVIDER, help: "only this provider group" },
  { ...JSON_OUTPUT, help: "print a JSON array of rows" },
  PROJECT_ID,
];

const LIST_HELP = `Usage: penguin models list [--provider <group>] [--json] [--project-id <id>]

List the model catalog (provider presets with context window, vision support
and USD prices per 1M tokens: cached input, uncached input, output) together
with the models configured in the project. CONFIGURED is "yes" for pairs in
the project's model table; "* " marks the default model. A preset must be
added with "penguin config model add" before it can be used.

KEY shows where a configured model's key comes from: the masked inline key,
"$VAR" when the group's own environment variable is set, "not needed" for
local servers, "-" when there is none.

Flags:
${flagHelp(LIST_FLAGS, 23)}

Provider groups:
${wrapWords(PROVIDER_GROUPS.map((g) => g.id).join(", "), 76, "  ")}
`;

/** One listed model. */
interface Row {
  provider: string;
  model_id: string;
  context_window: number | null;
  vision: boolean;
  pricing: { cache_read: number; cache_write: number; output: number } | null;
  in_catalog: boolean;
  configured: boolean;
  default: boolean;
  api_key: string | null;
  key_env: string | null;
  key_env_set: boolean;
}

function keyEnvSet(group: ProviderGroup | undefined): boolean {
  const name = group?.api_key_env;
  return name !== undefined && (Deno.env.get(name) ?? "") !== "";
}

function rowsFor(cfg: ProjectConfig, provider?: string): Row[] {
  const configured = (p: string, m: string) =>
    cfg.models.find((e) => e.provider === p && e.model_id === m);
  const isDefault = (p: string, m: string) =>
    cfg.default_model !== undefined && samePair(cfg.default_model, { provider: p, model_id: m });
  const row = (p: string, m: string, entry: ModelEntry | undefined): Row => {
    const preset = findPreset(p, m);
    const group = findProviderGroup(p);
    const pricing = entry?.pricing ?? preset?.pricing;
    return {
      provider: p,
      model_id: m,
      context_window: entry?.context_window ?? preset?.context_window ?? null,
      vision: entry?.vision ?? preset?.vision ?? true,
      pricing: pricing
        ? {
          cache_read: pricing.cache_read,
          cache_write: pricing.cache_write,
          output: pricing.output,
        }
        : null,
      in_catalog: preset !== undefined,
      configured: entry !== undefined,
      default: isDefault(p, m),
      api_key: entry?.api_key ? maskSecret(entry.api_key) : null,
      key_env: group?.api_key_env ?? null,
      key_env_set: keyEnvSet(group),
    };
  };
  const order = [...PROVIDER_GROUPS.map((g) => g.id)];
  for (const e of cfg.models) if (!order.includes(e.provider)) order.push(e.provider);
  const rows: Row[] = [];
  for (const p of order) {
    if (provider !== undefined && p !== provider) continue;
    for (const preset of MODEL_PRESETS) {
      if (preset.provider === p) rows.push(row(p, preset.model_id, configured(p, preset.model_id)));
    }
    for (const e of cfg.models) {
      if (e.provider === p && !findPreset(p, e.model_id)) rows.push(row(p, e.model_id, e));
    }
  }
  return rows;
}

function keyCell(r: Row): string {
  if (r.api_key) return r.api_key;
  if (r.key_env && r.key_env_set) return `$${r.key_env}`;
  if (findProviderGroup(r.provider)?.key_required === false) return "not needed";
  return "-";
}

function price(n: number | undefined): string {
  return n === undefined ? "-" : String(n);
}

async function listCommand(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("models list", args, LIST_FLAGS, 0);
  if (bool(p, "help")) return printHelp(ctx, LIST_HELP);
  const provider = str(p, "provider");
  const { path } = projectTarget(ctx, p);
  const cfg = await loadProjectConfig(path);
  if (
    provider !== undefined && !findProviderGroup(provider) &&
    !cfg.models.some((m) => m.provider === provider)
  ) {
    throw new PenguinError(
      "not_found",
      `models list: unknown provider group ${JSON.stringify(provider)}; known groups: ${
        PROVIDER_GROUPS.map((g) => g.id).join(", ")
      }${didYouMeanText(provider, PROVIDER_GROUPS.map((g) => g.id))}`,
    );
  }
  const rows = rowsFor(cfg, provider);
  if (bool(p, "json")) {
    ctx.io.out(JSON.stringify(rows, null, 2) + "\n");
    return 0;
  }
  if (rows.length === 0) {
    ctx.io.out(`No models for provider ${provider} in the catalog or the project.\n`);
    return 0;
  }
  const header = [
    "PROVIDER",
    "MODEL_ID",
    "CONTEXT",
    "VISION",
    "CACHE_READ",
    "CACHE_WRITE",
    "OUTPUT",
    "CONFIGURED",
    "KEY",
  ];
  const cells = rows.map((r) => [
    r.provider,
    r.model_id,
    r.context_window === null ? "-" : String(r.context_window),
    r.vision ? "Y" : "-",
    price(r.pricing?.cache_read),
    price(r.pricing?.cache_write),
    price(r.pricing?.output),
    r.configured ? "yes" : "-",
    r.configured ? keyCell(r) : "-",
  ]);
  ctx.io.out(formatMarkedTable(header, cells, rows.map((r) => r.default)));
  ctx.io.out(
    "Prices: USD per 1M tokens (CACHE_READ = cached input, CACHE_WRITE = uncached input).\n",
  );
  return 0;
}

/** The models commands. */
export const modelsCommands: Command[] = commandGroup(["models"], [
  ["list", "list catalog presets and configured models with prices", LIST_HELP, listCommand],
]);

/** `text` broken at spaces into lines of at most `width` characters, each starting with `indent`. */
function wrapWords(text: string, width: number, indent: string): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(indent + line);
  return lines.join("\n");
}
