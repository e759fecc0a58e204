/**
 * Every CLI command, grouped by the module that implements it. Modules are
 * loaded on demand (literal dynamic imports, embedded by `deno compile`), so
 * `penguin run` does not pay for loading the inspection or config commands.
 *
 * @module
 */
import type { Command } from "./command.ts";

/** One command module: the first command word(s) it serves and how to load it. */
export interface CommandGroup {
  /** The first word of every command in the module, e.g. `trace`. */
  word: string;
  /**
   * The second word, when the module serves one subcommand (`trace show`):
   * a command line naming it loads only that module of its word's modules.
   */
  second?: string;
  /** Load the module's commands. */
  load(): Promise<Command[]>;
}

/** The command modules, in the order `penguin --help` lists them. */
export const GROUPS: CommandGroup[] = [
  { word: "run", load: async () => [(await import("./commands/run.ts")).runCommand] },
  { word: "chat", load: async () => [(await import("./commands/chat.ts")).chatCommand] },
  { word: "sessions", load: async () => (await import("./commands/sessions.ts")).sessionsCommands },
  // One module per trace command: `trace show` does not load what stats and export need.
  {
    word: "trace",
    second: "validate",
    load: async () => [(await import("./commands/trace.ts")).traceValidateCommand],
  },
  {
    word: "trace",
    second: "show",
    load: async () => [(await import("./commands/trace_show.ts")).traceShowCommand],
  },
  {
    word: "trace",
    second: "stats",
    load: async () => [(await import("./commands/trace_stats.ts")).traceStatsCommand],
  },
  {
    word: "trace",
    second: "export",
    load: async () => [(await import("./commands/trace_export.ts")).traceExportCommand],
  },
  {
    word: "trace",
    second: "follow",
    load: async () => [(await import("./commands/trace_follow.ts")).traceFollowCommand],
  },
  {
    word: "trace",
    second: "diff",
    load: async () => [(await import("./commands/trace_diff.ts")).traceDiffCommand],
  },
  { word: "config", load: async () => (await import("./commands/config.ts")).configCommands },
  { word: "sandbox", load: async () => (await import("./commands/sandbox.ts")).sandboxCommands },
  { word: "trust", load: async () => [(await import("./commands/trust.ts")).trustCommand] },
  {
    word: "models",
    load: async () => [
      ...(await import("./commands/models.ts")).modelsCommands,
      (await import("./commands/models_probe.ts")).modelsTestCommand,
    ],
  },
  { word: "mcp", load: async () => (await import("./commands/mcp.ts")).mcpCommands },
  { word: "skills", load: async () => (await import("./commands/skills.ts")).skillsCommands },
  { word: "agent", load: async () => (await import("./commands/agent.ts")).agentCommands },
  {
    word: "schedules",
    load: async () => (await import("./commands/schedules.ts")).schedulesCommands,
  },
  { word: "batch", load: async () => (await import("./commands/batch.ts")).batchCommands },
  { word: "memory", load: async () => (await import("./commands/memory.ts")).memoryCommands },
  { word: "demo", load: async () => [(await import("./commands/demo.ts")).demoCommand] },
];

/**
 * The commands whose first word is `word` (none for an unknown word); with
 * `second`, only the module serving `word second` when one does.
 */
export async function commandsFor(
  word: string | undefined,
  second?: string,
): Promise<Command[]> {
  const groups = GROUPS.filter((g) => g.word === word);
  const exact = groups.filter((g) => second !== undefined && g.second === second);
  return (await Promise.all((exact.length > 0 ? exact : groups).map((g) => g.load()))).flat();
}

/** Every command, in help order. */
export async function allCommands(): Promise<Command[]> {
  return (await Promise.all(GROUPS.map((g) => g.load()))).flat();
}
