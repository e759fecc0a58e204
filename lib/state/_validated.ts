/**
 * The one shape of penguin's "this name is not valid" usage error, shared
 * by the id, session id and vault key checks.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";

/** `value` when `ok`; otherwise the usage error `Invalid <what> "<value>": <rule>`. */
export function validated(ok: boolean, value: string, what: string, rule: string): string {
  if (!ok) throw new PenguinError("usage", `Invalid ${what} ${JSON.stringify(value)}: ${rule}`);
  return value;
}
