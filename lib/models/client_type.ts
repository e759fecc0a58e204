/**
 * `client_type` routing: which wire protocol a model entry's `client_type`
 * selects, following the rule PenguinHarness's gateway uses, and the spelling
 * a new entry stores on disk so both programs can read it.
 *
 * Rule: a protocol id (`openai-chat`, `openai-responses`, `ant-messages`,
 * `minimax-m3`, legacy `openai`, and penguin's own `anthropic-messages` and
 * `gemini`) picks that protocol. Any other value is a routing key matched by
 * substring, lower-cased, in a fixed order; each match names a vendor, and
 * the entry speaks that vendor's protocol as penguin's catalog group for the
 * vendor does. No match: penguin cannot route the entry.
 *
 * @module
 */
import { findProviderGroup } from "./catalog.ts";
import type { WireProtocol } from "./wire.ts";

/** Protocol ids matched whole (after trim and lower-casing). */
const EXACT: Readonly<Record<string, WireProtocol>> = {
  "openai-chat": "openai-chat",
  "openai-responses": "openai-responses",
  "openai": "openai-chat",
  "ant-messages": "anthropic-messages",
  "anthropic-messages": "anthropic-messages",
  "gemini": "gemini",
};

/** Routing keys in match order: a test on the lower-cased value, and the catalog group it routes to. */
const ROUTES: readonly { test: (v: string) => boolean; group: string }[] = [
  { test: (v) => v.includes("gemini-3") || v.includes("gemini-embedding"), group: "google" },
  { test: (v) => v.includes("claude") && /4-6|4-7|4-8|-5/.test(v), group: "anthropic" },
  { test: (v) => /gpt-5\.[456]/.test(v), group: "openai" },
  { test: (v) => v.includes("glm-5"), group: "zhipu" },
  { test: (v) => /kimi-k(?:3|2\.5|2\.6)/.test(v), group: "moonshot" },
  { test: (v) => v === "minimax-m3", group: "minimax" },
  { test: (v) => v.includes("deepseek-v4"), group: "deepseek" },
  { test: (v) => v.includes("ant-messages"), group: "anthropic" },
  { test: (v) => v.includes("openai"), group: "custom" },
];

/** The wire protocol `clientType` routes to, or undefined when penguin cannot route it. */
export function routeClientType(clientType: string): WireProtocol | undefined {
  const v = clientType.trim().toLowerCase();
  if (v === "") return undefined;
  const exact = EXACT[v];
  if (exact) return exact;
  const route = ROUTES.find((r) => r.test(v));
  return route ? findProviderGroup(route.group)?.protocol : undefined;
}

/** Spellings penguin used to write, and the one PenguinHarness reads for the same protocol. */
const DISK_SPELLING: Readonly<Record<string, string>> = {
  "openai": "openai-chat",
  "anthropic-messages": "ant-messages",
};

/**
 * The spelling to store for a `client_type` given on the command line:
 * PenguinHarness's (`ant-messages`, `openai-chat`) for penguin's older
 * names, else the value as given (trimmed).
 */
export function diskClientType(clientType: string): string {
  const v = clientType.trim();
  return DISK_SPELLING[v.toLowerCase()] ?? v;
}

/** The error text for an entry whose `client_type` penguin cannot route. */
export function unroutableClientTypeMessage(pair: string, clientType: string): string {
  return `Model ${pair} has client_type ${
    JSON.stringify(clientType)
  }, which penguin cannot route to a wire protocol ` +
    `(it knows openai-chat, openai-responses, ant-messages, minimax-m3, gemini, and the routing keys ` +
    `gemini-3…, claude-…4-6/4-7/4-8/-5, gpt-5.4/5.5/5.6, glm-5…, kimi-k3/k2.5/k2.6, deepseek-v4…, ` +
    `anything containing "openai"); pick another model or change its client_type`;
}

/** Groups whose entries PenguinHarness pins to a vendor client type (its seeded catalog does). */
const GROUP_CLIENT_TYPE: Readonly<Record<string, string>> = { "minimax": "minimax-m3" };

/** The `client_type` a new entry of provider group `group` stores, if PenguinHarness pins one. */
export function groupClientType(group: string): string | undefined {
  return GROUP_CLIENT_TYPE[group];
}
