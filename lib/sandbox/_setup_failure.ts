/**
 * What a sandbox's failure to set up says of the machine.
 *
 * @module
 */

/**
 * Whether a command whose sandbox failed to set up with `message` may have met a changed machine
 * (bubblewrap replaced, namespaces now blocked), so that a probe answer remembered by an earlier
 * process is worth checking again. Penguin's own refusals (its launcher's `penguin: …` lines: a
 * workspace renamed or replaced, a read-only path swapped) say nothing of the machine.
 */
export function mayBeTheMachine(message: string): boolean {
  return /failed to set up: (?!penguin:)/.test(message);
}
