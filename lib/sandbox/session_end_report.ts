/**
 * What the sandbox layer has to tell the user once a session has ended, and
 * whether it is a failure the exit status must show: the last walk for git
 * repositories a command armed (`git_nested.ts`) found one it could not
 * disarm, or could not look everywhere. The command line prints the lines
 * after the command (`lib/cli/mod.ts`). A leaf module, so the dispatcher
 * loads nothing of the sandbox for it.
 *
 * @module
 */

const report: { lines: string[]; failed: boolean } = { lines: [], failed: false };

/** Add a line to tell; `failed`: the session's end left something the user must act on. */
export function noteSessionEnd(line: string, failed: boolean): void {
  report.lines.push(line);
  if (failed) report.failed = true;
}

/** The lines to tell and whether any is a failure; then forgets them. */
export function takeSessionEndReport(): { lines: string[]; failed: boolean } {
  const out = { lines: [...report.lines], failed: report.failed };
  report.lines = [];
  report.failed = false;
  return out;
}
