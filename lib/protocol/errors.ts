/**
 * The one error type penguin raises for conditions a user can act on.
 *
 * @module
 */

/** Broad category of a {@linkcode PenguinError}; decides the CLI exit code. */
export type ErrorKind =
  /** Bad command-line input: exit 2. */
  | "usage"
  /** A config file or setting is wrong or missing: exit 2. */
  | "config"
  /** A trace or other data file is unusable: exit 1. */
  | "data"
  /** Another process holds what we need: exit 1. */
  | "locked"
  /** A lookup found nothing: exit 1. */
  | "not_found"
  /** Anything else the user must fix: exit 1. */
  | "runtime";

/**
 * An error whose message says what was attempted and what was found, in one
 * sentence a user can act on. Printed without a stack trace by the CLI.
 */
export class PenguinError extends Error {
  /** Category; decides the exit code. */
  readonly kind: ErrorKind;

  /** Create an error of `kind` with a user-facing `message`. */
  constructor(kind: ErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PenguinError";
    this.kind = kind;
  }

  /** The process exit code for this error: 2 for usage and config, else 1. */
  get exitCode(): number {
    return this.kind === "usage" || this.kind === "config" ? 2 : 1;
  }
}

/** Describe any thrown value in one line. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** The default diagnostics sink of every layer that takes a `warn`: one line to stderr. */
export function defaultWarn(line: string): void {
  console.error(line);
}
