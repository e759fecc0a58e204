/**
 * Flag parsing over `node:util` `parseArgs`, with errors a user can act on.
 * A command declares each flag once, as a {@linkcode Flag}: its parse spec,
 * its help line ({@linkcode flagHelp}) and its validation
 * ({@linkcode parseDeclared}, {@linkcode flagValue}) all come from that one
 * declaration.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { PenguinError } from "../protocol/errors.ts";
import { didYouMeanText } from "./suggest.ts";

/** The `node:util` form of the declarations: `{ "model-id": { type: "string" } }`. */
type FlagSpec = Record<
  string,
  { type: "string" | "boolean"; short?: string; multiple?: boolean }
>;

/** Parsed flags and positionals. */
export interface Parsed {
  /** Flag values by long name (declared flags with a `parse`: the parsed value). */
  values: Record<string, unknown>;
  /** Positional arguments. */
  positionals: string[];
}

/**
 * Parse `args` against `spec`. Unknown flags (with the nearest known one as a
 * "did you mean"), missing values and stray positionals (when
 * `maxPositionals` is given) throw a usage error naming the command, so the
 * CLI prints it with the command's help hint.
 */
function parseFlags(
  command: string,
  args: string[],
  flags: readonly Flag<unknown>[],
  maxPositionals?: number,
): Parsed {
  const spec = specOf(flags);
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
      throw new UnknownFlagError(`${command}: ${first}${hint}`, flags);
    }
    throw new PenguinError("usage", `${command}: ${first}${hint}`);
  }
  if (maxPositionals !== undefined && parsed.positionals.length > maxPositionals) {
    const extra = parsed.positionals.slice(maxPositionals).map((p) => JSON.stringify(p)).join(" ");
    throw new PenguinError("usage", `${command}: unexpected argument(s) ${extra}`);
  }
  return { values: parsed.values as Parsed["values"], positionals: parsed.positionals };
}

/**
 * The usage error for a flag the command does not declare. It carries the
 * flags the command does declare, so a check can list exactly what a
 * command's parser accepts.
 */
export class UnknownFlagError extends PenguinError {
  /** The flags the command declares. */
  readonly flags: readonly Flag<unknown>[];

  /** Create the error with its `message` and the command's declared `flags`. */
  constructor(message: string, flags: readonly Flag<unknown>[]) {
    super("usage", message);
    this.flags = flags;
  }
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

/** A flag `parse` for positive integers; `label` names the command and flag. */
export function positiveInteger(v: string, label: string): number {
  if (!/^\d+$/.test(v) || Number(v) <= 0) {
    throw new PenguinError(
      "usage",
      `${label} must be a positive integer, got ${JSON.stringify(v)}`,
    );
  }
  return Number(v);
}

/** A flag `parse` for non-negative numbers; `label` names the command and flag. */
export function nonNegative(v: string, label: string): number {
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n) || n < 0) {
    throw new PenguinError(
      "usage",
      `${label} must be a non-negative number, got ${JSON.stringify(v)}`,
    );
  }
  return n;
}

/**
 * One flag, declared once. `T` is the value a command reads back with
 * {@linkcode flagValue}: the string given, or what `parse` made of it.
 */
export interface Flag<T = string> {
  /** Long name without the dashes: `model-id`. */
  name: string;
  /** One-letter alias: `m` for `-m`. */
  short?: string;
  /** `boolean` flags take no value. */
  type: "string" | "boolean";
  /** The value's name in the help: `<text>`, `on|off`, `[session]`. */
  value?: string;
  /** The value may be left out (`--resume` alone, or followed by a flag): it is then "". */
  optionalValue?: boolean;
  /** The flag may be given more than once (values are collected in order). */
  multiple?: boolean;
  /** Help text; each "\n" starts a continuation line under the first. */
  help: string;
  /** The help's name column when it is not `[-s, ]--name[ value]` (e.g. `-o <file>`). */
  label?: string;
  /** Accepted but not listed in the help (an alias such as `--output` for `-o`). */
  hidden?: boolean;
  /**
   * Validate and convert a given value. Throw a usage error starting with
   * `label` (`run: --thinking`) when the value is not accepted.
   */
  parse?: (raw: string, label: string) => T;
  /**
   * The values `parse` accepts, when they are a fixed list: a refused value
   * gets the nearest one as a "did you mean".
   */
  choices?: readonly string[];
}

/** The `node:util` spec of `flags`. */
function specOf(flags: readonly Flag<unknown>[]): FlagSpec {
  const spec: FlagSpec = {};
  for (const f of flags) {
    spec[f.name] = {
      type: f.type,
      ...(f.short !== undefined ? { short: f.short } : {}),
      ...(f.multiple ? { multiple: true } : {}),
    };
  }
  return spec;
}

/** Give a bare optional-value flag (last, or followed by another flag) an empty value. */
function fillOptionalValues(args: string[], flags: readonly Flag<unknown>[]): string[] {
  const optional = new Set(flags.filter((f) => f.optionalValue).map((f) => `--${f.name}`));
  if (optional.size === 0) return args;
  const end = args.indexOf("--");
  return args.map((a, i) => {
    if (!optional.has(a) || (end !== -1 && i > end)) return a;
    const next = args[i + 1];
    return next === undefined || next.startsWith("-") ? `${a}=` : a;
  });
}

/**
 * Parse `args` against declared `flags` (unknown flags, missing values and
 * stray positionals are usage errors, as described at `parseFlags`), then
 * run each given flag's `parse`, so a bad value is a usage error naming the
 * command and the flag before the command does anything.
 */
export function parseDeclared(
  command: string,
  args: string[],
  flags: readonly Flag<unknown>[],
  maxPositionals?: number,
): Parsed {
  const p = parseFlags(command, fillOptionalValues(args, flags), flags, maxPositionals);
  for (const f of flags) {
    const raw = p.values[f.name];
    if (f.parse === undefined || raw === undefined) continue;
    const label = `${command}: --${f.name}`;
    const parse = (r: string) => {
      try {
        return f.parse!(r, label);
      } catch (err) {
        if (!(err instanceof PenguinError) || f.choices === undefined) throw err;
        const hint = didYouMeanText(r.trim().toLowerCase(), f.choices);
        throw hint === "" ? err : new PenguinError(err.kind, `${err.message}${hint}`);
      }
    };
    p.values[f.name] = Array.isArray(raw) ? raw.map(parse) : parse(raw as string);
  }
  return p;
}

/** The value of a declared string flag (parsed when it declares `parse`), or undefined when absent. */
export function flagValue<T>(p: Parsed, flag: Flag<T>): T | undefined {
  return p.values[flag.name] as T | undefined;
}

/**
 * The help lines of `flags`: each flag's name and value name, then its help
 * starting at `column` (on the next line when the name reaches it).
 */
export function flagHelp(flags: readonly Flag<unknown>[], column: number): string {
  const pad = " ".repeat(column);
  const out: string[] = [];
  for (const f of flags) {
    if (f.hidden) continue;
    const name = "  " +
      (f.label ??
        `${f.short !== undefined ? `-${f.short}, ` : ""}--${f.name}${
          f.value !== undefined ? ` ${f.value}` : ""
        }`);
    const [first, ...rest] = f.help.split("\n");
    if (name.length + 2 <= column) out.push(name.padEnd(column) + first);
    else out.push(name, pad + first);
    for (const line of rest) out.push(pad + line);
  }
  return out.join("\n");
}
