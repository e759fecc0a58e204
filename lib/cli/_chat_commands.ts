/**
 * The slash commands of `penguin chat`: their names, the one line `/help`
 * shows for each, and Tab completion of a command word.
 *
 * @module
 */

/** One command: its usage as typed, and what it does. */
export interface ChatCommandHelp {
  /** The usage, e.g. `/model [<provider> <model-id>]`. */
  usage: string;
  /** One line saying what it does. */
  does: string;
}

/** Every command, in the order `/help` lists them. */
export const CHAT_COMMAND_HELP: readonly ChatCommandHelp[] = [
  { usage: "/help", does: "list the commands" },
  {
    usage: "/model [<provider> <model-id>]",
    does: "switch the model, keeping the conversation; alone: list the configured models",
  },
  { usage: "/status", does: "model, workspace, session, tokens, cost and context use" },
  { usage: "/cost", does: "the session's cost so far" },
  {
    usage: "/expand [#n]",
    does: "show a collapsed tool output whole (the latest, or call [#n]'s)",
  },
  { usage: "/compact", does: "summarize the context now" },
  { usage: "/clear", does: "start a new session (the old one is kept and resumable)" },
  {
    usage: "/resume [<session>|--all]",
    does: "continue another session: by id, or picked from this workspace's (--all: every one's)",
  },
  {
    usage: "/goal[:<budget>] [objective]",
    does: "work towards an objective in rounds until the model marks it complete",
  },
  { usage: "/skill <name> [message]", does: "ask the model to use an installed skill" },
  { usage: "/thinking [level]", does: "show or set the thinking level" },
  { usage: "/verbose", does: "toggle full tool output from here on (collapsed by default)" },
  { usage: "/exit", does: "end the chat (also /quit)" },
];

/** The command words, for completion and the did-you-mean of a mistyped one. */
export const CHAT_COMMANDS: readonly string[] = [
  ...CHAT_COMMAND_HELP.map((c) => c.usage.split(/[\s[:]/)[0]!),
  "/quit",
];

/** The `/help` text: one line per command, usages aligned. */
export function helpLines(): string[] {
  const width = Math.max(...CHAT_COMMAND_HELP.map((c) => c.usage.length));
  return [
    "Commands:",
    ...CHAT_COMMAND_HELP.map((c) => `  ${c.usage.padEnd(width)}  ${c.does}`),
    "Tab completes a command; Escape or Ctrl-C interrupts a task; Ctrl-D on an empty line exits.",
  ];
}

/**
 * Tab at the end of `text`: a command word being typed (`/mo`) becomes the
 * one command it starts (`/model `), or the longest start its candidates
 * share; null when there is nothing to complete.
 */
export function completeCommand(text: string): string | null {
  if (!/^\/[a-z]*$/i.test(text)) return null;
  const word = text.toLowerCase();
  const hits = CHAT_COMMANDS.filter((c) => c.startsWith(word));
  if (hits.length === 0) return null;
  if (hits.length === 1) return `${hits[0]} `;
  let shared = hits[0]!;
  for (const h of hits) while (!h.startsWith(shared)) shared = shared.slice(0, -1);
  return shared.length > text.length ? shared : null;
}
