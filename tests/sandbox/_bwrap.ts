/**
 * Whether this machine runs commands in a usable bubblewrap sandbox: the tests that need one
 * are ignored elsewhere.
 *
 * @module
 */
import { detectSandbox } from "../../lib/sandbox/mod.ts";

/** True when `detectSandbox()` finds bubblewrap and it works here. */
export const BWRAP_USABLE: boolean = await (async () => {
  const report = await detectSandbox();
  return report.kind === "bwrap" && report.usable;
})();
