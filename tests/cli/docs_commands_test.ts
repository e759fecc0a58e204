// Every `penguin …` command shown in a ```sh block of README.md and docs/*.md still works. Each
// one's command words must name a command and its flags must be ones that command declares (with
// values its parser accepts when the line holds no placeholder such as `<session>` or `~/app`).
// The lines a reader can run offline as they are written run for real, in order, as CLI
// subprocesses: in a temporary data root (PENGUIN_HOME), with the paths the docs use under /tmp
// mapped to temporary directories, and with the scripted model server as the default model when a
// line needs a model. RUNS lists them; every README line without a placeholder must be among them.
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseDeclared } from "../../lib/cli/args.ts";
import { findCommand } from "../../lib/cli/mod.ts";
import { declaredFlags } from "../../scripts/gen_cli_docs.ts";
import { type CliResult, REPO, runCli } from "../support/cli.ts";
import { turn, withModelServer } from "../support/model_server.ts";
import { visibleTempDir } from "../support/roots.ts";

/** One `penguin …` command found in a doc. */
interface DocCommand {
  /** The doc, relative to the repository: `README.md`, `docs/cli.md`. */
  file: string;
  /** Its line number (of the block line it starts on). */
  line: number;
  /** The command as written, from `penguin` on, without a trailing comment. */
  text: string;
  /** Environment assignments written before it (`OTEL_…=… penguin run`). */
  env: Record<string, string>;
  /** The words after `penguin`, quotes removed. */
  args: string[];
}

/** Split a shell command into words (single and double quotes; no expansion). */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (const ch of text) {
    if (quote !== undefined) {
      if (ch === quote) quote = undefined;
      else word = (word ?? "") + ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      word = word ?? "";
    } else if (/\s/.test(ch)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? "") + ch;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** `line` cut at a `#` comment and split at `&&`, `||`, `|` and `;`, none of them inside quotes. */
export function shellSegments(line: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote !== undefined) {
      if (ch === quote) quote = undefined;
      cur += ch;
      continue;
    }
    if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "#" && (i === 0 || /\s/.test(line[i - 1]!))) break;
    else if (ch === "|" || ch === ";" || (ch === "&" && line[i + 1] === "&")) {
      out.push(cur);
      cur = "";
      if (line[i + 1] === ch) i++;
      continue;
    }
    cur += ch;
  }
  out.push(cur);
  return out.map((s) => s.trim()).filter((s) => s !== "");
}

/** The `penguin` commands of the ```sh blocks of `text` (a doc named `file`). */
export function docCommands(file: string, text: string): DocCommand[] {
  const out: DocCommand[] = [];
  const lines = text.split("\n");
  let inSh = false;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (raw.startsWith("```")) {
      inSh = !inSh && raw.trim() === "```sh";
      continue;
    }
    if (!inSh) continue;
    const start = i;
    let line = raw;
    while (line.endsWith("\\") && i + 1 < lines.length) line = line.slice(0, -1) + lines[++i]!;
    for (const segment of shellSegments(line)) {
      const words = shellWords(segment);
      const env: Record<string, string> = {};
      while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0]!)) {
        const [name, ...value] = words.shift()!.split("=");
        env[name!] = value.join("=");
      }
      if (words[0] !== "penguin") continue;
      const text = segment.slice(segment.indexOf("penguin")).replace(/\s+/g, " ");
      out.push({ file, line: start + 1, text, env, args: words.slice(1) });
    }
  }
  return out;
}

/** A word a reader has to fill in or that depends on their machine: `<id>`, `…`, `$TOKEN`, `~/app`. */
function isPlaceholder(word: string): boolean {
  return /[<>…$]/.test(word) || word.startsWith("~");
}

/** The docs whose commands are checked: the README and the top level of docs/. */
async function docs(): Promise<{ file: string; text: string }[]> {
  const files = ["README.md"];
  for await (const e of Deno.readDir(join(REPO, "docs"))) {
    if (e.isFile && e.name.endsWith(".md")) files.push(`docs/${e.name}`);
  }
  files.sort();
  return await Promise.all(
    files.map(async (file) => ({ file, text: await Deno.readTextFile(join(REPO, file)) })),
  );
}

const ALL = (await docs()).flatMap((d) => docCommands(d.file, d.text));

/** The global flags every command takes, removed before the command's own flags are checked. */
function withoutGlobals(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") {
      out.push(...args.slice(i));
      break;
    }
    if (a === "--root") i++;
    else if (!a.startsWith("--root=") && a !== "--help" && a !== "-h") out.push(a);
  }
  return out;
}

/** What is wrong with `cmd`'s command words and flags, or undefined when it parses. */
async function parseProblem(cmd: DocCommand): Promise<string | undefined> {
  const args = withoutGlobals(cmd.args);
  const { command, consumed } = await findCommand(args);
  if (command === undefined) return "names no command";
  const name = command.path.join(" ");
  const flags = await declaredFlags(command);
  const rest = args.slice(consumed);
  const end = rest.indexOf("--");
  for (const a of end === -1 ? rest : rest.slice(0, end)) {
    const flag = /^--([^=]+)/.exec(a)?.[1];
    const short = /^-([a-zA-Z])$/.exec(a)?.[1];
    if (flag !== undefined && !flags.some((f) => f.name === flag)) {
      return `${name} declares no --${flag}`;
    }
    if (short !== undefined && !flags.some((f) => f.short === short)) {
      return `${name} declares no -${short}`;
    }
  }
  if (rest.some(isPlaceholder)) return undefined;
  try {
    parseDeclared(name, rest, flags);
  } catch (err) {
    return `${name}: ${err instanceof Error ? err.message : err}`;
  }
  return undefined;
}

Deno.test("the docs show penguin commands in sh blocks, and the finder reads them", () => {
  assert.ok(ALL.filter((c) => c.file === "README.md").length >= 5, "the README shows commands");
  const found = docCommands(
    "x.md",
    '```sh\nA=1 penguin run -m "a # b" \\\n  --json   # note\nmkdir d && cd d && penguin demo | head\n```\n```text\npenguin x\n```\n',
  );
  assert.deepEqual(found.map((c) => [c.line, c.args, c.env]), [
    [2, ["run", "-m", "a # b", "--json"], { A: "1" }],
    [4, ["demo"], {}],
  ]);
});

Deno.test("every penguin command in README.md and docs/*.md names a command and its flags", async () => {
  const problems: string[] = [];
  for (const cmd of ALL) {
    const problem = await parseProblem(cmd);
    if (problem !== undefined) problems.push(`${cmd.file}:${cmd.line}: ${cmd.text}: ${problem}`);
  }
  assert.deepEqual(problems, []);
});

Deno.test("the command check refuses an unknown command, flag or flag value", async () => {
  const of = (text: string) => docCommands("x.md", "```sh\n" + text + "\n```\n")[0]!;
  assert.equal(await parseProblem(of("penguin sesions list")), "names no command");
  assert.equal(
    await parseProblem(of("penguin run --max-turn 3 -m x")),
    "run declares no --max-turn",
  );
  assert.match((await parseProblem(of("penguin run --approve maybe -m x")))!, /--approve/);
  assert.equal(await parseProblem(of("penguin run --resume <session> -m x")), undefined);
});

/** State shared by the commands of one doc, run in order. */
interface Run {
  /** The data root (PENGUIN_HOME). */
  root: string;
  /** The directory the commands run in (the docs' `cd /tmp/scratch`). */
  cwd: string;
  /** Paths the docs use under /tmp, mapped to temporary directories. */
  paths: Record<string, string>;
  /** The scripted model server's base URL. */
  baseUrl: string;
}

type Check = (r: CliResult, run: Run) => void | Promise<void>;

/** One command that runs for real: whether it needs the scripted model, and what it must print. */
interface RealRun {
  model?: boolean;
  check: Check;
}

/** The demo's kept workspace, removed by its check. */
async function removeDemoWorkspace(r: CliResult): Promise<void> {
  const dir = /^The workspace is in (\S+) \(remove it when done\)\.$/m.exec(r.stdout)?.[1];
  assert.ok(dir, r.stdout);
  await Deno.remove(dir, { recursive: true });
}

/** The doc commands that run for real, by doc and command text, in the order they appear. */
const RUNS: Record<string, Record<string, RealRun>> = {
  "README.md": {
    "penguin demo --root /tmp/penguin-try": {
      check: async (r) => {
        assert.match(r.stdout, /write_file .*hello\.txt/);
        assert.match(r.stdout, /^Trace: \S+\.jsonl$/m);
        await removeDemoWorkspace(r);
      },
    },
    "penguin trace show latest --root /tmp/penguin-try": {
      check: (r) => {
        assert.match(r.stdout, /^session session-\S+ · scripted\/penguin-demo/);
        assert.match(r.stdout, /exec_command .*cat hello\.txt/);
      },
    },
    "penguin config model add --provider deepseek --model-id deepseek-v4-flash --set-default": {
      check: async (r, run) => {
        const cfg = await Deno.readTextFile(join(run.root, "default_project/.project_config.toml"));
        assert.match(cfg, /deepseek-v4-flash/);
        assert.match(r.stdout + r.stderr, /deepseek/);
      },
    },
    'penguin run -m "Write fizzbuzz.py for 1 to 15, run it, and show me the output"': {
      model: true,
      check: async (r, run) => {
        assert.match(r.stdout, /write_file .*fizzbuzz\.py/);
        assert.equal(await Deno.readTextFile(join(run.cwd, "fizzbuzz.py")), FIZZBUZZ);
      },
    },
    "penguin sessions list": {
      check: (r) => assert.match(r.stdout, /Write fizzbuzz\.py/),
    },
    "penguin trace show latest": {
      check: (r) => {
        assert.match(r.stdout, /^> Write fizzbuzz\.py/m);
        assert.match(r.stdout, /write_file .*fizzbuzz\.py/);
      },
    },
    "penguin trace stats latest": {
      check: (r) => assert.match(r.stdout, /tool calls?/),
    },
    "penguin trace export latest --format html -o session.html": {
      check: async (_r, run) => {
        const html = await Deno.readTextFile(join(run.cwd, "session.html"));
        assert.match(html, /^<!DOCTYPE html>/i);
        assert.ok(html.includes("fizzbuzz.py"));
      },
    },
  },
  "docs/traces.md": {
    "penguin trace show samples/plain": {
      check: (r) => {
        assert.match(r.stdout, /^session session-\S+ · scripted\/scripted-samples/);
        assert.match(r.stdout, /^> Create notes\.md/m);
        assert.match(r.stdout, /edit_file -> /);
      },
    },
    "penguin trace show samples/subagents": {
      check: (r) => {
        assert.match(r.stdout, /run_subagent <- Count the files/);
        assert.match(r.stdout, /The helper counted 2 files\./);
      },
    },
    "penguin trace stats samples": {
      check: (r) => {
        assert.match(r.stdout, /^total: 5 session\(s\) · 6 file\(s\) · \d+ record\(s\)/m);
        assert.match(r.stdout, /compactions: 1 \(completed 1/);
      },
    },
    "penguin trace export samples/compaction --format html -o compaction.html": {
      check: async (r, run) => {
        assert.match(r.stderr, /^exported session-\S+ \(html\) to compaction\.html$/m);
        const html = await Deno.readTextFile(join(run.cwd, "compaction.html"));
        assert.ok(html.includes("haiku.txt"));
      },
    },
    "penguin trace validate samples": {
      check: (r) => assert.match(r.stdout, /^6 file\(s\), \d+ record\(s\), 0 problem\(s\)$/m),
    },
  },
  "docs/cli.md": {
    "penguin skills list": { check: (r) => assert.match(r.stdout, /no skills/) },
    "penguin agent snapshot": {
      check: async (r, run) => {
        const path = join(run.root, "default_project/agents/default_agent/snapshots/v1.tar.gz");
        assert.ok((await Deno.stat(path)).size > 0, r.stdout);
      },
    },
    "penguin memory list": { check: (r) => assert.match(r.stdout, /^user +MEMORY\.md/m) },
    // Nothing saved yet: it says so (on stderr), rather than printing nothing.
    "penguin memory show": {
      check: (r) =>
        assert.match(r.stderr, /^memory show: MEMORY\.md .* is empty \(nothing saved yet\)\n$/),
    },
  },
};

/** What the scripted model writes for the README's first task. */
const FIZZBUZZ = "for i in range(1, 16):\n    print(i)\n";

Deno.test("every README command without a placeholder is one the docs test runs", () => {
  const runnable = ALL.filter((c) => c.file === "README.md" && !c.args.some(isPlaceholder));
  const missing = runnable.filter((c) => RUNS["README.md"]![c.text] === undefined);
  assert.deepEqual(missing.map((c) => `${c.line}: ${c.text}`), []);
  for (const [file, runs] of Object.entries(RUNS)) {
    const shown = new Set(ALL.filter((c) => c.file === file).map((c) => c.text));
    const stale = Object.keys(runs).filter((t) => !shown.has(t));
    assert.deepEqual(stale, [], `${file} no longer shows these commands`);
  }
});

/** The args of `cmd` with the docs' /tmp paths replaced by the run's directories. */
function mapped(cmd: DocCommand, run: Run): string[] {
  return cmd.args.map((a) => run.paths[a] ?? a);
}

for (const [file, runs] of Object.entries(RUNS)) {
  Deno.test(`the commands ${file} shows run offline, in order`, async () => {
    const base = await visibleTempDir("penguin-docs-");
    const script = [
      turn.toolCall("write_file", { file_path: "fizzbuzz.py", content: FIZZBUZZ }),
      turn.text("fizzbuzz.py is written."),
    ];
    try {
      await withModelServer({ turns: script }, async (server) => {
        const run: Run = {
          root: join(base, "data"),
          cwd: join(base, "scratch"),
          paths: { "/tmp/penguin-try": join(base, "try") },
          baseUrl: server.baseUrl("openai-chat"),
        };
        await Deno.mkdir(run.cwd);
        await Deno.symlink(join(REPO, "samples"), join(run.cwd, "samples"));
        const env = { PENGUIN_HOME: run.root };
        for (const cmd of ALL.filter((c) => c.file === file && runs[c.text] !== undefined)) {
          const real = runs[cmd.text]!;
          if (real.model) {
            // The docs' model is a vendor's; the task runs on the scripted server instead.
            const add = await runCli([
              ...["config", "model", "add", "--provider", "custom", "--model-id", "scripted"],
              ...["--base-url", run.baseUrl, "--client-type", "openai-chat", "--set-default"],
            ], { env });
            assert.equal(add.code, 0, add.stderr);
          }
          const r = await runCli(mapped(cmd, run), { env: { ...env, ...cmd.env }, cwd: run.cwd });
          assert.equal(r.code, 0, `${file}:${cmd.line}: ${cmd.text}\n${r.stdout}\n${r.stderr}`);
          await real.check(r, run);
        }
      });
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  });
}
