/**
 * Generates `docs/cli.md`, the command reference, from the command
 * declarations: every command of `allCommands()` (lib/cli/registry.ts) in help
 * order, its summary, a table of the flags its parser declares (each
 * `Flag` of lib/cli/args.ts, aliases included) and its help text
 * (`commandHelp`, lib/cli/help.ts). Hand-written prose is merged from
 * `docs/cli/`: `_intro.md` opens the page, `<word>.md` opens a command group
 * (`trace.md`), `<word>-<word>.md` follows one command (`trace-show.md`).
 *
 *   deno task docs            write docs/cli.md
 *   deno task docs --check    exit 1 when docs/cli.md is not what it would write
 *
 * `tests/cli/cli_docs_test.ts` fails when the committed page is stale.
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Flag, UnknownFlagError } from "../lib/cli/args.ts";
import type { Command, Io } from "../lib/cli/command.ts";
import { allCommands } from "../lib/cli/registry.ts";

/** The repository root. */
export const REPO_ROOT: string = fileURLToPath(new URL("../", import.meta.url));

/** Where the page is written and where its hand-written parts live. */
export const CLI_DOC = "docs/cli.md";
const NOTES_DIR = "docs/cli";

/** The flag no command declares: each command's parser refuses it with the flags it does declare. */
const PROBE = "--zz-undeclared-probe";

/**
 * The flags `command`'s parser declares, read from the usage error it gives
 * for an undeclared flag (commands parse before they touch anything).
 */
export async function declaredFlags(command: Command): Promise<readonly Flag<unknown>[]> {
  const io: Io = { out: () => {}, err: () => {}, isTty: false, color: false };
  const root = await Deno.makeTempDir({ prefix: "penguin-docs-probe-" });
  try {
    await command.run([PROBE], { io, root });
  } catch (err) {
    if (err instanceof UnknownFlagError) return err.flags;
    throw new Error(`${command.path.join(" ")}: expected an unknown-flag usage error, got ${err}`);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
  throw new Error(`${command.path.join(" ")}: accepted the undeclared flag ${PROBE}`);
}

/** A flag as it is written on a command line: `-m, --message <text>`. */
function flagName(f: Flag<unknown>): string {
  const short = f.short !== undefined ? `-${f.short}, ` : "";
  const value = f.value !== undefined ? ` ${f.value}` : f.type === "string" ? " <value>" : "";
  return `${short}--${f.name}${value}`;
}

/** Text safe inside a Markdown table cell (in a code span when `code`). */
function cell(text: string, code = false): string {
  const flat = text.replace(/\s*\n\s*/g, " ").replace(/\|/g, "\\|").trim();
  return code ? flat : prose(flat);
}

/** Plain text for Markdown: `<version>` is shown as written, not taken for an HTML tag. */
function prose(text: string): string {
  return text.replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** The flags table of one command. */
function flagTable(flags: readonly Flag<unknown>[]): string {
  if (flags.length === 0) return "No flags of its own (see the global flags above).\n";
  const rows = flags.map((f) => {
    const notes = [
      f.multiple ? "repeatable" : "",
      f.optionalValue ? "the value may be left out" : "",
      f.hidden ? "an alias, not listed in the help" : "",
    ].filter((n) => n !== "");
    const extra = notes.length > 0 ? ` (${notes.join("; ")})` : "";
    return `| \`${cell(flagName(f), true)}\` | ${cell(f.help)}${extra} |`;
  });
  return ["| flag | meaning |", "| --- | --- |", ...rows].join("\n") + "\n";
}

/** The GitHub anchor of a heading `` `penguin trace show` ``. */
function anchor(words: string[]): string {
  return ["penguin", ...words].join("-");
}

/** The hand-written notes `docs/cli/<name>.md`, or "" when there are none. */
async function notes(root: string, name: string): Promise<string> {
  try {
    const text = await Deno.readTextFile(join(root, NOTES_DIR, `${name}.md`));
    return text.trim() + "\n";
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return "";
    throw err;
  }
}

/** One command's section: heading, summary, flags, help, notes. */
async function commandSection(root: string, c: Command, level: string): Promise<string> {
  const name = c.path.join(" ");
  const help = c.help.endsWith("\n") ? c.help : c.help + "\n";
  const parts = [
    `${level} \`penguin ${name}\`\n`,
    `${prose(c.summary[0]!.toUpperCase() + c.summary.slice(1))}.\n`,
    flagTable(await declaredFlags(c)),
    `<details><summary><code>penguin help ${name}</code></summary>\n\n` +
    "```text\n" + help + "```\n\n</details>\n",
  ];
  const own = await notes(root, c.path.join("-"));
  if (own !== "") parts.push(own);
  return parts.join("\n");
}

/** The whole of `docs/cli.md`, as `deno task docs` writes it, for the repository at `root`. */
export async function renderCliDocs(root: string = REPO_ROOT): Promise<string> {
  const commands = await allCommands();
  const groups = new Map<string, Command[]>();
  for (const c of commands) groups.set(c.path[0]!, [...(groups.get(c.path[0]!) ?? []), c]);

  const out: string[] = [
    "# Command reference\n",
    "<!-- Generated by scripts/gen_cli_docs.ts (deno task docs) from the flag declarations in " +
    "lib/cli/ and the notes in docs/cli/*.md. Edit those, not this file. -->\n",
  ];
  const intro = await notes(root, "_intro");
  if (intro !== "") out.push(intro);
  out.push(
    "## Commands\n\n| command | what it does |\n| --- | --- |\n" +
      commands.map((c) =>
        `| [\`penguin ${c.path.join(" ")}\`](#${anchor(c.path)}) | ${cell(c.summary)} |`
      ).join("\n") + "\n",
  );
  for (const [word, members] of groups) {
    const single = members.length === 1 && members[0]!.path.length === 1;
    if (single) {
      // A group of one command (`run`) is that command's section; `<word>.md` is its notes.
      out.push(await commandSection(root, members[0]!, "##"));
      continue;
    }
    const sub = [...new Set(members.map((c) => c.path[1]))].join("|");
    out.push(`## \`penguin ${word} ${sub}\`\n`);
    const groupNotes = await notes(root, word);
    if (groupNotes !== "") out.push(groupNotes);
    for (const c of members) out.push(await commandSection(root, c, "###"));
  }
  return out.join("\n");
}

if (import.meta.main) {
  const check = Deno.args.includes("--check");
  const path = join(REPO_ROOT, CLI_DOC);
  const text = await renderCliDocs();
  if (check) {
    const current = await Deno.readTextFile(path).catch(() => "");
    if (current !== text) {
      console.error(`${CLI_DOC} is stale: run "deno task docs"`);
      Deno.exit(1);
    }
  } else {
    await Deno.writeTextFile(path, text);
    console.error(`wrote ${CLI_DOC}`);
  }
}
