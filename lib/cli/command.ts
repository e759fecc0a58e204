/**
 * The shape of one CLI command and what it is given to run, and the table
 * form a group of sub-commands is declared in.
 *
 * @module
 */

/** Where a command writes. Tests substitute buffers. */
export interface Io {
  /** Write to standard output. */
  out(text: string): void;
  /** Write to standard error. */
  err(text: string): void;
  /** True when stdout is a terminal. */
  isTty: boolean;
  /** True when stderr is a terminal (progress lines are drawn only then). */
  errIsTty?: boolean;
  /** True when colour may be used on stdout (TTY and no NO_COLOR). */
  color: boolean;
  /** True once a write found stdout closed by its reader (e.g. `| head`). */
  stdoutClosed?(): boolean;
}

/** Everything a command gets besides its own arguments. */
export interface CommandContext {
  /** Output streams. */
  io: Io;
  /** The data root given with the global `--root`, if any (commands resolve the rest). */
  root?: string;
}

/** One command, e.g. `trace validate`. */
export interface Command {
  /** Words that select it: `["trace", "validate"]`. */
  path: string[];
  /** One line for the command list. */
  summary: string;
  /** The full help text (usage line, description, flags). */
  help: string;
  /** Run with the arguments after the command words; resolve to the exit code. */
  run(args: string[], ctx: CommandContext): Promise<number>;
}

/** One sub-command of a {@linkcode commandGroup}: its last word, summary, help text and run. */
export type CommandRow = readonly [
  word: string,
  summary: string,
  help: string,
  run: Command["run"],
];

/** The commands `prefix… word` declared by `rows`, in their order. */
export function commandGroup(prefix: readonly string[], rows: readonly CommandRow[]): Command[] {
  return rows.map(([word, summary, help, run]) => ({
    path: [...prefix, word],
    summary,
    help,
    run,
  }));
}
