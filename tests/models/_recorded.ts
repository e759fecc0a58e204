/**
 * The kit of the per-provider tests over recorded fixtures: one provider's
 * directory of recordings, each loaded into deltas and translated messages,
 * the checks every recording must pass, and small expectation builders.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { CompleteMessage } from "../../lib/protocol/types.ts";
import type { TranslatorState } from "../../lib/models/translate.ts";
import type { WireDelta, WireModule } from "../../lib/models/wire.ts";
import { parseSse, translateDeltas } from "./_support.ts";

/** A JSON object of a recording. */
export type Json = Record<string, unknown>;

/** One recorded fixture, parsed and translated. */
export interface Parsed {
  deltas: WireDelta[];
  messages: CompleteMessage[];
  state: TranslatorState;
  raw: string;
}

/** One provider's recordings. */
export interface ProviderFixtures {
  /** The protocol module that reads them. */
  mod: WireModule;
  /** Their directory. */
  dir: URL;
  /** Their file names, sorted. */
  names: string[];
  /** The text of recording `name`. */
  text(name: string): string;
  /** Recording `name` parsed (`.sse` as a stream, anything else as a body) and translated. */
  load(name: string): Parsed;
  /** Recording `name` as its text only, with no deltas or messages (an error body's). */
  rawOnly(name: string): Parsed;
}

/** The recordings of `provider` (a directory of shared/fixtures/providers), read with `mod`. */
export function providerFixtures(provider: string, mod: WireModule): ProviderFixtures {
  const dir = new URL(`../../../shared/fixtures/providers/${provider}/`, import.meta.url);
  const names = [...Deno.readDirSync(dir)].filter((e) => e.isFile).map((e) => e.name).sort();
  const text = (name: string) => Deno.readTextFileSync(new URL(name, dir));
  const load = (name: string): Parsed => {
    const raw = text(name);
    const deltas = name.endsWith(".sse") ? parseSse(mod, raw) : mod.parseBody(JSON.parse(raw));
    return { deltas, raw, ...translateDeltas(deltas) };
  };
  const rawOnly = (name: string): Parsed => ({
    deltas: [],
    messages: [],
    state: { content: false },
    raw: text(name),
  });
  return { mod, dir, names, text, load, rawOnly };
}

/** The messages of `type` among `msgs`. */
export const of = <T extends CompleteMessage["type"]>(
  msgs: CompleteMessage[],
  type: T,
): Extract<CompleteMessage, { type: T }>[] =>
  msgs.filter((m) => m.type === type) as Extract<CompleteMessage, { type: T }>[];
/** A finish delta. */
export const fin = (reason: string, raw: string): Json => ({ type: "finish", reason, raw });
/** A usage delta. */
export const use = (cache_read: number, cache_write: number, output: number): Json => ({
  type: "usage",
  cache_read,
  cache_write,
  output,
});
/** The last usage delta. */
export const usageOf = (d: WireDelta[]): WireDelta | undefined =>
  d.filter((x) => x.type === "usage").at(-1);

/**
 * What every recording `name` must hold: an error body parses to a message
 * and a code (then `undefined`); a stream or body ends in a finish or error,
 * with JSON tool arguments and whole, non-negative usage (then it, parsed).
 */
export function assertSaneFixture(f: ProviderFixtures, name: string): Parsed | undefined {
  if (name.endsWith(".json") && name.startsWith("error-")) {
    const err = f.mod.parseError(400, f.text(name));
    assert.ok(err.message.length > 0);
    assert.equal(typeof err.code, "string");
    return undefined;
  }
  const p = f.load(name);
  assert.ok(p.deltas.some((d) => d.type === "finish" || d.type === "error"), "finish or error");
  for (const call of of(p.messages, "tool_call")) {
    assert.equal(typeof JSON.parse(call.arguments), "object");
  }
  for (const d of p.deltas) {
    if (d.type !== "usage") continue;
    for (const n of [d.cache_read, d.cache_write, d.output]) {
      assert.ok(Number.isInteger(n) && n >= 0);
    }
  }
  return p;
}
