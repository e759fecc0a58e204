/**
 * The argv of `penguin sessions import` and of a run resuming an imported
 * session with the test model named (an imported session records no
 * penguin model).
 *
 * @module
 */

/** The model the test roots configure: `--provider custom --model-id m`. */
export const TEST_MODEL: readonly string[] = ["--provider", "custom", "--model-id", "m"];

/** `--root <root> sessions import ...args`. */
export function importArgs(root: string, ...args: string[]): string[] {
  return ["--root", root, "sessions", "import", ...args];
}

/** `--root <root> run --resume <id> <TEST_MODEL> ...extra -m <prompt>`. */
export function resumeImportedArgs(
  root: string,
  id: string,
  extra: string[],
  prompt: string,
): string[] {
  return ["--root", root, "run", "--resume", id, ...TEST_MODEL, ...extra, "-m", prompt];
}
