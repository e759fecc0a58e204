// The red-team table: escape attempts made through real tool calls of
// `penguin run`, each with the check of the outside world that proves it was
// blocked. Attempts of one batch run in one session; the k-th steps of all
// attempts of a batch share a model turn (they run concurrently).
import type { Attempt, Batch } from "./_attempt_kit.ts";
import type { World } from "./_world.ts";
import { FILE_ATTEMPTS } from "./_attempts_files.ts";
import { HOME_ATTEMPTS } from "./_attempts_home.ts";
import { GITCONFIG_ATTEMPTS, prepareGitconfigWorld } from "./_attempts_gitconfig.ts";
import { RACE_ATTEMPTS } from "./_attempts_race.ts";
import { SYSTEM_ATTEMPTS } from "./_attempts_system.ts";

export type { Attempt, Batch } from "./_attempt_kit.ts";

/** Every attempt, one row each. */
export const ATTEMPTS: Attempt[] = [
  ...FILE_ATTEMPTS,
  ...SYSTEM_ATTEMPTS,
  ...RACE_ATTEMPTS,
  ...HOME_ATTEMPTS,
  ...GITCONFIG_ATTEMPTS,
];

/** What a batch's world needs before its session starts, besides `createWorld`. */
export const BATCH_SETUP: Partial<Record<Batch, (w: World) => Promise<void>>> = {
  gitconfig: prepareGitconfigWorld,
};
