// Every flag a command's parser accepts is in that command's help and in its README section, and
// every command has a README section (or one in a docs/*.md file). The flags are not listed here: each command is run with a
// flag it does not declare, and its parser's usage error carries the flags it does declare, so
// this check follows the declarations as they change.
import assert from "node:assert/strict";
import { join } from "node:path";
import { allCommands } from "../../lib/cli/registry.ts";
import { type Flag, UnknownFlagError } from "../../lib/cli/args.ts";
import { commandHelp } from "../../lib/cli/help.ts";
import type { Command, Io } from "../../lib/cli/command.ts";
import { REPO, runCli } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";

const README = await Deno.readTextFile(join(REPO, "README.md"));
const COMMANDS = await allCommands();

/** One README heading that documents commands: its command words and the text under it. */
interface Section {
  heading: string;
  words: string[][];
  text: string;
}

/**
 * The README sections whose heading is a command line in backticks (`penguin trace show|stats`),
 * each with its text up to the next heading of the same or a higher level.
 */
function commandSections(readme: string): Section[] {
  const lines = readme.split("\n");
  const out: Section[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = lines[i]!.match(/^(#{2,4}) .*?`penguin ([^`]+)`/);
    if (!m) continue;
    const level = m[1]!.length;
    const words: string[][] = [];
    for (const token of m[2]!.split(/\s+/)) {
      if (/^[-[<(]/.test(token)) break;
      words.push(token.split("|"));
    }
    let end = i + 1;
    let fenced = false;
    while (end < lines.length) {
      if (lines[end]!.startsWith("```")) fenced = !fenced;
      const h = fenced ? null : lines[end]!.match(/^(#+) /);
      if (h && h[1]!.length <= level) break;
      end++;
    }
    out.push({ heading: lines[i]!, words, text: lines.slice(i, end).join("\n") });
  }
  return out;
}

/** The Markdown files under docs/ (command sections may live there as well as in the README). */
async function docsText(): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(join(REPO, "docs"))) {
      if (e.isFile && e.name.endsWith(".md")) {
        out.push(await Deno.readTextFile(join(REPO, "docs", e.name)));
      }
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return out;
}

const SECTIONS = [README, ...await docsText()].flatMap(commandSections);

/** The text of "## Commands" before its first command: the flags many commands share. */
const COMMANDS_INTRO = README.slice(
  README.indexOf("## Commands"),
  README.indexOf("\n### ", README.indexOf("## Commands")),
);

function sectionFor(c: Command): Section | undefined {
  return SECTIONS.find((s) =>
    s.words.length === c.path.length && s.words.every((alts, i) => alts.includes(c.path[i]!))
  );
}

/** The flags `c`'s parser declares, read from the usage error for an undeclared flag. */
async function declaredFlags(c: Command, root: string): Promise<readonly Flag<unknown>[]> {
  const io: Io = { out: () => {}, err: () => {}, isTty: false, color: false };
  try {
    await c.run(["--zz-undeclared-probe"], { io, root });
  } catch (err) {
    if (err instanceof UnknownFlagError) return err.flags;
    throw new Error(`${c.path.join(" ")}: expected an unknown-flag usage error, got ${err}`);
  }
  throw new Error(`${c.path.join(" ")}: accepted an undeclared flag`);
}

Deno.test("every command has a README section headed by its command line", () => {
  const missing = COMMANDS.filter((c) => sectionFor(c) === undefined).map((c) => c.path.join(" "));
  assert.deepEqual(missing, [], "commands without a README section");
});

Deno.test("every flag a command accepts is in its help and in its README section", async () => {
  await withRoot(async (root) => {
    const problems: string[] = [];
    for (const c of COMMANDS) {
      const name = c.path.join(" ");
      const help = commandHelp(c);
      const section = sectionFor(c);
      for (const f of await declaredFlags(c, root)) {
        const shown = f.name.length === 1 ? `-${f.name}` : `--${f.name}`;
        const mention = new RegExp(`(^|[^\\w-])${shown}(?![\\w-])`);
        if (!f.hidden && !mention.test(help)) problems.push(`${name}: ${shown} not in its help`);
        if (section !== undefined && !mention.test(section.text) && !mention.test(COMMANDS_INTRO)) {
          problems.push(`${name}: ${shown} not in README section ${section.heading}`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });
});

Deno.test("the README section finder reads command headings", () => {
  const s = commandSections(
    "## Commands\n### `penguin trace show|stats [--json]`\ntext --x\n```\n# code\n```\n#### Sub\nmore\n### `penguin run -m <m>`\n",
  );
  assert.deepEqual(s.map((x) => x.words), [[["trace"], ["show", "stats"]], [["run"]]]);
  assert.match(s[0]!.text, /more/);
  assert.doesNotMatch(s[0]!.text, /penguin run/);
});

Deno.test("the README's architecture section lists every folder of lib/", async () => {
  const start = README.indexOf("## Architecture");
  const arch = README.slice(start, README.indexOf("\n## ", start + 1));
  const missing: string[] = [];
  for await (const e of Deno.readDir(join(REPO, "lib"))) {
    if (e.isDirectory && !arch.includes(`lib/${e.name}/`)) missing.push(`lib/${e.name}/`);
  }
  assert.deepEqual(missing, []);
});

/**
 * Flags the README names that are not penguin's: other programs' (deno, bubblewrap, bash,
 * systemctl), the mistyped `--max-turn` of the did-you-mean example and the `--price-*` family.
 */
const NOT_PENGUIN_FLAGS = new Set([
  "target",
  "unstable-worker-options",
  "exclude-unused-npm",
  "parallel",
  "check",
  "lint",
  "quiet",
  "now",
  "noprofile",
  "norc",
  "as-pid-1",
  "pdeathsig",
  "die-with-parent",
  "max-turn",
  "price-",
  "v8-flags",
  "max-semi-space-size",
  "no-lazy-feedback-allocation",
  "no-maglev",
  // curl and docker in the Telemetry example
  "data-binary",
  "rm",
]);

Deno.test("every penguin flag the README names is accepted by some command (no stale flags)", async () => {
  await withRoot(async (root) => {
    const accepted = new Set(["root", "help", "version"]);
    for (const c of COMMANDS) for (const f of await declaredFlags(c, root)) accepted.add(f.name);
    const named = new Set([...README.matchAll(/(?<![\w-])--([a-z][\w-]*)/g)].map((m) => m[1]!));
    const stale = [...named].filter((n) => !accepted.has(n) && !NOT_PENGUIN_FLAGS.has(n));
    assert.deepEqual(stale, [], "README names flags no command accepts");
  });
});

Deno.test("every help text fits in 100 columns", () => {
  const wide: string[] = [];
  for (const c of COMMANDS) {
    for (const line of commandHelp(c).split("\n")) {
      if ([...line].length > 100) wide.push(`${c.path.join(" ")}: ${line}`);
    }
  }
  assert.deepEqual(wide, []);
});

Deno.test("every command's help opens with its usage line", () => {
  const off = COMMANDS.filter((c) => !c.help.startsWith(`Usage: penguin ${c.path.join(" ")}`))
    .map((c) => c.path.join(" "));
  assert.deepEqual(off, []);
});

Deno.test("a flag with its last letter missing gets that flag as the suggestion, for every command", async () => {
  await withRoot(async (root) => {
    const io: Io = { out: () => {}, err: () => {}, isTty: false, color: false };
    const misses: string[] = [];
    for (const c of COMMANDS) {
      for (const f of await declaredFlags(c, root)) {
        if (f.name.length < 4) continue;
        const typo = `--${f.name.slice(0, -1)}`;
        try {
          await c.run([typo], { io, root });
          misses.push(`${c.path.join(" ")} ${typo}: accepted`);
        } catch (err) {
          const text = err instanceof Error ? err.message : String(err);
          if (!text.includes(`did you mean --${f.name}?`)) {
            misses.push(`${c.path.join(" ")} ${typo}: ${text}`);
          }
        }
      }
    }
    assert.deepEqual(misses, []);
  });
});

Deno.test("penguin help help prints the command list", async () => {
  const r = await runCli(["help", "help"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^penguin \S+: /);
  assert.match(r.stdout, /Run "penguin help <command>" for a command's flags\./);
});
