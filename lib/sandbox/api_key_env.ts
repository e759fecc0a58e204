/**
 * The `*_API_KEY` variables of penguin's environment, every one of them.
 *
 * penguin's permission set lets `Deno.env` read only the variables
 * `deno.json` names, and names there match only by prefix: a
 * `MISTRAL_API_KEY` the user exported was invisible to penguin, so neither
 * masked in tool outputs nor in the trace (attack round 24 perms B3; the
 * tests, run with `-A`, saw every variable). Where `Deno.env` cannot show
 * them all, the variables penguin was started with are read from `/proc`.
 *
 * @module
 */
import { procFacts } from "./_proc_facts.ts";

const KEY_ENV = /_API_KEY$/;

/** Every `*_API_KEY` variable: `Deno.env`'s value where it shows one, else the one penguin started with. */
export async function apiKeyEnv(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  if (Deno.permissions.querySync({ name: "env" }).state !== "granted") {
    Object.assign(out, (await procFacts()).apiKeys);
  }
  let env: Record<string, string> = {};
  try {
    env = Deno.env.toObject();
  } catch {
    // no env permission at all: what /proc said
  }
  for (const [name, value] of Object.entries(env)) if (KEY_ENV.test(name)) out[name] = value;
  return out;
}

/** What `Deno.env` shows of penguin's environment, with every `*_API_KEY` variable. */
export async function envWithApiKeys(): Promise<Record<string, string>> {
  let env: Record<string, string> = {};
  try {
    env = Deno.env.toObject();
  } catch {
    // no env permission at all
  }
  return { ...await apiKeyEnv(), ...env };
}
