/**
 * Flag parsing over `node:util` `parseArgs`, with errors a user can act on.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { PenguinError } from "../protocol/errors.ts";
import { didYouMeanText } from "./suggest.ts";

/** Flag declarations: `{ "model-id": { type: "string" } }`. */
export type FlagSpec = Record<
  string,
  { type: "string" | "boolean"; short?: string; multiple?: boolean }
>;

/** Parsed flags and positionals. */
export interface Parsed {
  /** Flag values by long name. */
  values: Record<string, string | boolean | string[] | undefined>;
  /** Positional arguments. */
  positionals: string[];
}

/**
 * Parse `args` against `spec`. Unknown flags (with the nearest known one as a
 * "did you mean"), missing values and stray positionals (when
 * `maxPositionals` is given) throw a usage error naming the command, so the
 * CLI prints it with the command's help hint.
 */
export function parseFlags(
  command: string,
  args: string[],
  spec: FlagSpec,
  maxPositionals?: number,
): Parsed {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { ...spec, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    const first = msg.split("\n")[0]!.replace(/\. To specify .*$/, "").replace(/\.$/, "");
    const dash = msg.match(/use '(--[\w-]+)=-XYZ'/);
    let hint = dash ? ` (write ${dash[1]}=<value> for a value starting with "-")` : "";
    const unknown = first.match(/^Unknown option '(--[^'=]+)/);
    if (unknown) {
      const known = [...Object.keys(spec), "help"].map((k) => `--${k}`);
      hint = didYouMeanText(unknown[1]!, known, (s) => s);
    }
    throw new PenguinError("usage", `${command}: ${first}${hint}`);
  }
  if (maxPositionals !== undefined && parsed.positionals.length > maxPositionals) {
    const extra = parsed.positionals.slice(maxPositionals).map((p) => JSON.stringify(p)).join(" ");
    throw new PenguinError("usage", `${command}: unexpected argument(s) ${extra}`);
  }
  return { values: parsed.values as Parsed["values"], positionals: parsed.positionals };
}

/** Read a string flag. */
export function str(p: Parsed, name: string): string | undefined {
  const v = p.values[name];
  return typeof v === "string" ? v : undefined;
}

/** Read a boolean flag (false when absent). */
export function bool(p: Parsed, name: string): boolean {
  return p.values[name] === true;
}

/** Read a string flag that must be present. */
export function required(command: string, p: Parsed, name: string): string {
  const v = str(p, name);
  if (v === undefined || v === "") {
    throw new PenguinError("usage", `${command}: --${name} is required`);
  }
  return v;
}

/** Read a flag that must be a positive integer (when present). */
export function positiveInt(command: string, p: Parsed, name: string): number | undefined {
  const v = str(p, name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) <= 0) {
    throw new PenguinError(
      "usage",
      `${command}: --${name} must be a positive integer, got ${JSON.stringify(v)}`,
    );
  }
  return Number(v);
}

/** Read a flag that must be a non-negative number (when present). */
export function nonNegativeNumber(command: string, p: Parsed, name: string): number | undefined {
  const v = str(p, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n) || n < 0) {
    throw new PenguinError(
      "usage",
      `${command}: --${name} must be a non-negative number, got ${JSON.stringify(v)}`,
    );
  }
  return n;
}
