/**
 * `penguin config …` commands: the project model table
 * (`config model add|list|default|vision|remove`) and, from
 * `config_vault.ts`, the agent vault (`config vault set|list|remove`).
 *
 * @module
 */
import { findPreset, findProviderGroup, presetsOf } from "../../models/catalog.ts";
import { diskClientType, groupClientType, routeClientType } from "../../models/client_type.ts";
import { PenguinError } from "../../protocol/errors.ts";
import { nearest } from "../suggest.ts";
import {
  describeConfiguredPairs,
  findModel,
  loadProjectConfig,
  type ModelEntry,
  type ModelInput,
  type ModelRef,
  type ProjectConfig,
  removeModel,
  samePair,
  saveProjectConfig,
  setDefaultModel,
  setVisionModel,
  upsertModel,
} from "../../state/project_config.ts";
import {
  bool,
  type Flag,
  flagHelp,
  flagValue,
  nonNegative,
  type Parsed,
  parseDeclared,
  positiveInteger,
} from "../args.ts";
import { JSON_OUTPUT, MODEL_ID, PROJECT_ID, PROVIDER } from "./_common_flags.ts";
import { type Command, type CommandContext, commandGroup } from "../command.ts";
import {
  exclusiveBool,
  formatMarkedTable,
  maskSecret,
  PAIR_FLAG_HELP,
  PAIR_FLAGS,
  pairFlags,
  pairText,
  printHelp,
  projectTarget,
} from "./_config_common.ts";
import { vaultCommands } from "./config_vault.ts";

// ---------------------------------------------------------------------------
// config model add

/** A client type penguin can route, in the spelling PenguinHarness reads (`ant-messages`, …). */
function parseClientType(raw: string, label: string): string {
  if (routeClientType(raw)) return diskClientType(raw);
  throw new PenguinError(
    "usage",
    `${label} must be one of ${
      CLIENT_TYPE_NAMES.join(", ")
    } or a PenguinHarness routing key (e.g. kimi-k2.5, glm-5), got ${JSON.stringify(raw)}`,
  );
}

const API_KEY: Flag = {
  name: "api-key",
  type: "string",
  value: "<key>",
  help: 'store an API key in the entry ("" removes it)',
};
const BASE_URL: Flag = {
  name: "base-url",
  type: "string",
  value: "<url>",
  help: 'override the group\'s base URL ("" removes it)',
  parse: parseBaseUrl,
};

/** An http(s) URL, or "" (remove the override); anything else is a usage error naming `label`. */
function parseBaseUrl(raw: string, label: string): string {
  if (raw === "") return raw;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new PenguinError(
      "usage",
      `${label} must be an http:// or https:// URL such as https://api.example.com/v1, got ${
        JSON.stringify(raw)
      }`,
    );
  }
  return raw;
}
const CONTEXT_WINDOW: Flag<number> = {
  name: "context-window",
  type: "string",
  value: "<n>",
  help: "context window in tokens",
  parse: positiveInteger,
};
const MAX_TOKENS: Flag<number> = {
  name: "max-tokens",
  type: "string",
  value: "<n>",
  help: "output ceiling per request (> 0)",
  parse: positiveInteger,
};
/** Client types offered in help, in PenguinHarness's spelling. */
const CLIENT_TYPE_NAMES = [
  "openai-chat",
  "openai-responses",
  "ant-messages",
  "minimax-m3",
  "gemini",
];

const CLIENT_TYPE: Flag<string> = {
  name: "client-type",
  type: "string",
  value: "<t>",
  help: `wire protocol: ${CLIENT_TYPE_NAMES.slice(0, 2).join(", ")},\n${
    CLIENT_TYPE_NAMES.slice(2).join(", ")
  }, or a\nPenguinHarness routing key (kimi-k2.5, glm-5, …)`,
  parse: parseClientType,
};
const price = (name: string, what: string): Flag<number> => ({
  name,
  type: "string",
  value: "<usd>",
  help: `USD per 1M ${what}`,
  parse: nonNegative,
});
const PRICE_FLAGS: readonly [Flag<number>, "cache_read" | "cache_write" | "output"][] = [
  [price("price-cache-read", "cached input tokens"), "cache_read"],
  [price("price-cache-write", "uncached input tokens"), "cache_write"],
  [price("price-output", "output tokens"), "output"],
];

/** The flags of `config model add`, in help order (each `--no-x` listed with its `--x`). */
const ADD_FLAGS: readonly Flag<unknown>[] = [
  { ...PROVIDER, help: "provider group, e.g. deepseek, openrouter, ollama, custom" },
  { ...MODEL_ID, help: "model id, sent upstream verbatim" },
  API_KEY,
  BASE_URL,
  CONTEXT_WINDOW,
  MAX_TOKENS,
  CLIENT_TYPE,
  {
    name: "vision",
    type: "boolean",
    label: "--vision, --no-vision",
    help: "the model accepts images (the default) or not",
  },
  { name: "no-vision", type: "boolean", hidden: true, help: "the model accepts no images" },
  {
    name: "fast-mode",
    type: "boolean",
    label: "--fast-mode, --no-fast-mode",
    help: "request the provider's fast tier, or stop doing so",
  },
  { name: "no-fast-mode", type: "boolean", hidden: true, help: "stop requesting the fast tier" },
  ...PRICE_FLAGS.map(([f]) => f),
  { name: "set-default", type: "boolean", help: "also make this the project's default model" },
  PROJECT_ID,
];

const ADD_HELP = `Usage: penguin config model add --provider <group> --model-id <id> [flags]

Add a model to the project's model table (.project_config.toml), or update
the entry with the same (provider, model_id) pair: flags not given keep their
current values. A new entry for a catalog preset (see "penguin models list")
starts with the preset's context window, vision flag and prices. The provider
is never inferred: --provider and --model-id are both required.

Keys: without --api-key, requests use the provider group's own environment
variable (e.g. DEEPSEEK_API_KEY); one group's key is never sent to another.

Flags:
${flagHelp(ADD_FLAGS, 32)}

Example:
  penguin config model add --provider deepseek --model-id deepseek-v4-flash --set-default
`;

/** The entry fields the flags ask for. */
function addInput(cmd: string, p: Parsed, ref: ModelRef): ModelInput {
  const input: ModelInput = { ...ref };
  const apiKey = flagValue(p, API_KEY);
  if (apiKey !== undefined) input.api_key = apiKey;
  const baseUrl = flagValue(p, BASE_URL);
  if (baseUrl !== undefined) input.base_url = baseUrl.replace(/\/+$/, "");
  const cw = flagValue(p, CONTEXT_WINDOW);
  if (cw !== undefined) input.context_window = cw;
  const mt = flagValue(p, MAX_TOKENS);
  if (mt !== undefined) input.max_tokens = mt;
  const ct = flagValue(p, CLIENT_TYPE);
  if (ct !== undefined) input.client_type = ct;
  const vision = exclusiveBool(cmd, p, "vision", "no-vision");
  if (vision !== undefined) input.vision = vision;
  const fast = exclusiveBool(cmd, p, "fast-mode", "no-fast-mode");
  if (fast !== undefined) input.fast_mode = fast;
  const pricing: NonNullable<ModelInput["pricing"]> = {};
  for (const [flag, key] of PRICE_FLAGS) {
    const v = flagValue(p, flag);
    if (v !== undefined) pricing[key] = v;
  }
  if (Object.keys(pricing).length > 0) input.pricing = pricing;
  return input;
}

/** Fill a NEW entry's unspecified fields from the catalog preset and group. */
export function seedNewEntry(input: ModelInput, ctx: CommandContext): void {
  const preset = findPreset(input.provider, input.model_id);
  const group = findProviderGroup(input.provider);
  if (preset) {
    input.context_window ??= preset.context_window;
    if (input.vision === undefined && !preset.vision) input.vision = false;
    input.pricing = { ...preset.pricing, ...input.pricing };
    if (preset.client_type) input.client_type ??= preset.client_type;
  }
  const pinned = groupClientType(input.provider);
  if (pinned) input.client_type ??= pinned;
  if (!preset && group) warnNotInCatalog(input.model_id, group.id, ctx);
  if (!group || group.kind === "custom") {
    input.client_type ??= "openai-chat";
    if (!input.base_url) {
      const why = group
        ? `provider "custom" has no default base URL`
        : `provider "${input.provider}" is not in the catalog, so it has no default base URL`;
      ctx.io.err(`warning: ${why}; set one with --base-url before using this model\n`);
    }
  }
}

/**
 * A model id the catalog does not list for a provider that has presets is
 * likely a typo: a warning names the nearest ids. It is still added (a custom
 * deployment may use any id).
 */
function warnNotInCatalog(modelId: string, provider: string, ctx: CommandContext): void {
  const ids = presetsOf(provider).map((p) => p.model_id);
  if (ids.length === 0) return;
  const close = nearest(modelId, ids);
  const hint = close.length > 0
    ? `did you mean ${close.join(", ")}?`
    : `its models are listed by "penguin models list".`;
  ctx.io.err(
    `warning: model id "${modelId}" is not in the catalog for provider "${provider}"; ${hint} ` +
      `It is added as given (a custom deployment may use any id).\n`,
  );
}

async function addCommand(args: string[], ctx: CommandContext): Promise<number> {
  const cmd = "config model add";
  const p = parseDeclared(cmd, args, ADD_FLAGS, 0);
  if (bool(p, "help")) return printHelp(ctx, ADD_HELP);
  const ref = pairFlags(cmd, p);
  const input = addInput(cmd, p, ref);
  const { path } = projectTarget(ctx, p);
  const cfg = await loadProjectConfig(path);
  if (!findModel(cfg, ref)) seedNewEntry(input, ctx);
  const { created } = upsertModel(cfg, input);
  // The first model of a project with no default becomes the default: the next run needs one.
  const implicitDefault = !bool(p, "set-default") && !cfg.default_model;
  if (bool(p, "set-default") || implicitDefault) cfg.default_model = { ...ref };
  if (input.fast_mode === true && !findProviderGroup(ref.provider)?.fast_mode) {
    ctx.io.err(
      `warning: provider "${ref.provider}" has no fast tier penguin knows of; fast_mode is saved, ` +
        `but requests may be rejected\n`,
    );
  }
  await saveProjectConfig(path, cfg);
  ctx.io.out(
    `${created ? "Added" : "Updated"} model (${pairText(ref)}). ` +
      `Default model: ${pairText(cfg.default_model)}` +
      `${implicitDefault ? " (there was none, so this model became the default)" : ""}\n`,
  );
  return 0;
}

// ---------------------------------------------------------------------------
// config model list

const LIST_FLAGS: readonly Flag<unknown>[] = [
  {
    ...JSON_OUTPUT,
    help: 'print JSON: {"path", "default_model", "vision_model", "models": [...]}\n' +
      '(api_key masked; each model has "default" and "vision_model" flags)',
  },
  PROJECT_ID,
];

const LIST_HELP = `Usage: penguin config model list [--json] [--project-id <id>]

List the project's configured models, column-aligned. "* " marks the default
model; VISION is Y or -; API keys are masked ("-" none, "***" up to 12
characters, else "****" and the last 4). Empty cells are "-".

Flags:
${flagHelp(LIST_FLAGS, 23)}
`;

function listRow(m: ModelEntry): string[] {
  return [
    m.provider,
    m.model_id,
    m.context_window !== undefined ? String(m.context_window) : "-",
    m.max_tokens !== undefined ? String(m.max_tokens) : "-",
    m.vision === false ? "-" : "Y",
    m.fast_mode ? "Y" : "-",
    m.client_type ?? "-",
    m.base_url ?? "-",
    maskSecret(m.api_key),
  ];
}

function isPair(ref: ModelRef | undefined, m: ModelRef): boolean {
  return ref !== undefined && samePair(ref, m);
}

function listJson(path: string, cfg: ProjectConfig): string {
  const models = cfg.models.map((m) => {
    const { extra: _extra, ...fields } = m;
    return {
      ...fields,
      api_key: maskSecret(m.api_key),
      default: isPair(cfg.default_model, m),
      vision_model: isPair(cfg.vision_model, m),
    };
  });
  const out = {
    path,
    default_model: cfg.default_model ?? null,
    vision_model: cfg.vision_model ?? null,
    models,
  };
  return JSON.stringify(out, null, 2) + "\n";
}

/** A stderr note per entry whose client_type penguin cannot route: listed, usable only after a change. */
function noteUnroutable(cfg: ProjectConfig, ctx: CommandContext): void {
  for (const m of cfg.models) {
    if (m.client_type === undefined || routeClientType(m.client_type)) continue;
    ctx.io.err(
      `note: model (${pairText(m)}) has client_type ${JSON.stringify(m.client_type)}, ` +
        `which penguin cannot route; it stays in the file but cannot be used by penguin\n`,
    );
  }
}

async function listCommand(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("config model list", args, LIST_FLAGS, 0);
  if (bool(p, "help")) return printHelp(ctx, LIST_HELP);
  const { path } = projectTarget(ctx, p);
  const cfg = await loadProjectConfig(path);
  noteUnroutable(cfg, ctx);
  if (bool(p, "json")) {
    ctx.io.out(listJson(path, cfg));
    return 0;
  }
  if (cfg.models.length === 0) {
    ctx.io.out(
      `No models configured in ${JSON.stringify(path)}.\n` +
        `Add one with: penguin config model add --provider <group> --model-id <id>\n` +
        `("penguin models list" shows the catalog.)\n`,
    );
    return 0;
  }
  const header = [
    "PROVIDER",
    "MODEL_ID",
    "CONTEXT",
    "MAX_TOKENS",
    "VISION",
    "FAST",
    "CLIENT_TYPE",
    "BASE_URL",
    "API_KEY",
  ];
  const marked = cfg.models.map((m) => isPair(cfg.default_model, m));
  ctx.io.out(formatMarkedTable(header, cfg.models.map(listRow), marked));
  if (cfg.vision_model) ctx.io.out(`Vision model: ${pairText(cfg.vision_model)}\n`);
  return 0;
}

// ---------------------------------------------------------------------------
// config model default | vision | remove

const DEFAULT_HELP =
  `Usage: penguin config model default --provider <group> --model-id <id> [--project-id <id>]

Make a configured model the project's default, used when a command is given
no --provider/--model-id pair. The pair must already be in the model table.

Flags:
${PAIR_FLAG_HELP}
`;

const VISION_HELP =
  `Usage: penguin config model vision --provider <group> --model-id <id> [--project-id <id>]

Make a configured model the project's vision model: text-only models use it
to describe images. The pair must be in the model table and must not be
marked vision = false.

Flags:
${PAIR_FLAG_HELP}
`;

const REMOVE_HELP =
  `Usage: penguin config model remove --provider <group> --model-id <id> [--project-id <id>]

Remove the entry with exactly this pair. If it was the default or the vision
model, that setting is cleared too. A pair that is not configured is an
error (exit code 1).

Flags:
${PAIR_FLAG_HELP}
`;

/** `config model <word>`: `set` the pair given by the flags, then say `<label>: <pair>`. */
function pairSettingCommand(
  word: string,
  help: string,
  set: (path: string, ref: ModelRef) => Promise<unknown>,
  label: string,
): Command["run"] {
  const cmd = `config model ${word}`;
  return async (args, ctx) => {
    const p = parseDeclared(cmd, args, PAIR_FLAGS, 0);
    if (bool(p, "help")) return printHelp(ctx, help);
    const ref = pairFlags(cmd, p);
    await set(projectTarget(ctx, p).path, ref);
    ctx.io.out(`${label}: ${pairText(ref)}\n`);
    return 0;
  };
}

const defaultCommand = pairSettingCommand(
  "default",
  DEFAULT_HELP,
  setDefaultModel,
  "Default model",
);
const visionCommand = pairSettingCommand("vision", VISION_HELP, setVisionModel, "Vision model");

async function removeCommand(args: string[], ctx: CommandContext): Promise<number> {
  const cmd = "config model remove";
  const p = parseDeclared(cmd, args, PAIR_FLAGS, 0);
  if (bool(p, "help")) return printHelp(ctx, REMOVE_HELP);
  const ref = pairFlags(cmd, p);
  const { path } = projectTarget(ctx, p);
  const r = await removeModel(path, ref);
  if (!r.removed) {
    const cfg = await loadProjectConfig(path);
    throw new PenguinError(
      "not_found",
      `${cmd}: no model (${pairText(ref)}) in ${JSON.stringify(path)}; ${
        describeConfiguredPairs(cfg)
      }`,
    );
  }
  let note = "";
  if (r.clearedDefault) note += " Default model cleared.";
  if (r.clearedVision) note += " Vision model cleared.";
  ctx.io.out(`Removed model (${pairText(ref)}).${note}\n`);
  return 0;
}

/** The config commands. */
export const configCommands: Command[] = commandGroup(["config", "model"], [
  ["add", "add or update a model in the project's model table", ADD_HELP, addCommand],
  ["list", "list the project's configured models", LIST_HELP, listCommand],
  ["default", "set the project's default model", DEFAULT_HELP, defaultCommand],
  [
    "vision",
    "set the model that describes images for text-only models",
    VISION_HELP,
    visionCommand,
  ],
  ["remove", "remove a model from the project's model table", REMOVE_HELP, removeCommand],
]).concat(vaultCommands);
