/**
 * Regenerates the sample traces in `samples/`: real `penguin run` tasks (and
 * `penguin sessions fork` / `sessions compact`) as CLI subprocesses under the
 * binary's permission set, against the scripted model server of the tests, in
 * a temporary data root. The traces penguin wrote are copied unchanged.
 *
 *   deno run -A scripts/make_samples.ts [--out <dir>]   (default: samples/)
 *
 * The sample agent has a short system prompt and only the tools the samples
 * use, with one-line descriptions, so that the files stay small.
 *
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createAgent } from "../lib/agent/mod.ts";
import { DEFAULT_COMPACTION_PROMPT } from "../lib/state/default_prompts.ts";
import { loadSystemConfig, saveSystemConfig } from "../lib/state/system_config_parse.ts";
import { parseTraceFileName } from "../lib/trace/paths.ts";
import {
  type RecordedRequest,
  type ScriptedItem,
  type ScriptedTurn,
  startModelServer,
} from "../tests/support/model_server.ts";
import { type CliResult, REPO, runCli } from "../tests/support/cli.ts";

/** The sample directories and what each shows. */
export const SAMPLES = {
  plain: "two tasks of one session: write_file, edit_file, exec_command, read_file",
  fork: "`sessions fork --before 2` of the plain session, continued with another task",
  subagents: "a parent that delegates to a subagent (the parent's and the child's trace)",
  compaction: "a task, `sessions compact`, and a task after it (two trace files)",
} as const;

/** A sample directory name. */
export type SampleName = keyof typeof SAMPLES;

const SYSTEM_PROMPT = "You are penguin's sample agent, working in {{CWD}}. " +
  "Use the tools to do what the user asks, then answer in one sentence.";

const TOOLS = [
  { name: "read_file", description: "Read a text file of the workspace." },
  { name: "write_file", description: "Create or overwrite a file of the workspace." },
  { name: "edit_file", description: "Replace an exact string in a file of the workspace." },
  { name: "exec_command", description: "Run a shell command in the workspace." },
  { name: "run_subagent", description: "Delegate a task to a subagent and get its report." },
];

interface ChatMessage {
  role: string;
  content?: unknown;
}

function textOf(m: ChatMessage): string {
  if (typeof m.content === "string") return m.content;
  if (Array.isArray(m.content)) {
    return m.content.map((p) => (p as { text?: string }).text ?? "").join("");
  }
  return "";
}

const text = (t: string): ScriptedItem => ({ kind: "text", text: t });
const call = (name: string, args: Record<string, unknown>): ScriptedItem => ({
  kind: "tool_call",
  name,
  arguments: args,
});

const NOTES = "# Penguins\n\n- Emperor\n- Adelei\n- Gentoo\n";
const CHILD_PROMPT = "Count the files in the workspace and reply with the number only.";

/** One scripted task: the user's prompt and the model's turns (a function of the last tool output). */
interface Task {
  prompt: string;
  turns: (lastTool: string) => ScriptedItem[][];
}

const TASKS: Record<string, Task> = {
  plain1: {
    prompt: "Create notes.md listing three penguin species, check it, and count them.",
    turns: () => [
      [
        text("I'll write the notes first."),
        call("write_file", { file_path: "notes.md", content: NOTES }),
      ],
      [
        text('"Adelei" is misspelled; fixing it.'),
        call("edit_file", { file_path: "notes.md", old_string: "Adelei", new_string: "Adélie" }),
      ],
      [call("exec_command", { cmd: "grep -c '^- ' notes.md" })],
      [text("notes.md lists three species: Emperor, Adélie and Gentoo.")],
    ],
  },
  plain2: {
    prompt: "Add the chinstrap penguin.",
    turns: () => [
      [call("read_file", { file_path: "notes.md" })],
      [call("edit_file", {
        file_path: "notes.md",
        old_string: "- Gentoo\n",
        new_string: "- Gentoo\n- Chinstrap\n",
      })],
      [text("Added Chinstrap; the list now has four species.")],
    ],
  },
  fork2: {
    prompt: "Instead, note where Emperor penguins live.",
    turns: () => [
      [call("edit_file", {
        file_path: "notes.md",
        old_string: "- Emperor\n",
        new_string: "- Emperor (Antarctica)\n",
      })],
      [text("Noted that Emperor penguins live in Antarctica.")],
    ],
  },
  parent: {
    prompt: "How many files does the workspace hold? Let a helper count them.",
    turns: (lastTool) => [
      [
        text("I'll ask a helper to count them."),
        call("run_subagent", { description: "count files", prompt: CHILD_PROMPT }),
      ],
      [text(`The helper counted ${lastTool.match(/\d+/)?.[0] ?? "no"} files.`)],
    ],
  },
  child: {
    prompt: CHILD_PROMPT,
    turns: (lastTool) => [
      [call("exec_command", { cmd: "ls -1 | wc -l" })],
      [text(lastTool.match(/\d+/)?.[0] ?? "unknown")],
    ],
  },
  compact1: {
    prompt: "Write a haiku about ice to haiku.txt.",
    turns: () => [
      [call("write_file", {
        file_path: "haiku.txt",
        content: "blue ice, slow river\npenguins lean into the wind\nthe sea keeps its time\n",
      })],
      [text("Wrote a haiku about ice to haiku.txt.")],
    ],
  },
  compact2: {
    prompt: "Is the haiku still there?",
    turns: () => [
      [call("read_file", { file_path: "haiku.txt" })],
      [text("Yes: haiku.txt still holds the three-line haiku about ice.")],
    ],
  },
};

const SUMMARY = "[summary]The user asked for a haiku about ice; it was written to haiku.txt " +
  "(three lines). Nothing else is pending.[/summary]";

/** The scripted model: which task a request belongs to (its last user prompt) and which step. */
function handler(req: RecordedRequest): ScriptedTurn {
  const messages = ((req.body as { messages?: ChatMessage[] }).messages) ?? [];
  const last = messages.at(-1);
  const usage = {
    input: Math.ceil(JSON.stringify(req.body).length / 4),
    cached_input: 0,
    output: 24,
  };
  if (last?.role === "user" && textOf(last).trimEnd().endsWith(DEFAULT_COMPACTION_PROMPT)) {
    return { items: [text(SUMMARY)], usage };
  }
  let key = "";
  let at = -1;
  messages.forEach((m, i) => {
    if (m.role !== "user") return;
    const found = Object.entries(TASKS).find(([, t]) => textOf(m).includes(t.prompt));
    if (found) [key, at] = [found[0], i];
  });
  const task = TASKS[key];
  if (!task) return { items: [], http_error: { status: 400, message: "no sample task matches" } };
  const step = messages.slice(at + 1).filter((m) => m.role === "assistant").length;
  const turns = task.turns(last?.role === "tool" ? textOf(last) : "");
  let calls = 0;
  const items = turns[Math.min(step, turns.length - 1)]!.map((it) =>
    it.kind === "tool_call" ? { ...it, id: `call_${key}_${step + 1}_${++calls}` } : it
  );
  return { items, usage };
}

function check(r: CliResult, what: string): CliResult {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  return r;
}

function sessionOf(r: CliResult): string {
  const id = /^Session: (session-\S+)$/m.exec(r.stderr)?.[1];
  if (!id) throw new Error(`no session id in:\n${r.stderr}`);
  return id;
}

/** Every trace file under `dir` by session id. */
async function traceFiles(dir: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for await (const day of Deno.readDir(dir)) {
    for await (const f of Deno.readDir(join(dir, day.name))) {
      const parsed = parseTraceFileName(f.name);
      if (!parsed) continue;
      const list = out.get(parsed.sessionId) ?? [];
      list.push(join(dir, day.name, f.name));
      out.set(parsed.sessionId, list.sort());
    }
  }
  return out;
}

/** Generate every sample into `out` (its sample directories are replaced). */
export async function makeSamples(out: string): Promise<void> {
  const tmp = await Deno.makeTempDir({ prefix: "penguin-samples-" });
  const server = await startModelServer({ handler, maxRequests: 100 });
  try {
    const root = join(tmp, "data");
    const home = join(tmp, "home"); // no rc file of the user's shell reaches the commands
    await Deno.mkdir(home);
    const cli = async (args: string[], what: string) =>
      check(await runCli(["--root", root, ...args], { env: { HOME: home } }), what);
    await cli([
      "config",
      "model",
      "add",
      "--provider",
      "scripted",
      "--model-id",
      "scripted-samples",
      "--base-url",
      server.baseUrl("openai-chat"),
      "--client-type",
      "openai-chat",
      "--context-window",
      "65536",
      "--set-default",
    ], "config model add");
    await createAgent({ root }); // writes the default agent state, which the sample agent trims
    const configPath = join(
      root,
      "default_project",
      "agents",
      "default_agent",
      "agent_state",
      "system_config.yaml",
    );
    const config = await loadSystemConfig(configPath);
    config.system_prompt = SYSTEM_PROMPT;
    config.memory = { ...config.memory, enabled: false };
    config.vault = { ...config.vault, enabled: false };
    config.skills = { ...config.skills, enabled: false };
    config.schedules = { ...config.schedules, enabled: false };
    config.tools = { ...config.tools, builtin: TOOLS };
    await saveSystemConfig(configPath, config);

    const workspace = async (name: string) => {
      const ws = join(tmp, name);
      await Deno.mkdir(ws);
      return ws;
    };
    const run = async (ws: string, task: string) =>
      sessionOf(await cli(["run", "--workspace", ws, "-m", TASKS[task]!.prompt], task));
    const resume = (id: string, task: string) =>
      cli(["run", "--resume", id, "-m", TASKS[task]!.prompt], task);

    const plain = await run(await workspace("plain"), "plain1");
    await resume(plain, "plain2");

    const forked = await cli(["sessions", "fork", plain, "--before", "2", "--json"], "fork");
    const fork = JSON.parse(forked.stdout).session_id as string;
    await resume(fork, "fork2");

    const subWs = await workspace("subagents");
    for (const f of ["a.txt", "b.txt"]) await Deno.writeTextFile(join(subWs, f), `${f}\n`);
    const parent = await run(subWs, "parent");

    const compact = await run(await workspace("compaction"), "compact1");
    await cli(["sessions", "compact", compact], "sessions compact");
    await resume(compact, "compact2");

    const files = await traceFiles(
      join(root, "default_project", "agents", "default_agent", "traces"),
    );
    const mains = [plain, fork, parent, compact];
    const groups: Record<SampleName, string[]> = {
      plain: [plain],
      fork: [fork],
      subagents: [parent, ...[...files.keys()].filter((id) => !mains.includes(id))],
      compaction: [compact],
    };
    for (const name of Object.keys(SAMPLES) as SampleName[]) {
      const dir = join(out, name);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      await Deno.mkdir(dir, { recursive: true });
      for (const id of groups[name]) {
        for (const f of files.get(id) ?? []) {
          await Deno.copyFile(f, join(dir, f.split("/").at(-1)!));
        }
      }
    }
  } finally {
    await server.close();
    await Deno.remove(tmp, { recursive: true });
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Deno.args, options: { out: { type: "string" } } });
  const out = values.out ?? join(REPO, "samples");
  await makeSamples(out);
  console.log(`samples written to ${out}`);
}
