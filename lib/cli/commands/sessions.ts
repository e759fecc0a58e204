/**
 * `penguin sessions …`: list, show, fork, clone, import, delete and tree,
 * all computed from the trace files alone.
 *
 * @module
 */
import { basename } from "node:path";
import { concatBytes } from "../../protocol/bytes.ts";
import { PenguinError } from "../../protocol/errors.ts";
import {
  buildOutline,
  childCount,
  chooseImportWorkspace,
  cloneSession,
  type CopiedSession,
  deleteSession,
  detectFormat,
  foreignImportLine,
  forkSession,
  formatForeignImport,
  formatOutline,
  type Harness,
  HARNESSES,
  importedForeign,
  importedPenguin,
  importForeign,
  importTraces,
  importWorkspaceNote,
  listSessions,
  locateSession,
  planDelete,
  sessionListParts,
  type SessionScope,
  sessionTree,
  type TreeNode,
  treeParts,
} from "../../session/mod.ts";
import {
  DEFAULT_AGENT_ID,
  DEFAULT_PROJECT_ID,
  validateAgentId,
  validateProjectId,
} from "../../state/ids.ts";
import { resolveDataRoot } from "../../state/root.ts";
import { selectSessions } from "../../session/select.ts";
import { agentsDir } from "../../state/paths.ts";
import { didYouMeanText } from "../suggest.ts";
import { problemsLeftOut, skippedLinesNotice } from "../../trace/reader.ts";
import { safeText } from "../../display/terminal_text.ts";
import { createAgent } from "../../agent/agent.ts";
import { importRecordMask, maskReport, projectImportSecrets } from "../../agent/import_mask.ts";
import { currentSecretsMask, currentSecretsMaskValue } from "./_display_mask.ts";
import type { CompactionResult } from "../../agent/compaction.ts";
import { builtinToolPreviews } from "../../agent/tool_previews.ts";
import { createRenderer } from "../render/mod.ts";
import { stderrProgress } from "../render/progress.ts";
import {
  bool,
  type Flag,
  flagHelp,
  flagValue,
  type Parsed,
  parseDeclared,
  positiveInteger,
  str,
} from "../args.ts";
import { AGENT_ID, JSON_OUTPUT, PROJECT_ID } from "./_common_flags.ts";
import { type Command, type CommandContext, commandGroup } from "../command.ts";
import { confirmed } from "./_confirm.ts";
import { WORKSPACE } from "./_session_flags.ts";
import { discoverImports } from "./_import_discover.ts";
import { printJson, printJsonArray } from "../json.ts";
import { openRegularNow } from "../../state/_fs.ts";

/** The flags every `sessions` command takes: which agent's sessions, and JSON output. */
const SCOPE_FLAGS: readonly Flag<unknown>[] = [
  PROJECT_ID,
  AGENT_ID,
  { ...JSON_OUTPUT, help: "print JSON instead of text" },
];

/** The "Flags:" lines of a `sessions` command: its own `flags`, then the scope flags. */
const flagLines = (flags: readonly Flag<unknown>[] = []) =>
  flagHelp([...flags, ...SCOPE_FLAGS], 22);

const TARGET_HELP = `<session> is a session id, a unique part of one (its start, its end, or the
start of its 8 hex digits; several matches are an error that lists them),
the path of one of its trace files, or "latest" (the most recent session
with records, subagent sessions skipped). Every command that takes a
session resolves it this way.`;

function scopeOf(ctx: CommandContext, p: Parsed): SessionScope {
  const agent = str(p, "agent-id") ?? str(p, "agent") ?? DEFAULT_AGENT_ID;
  return {
    root: resolveDataRoot({ root: ctx.root }),
    projectId: validateProjectId(str(p, "project-id") ?? DEFAULT_PROJECT_ID),
    agentId: validateAgentId(agent),
  };
}

/** A session_meta as recorded (its keys are the protocol's). */
const VERBATIM = new Set(["meta"]);

function json(ctx: CommandContext, value: unknown): void {
  printJson(ctx.io, value, VERBATIM);
}

function one(command: string, p: Parsed, what: string): string {
  const v = p.positionals[0];
  if (v === undefined || v === "") throw new PenguinError("usage", `${command}: give ${what}`);
  return v;
}

function parse(
  command: string,
  args: string[],
  ctx: CommandContext,
  help: string,
  flags: readonly Flag<unknown>[],
  max?: number,
): Parsed | null {
  const p = parseDeclared(command, args, [...flags, ...SCOPE_FLAGS], max);
  if (bool(p, "help")) {
    ctx.io.out(help);
    return null;
  }
  return p;
}

const LIMIT: Flag<number> = {
  name: "limit",
  type: "string",
  value: "<n>",
  help: "show the n most recent sessions (default 20)",
  parse: (raw, label) => positiveInteger(raw, label),
};

const LIST_FLAGS: readonly Flag<unknown>[] = [
  {
    name: "all",
    type: "boolean",
    help: "every session: every agent's (an AGENT column),\n" +
      "0-turn and subagent ones, no limit",
  },
  LIMIT,
  { ...WORKSPACE, help: "only the sessions recorded in this workspace directory" },
  { name: "agent", type: "string", value: "<id>", help: "same as --agent-id" },
];

const DEFAULT_LIMIT = 20;

const LIST_HELP = `Usage: penguin sessions list [--all] [--limit <n>] [--workspace <dir>]
                             [--agent-id <id>] [--json]

List sessions, newest first, read straight from the trace files (no index):
id, created, last activity, model, workspace, turns, tokens and first prompt.
By default the ${DEFAULT_LIMIT} most recent are shown, and sessions with no completed turn
and subagent sessions (see "penguin sessions tree") are left out; the last
line says how many were. On a terminal the table fits its width: the first
prompt is cut, and on narrow terminals CREATED goes, LAST ACTIVITY becomes
AGE, and the workspace is shortened or left out. Only the head of each
session's first file and the last 64 KiB of its latest file are read. TURNS
is "?" when counting would mean reading large files whole (see "penguin
sessions show" for the exact count).

Flags:
${flagLines(LIST_FLAGS)}
`;

/** The columns a listing may use: the terminal's, or COLUMNS; none into a pipe. */
function listWidth(ctx: CommandContext): number | undefined {
  if (ctx.io.isTty) {
    try {
      return Deno.consoleSize().columns;
    } catch {
      // No size to be had: fall back to COLUMNS.
    }
  }
  const env = Number(Deno.env.get("COLUMNS"));
  return Number.isInteger(env) && env > 0 ? env : undefined;
}

async function listCommand(args: string[], ctx: CommandContext): Promise<number> {
  const p = parse("sessions list", args, ctx, LIST_HELP, LIST_FLAGS, 0);
  if (!p) return 0;
  const scope = scopeOf(ctx, p);
  const all = bool(p, "all");
  const workspace = str(p, WORKSPACE.name);
  const limit = flagValue(p, LIMIT) ?? (all ? undefined : DEFAULT_LIMIT);
  const listed = await listSessions({ ...scope, allAgents: all });
  const selected = await selectSessions(listed, {
    everything: all,
    ...(workspace !== undefined ? { workspace } : {}),
    ...(limit !== undefined ? { limit } : {}),
  });
  const { hidden, omitted } = selected;
  // Titles and workspaces come from the traces: masked with the secrets known now, as sessions show.
  const rows = await currentSecretsMaskValue(
    "sessions list",
    selected.rows,
    selected.rows.map((r) => r.latestPath),
    ctx,
    scope,
  );
  if (bool(p, "json")) printJsonArray(ctx.io, rows, VERBATIM);
  else {
    for (const part of sessionListParts(rows, all, listWidth(ctx))) ctx.io.out(safeText(part));
    const notes = [
      ...(omitted > 0 ? [`${omitted} older (--limit <n>)`] : []),
      ...(hidden > 0 ? [`${hidden} with no turn or of a subagent (--all)`] : []),
    ];
    if (notes.length > 0) ctx.io.out(`Not shown: ${notes.join("; ")}.\n`);
  }
  if (listed.length === 0 && !all && scope.agentId !== DEFAULT_AGENT_ID) {
    await noteUnknownAgent(ctx, scope);
  }
  return 0;
}

/** On stderr: the agent asked for does not exist (a mistyped --agent-id), and which ones do. */
async function noteUnknownAgent(ctx: CommandContext, scope: SessionScope): Promise<void> {
  const dir = agentsDir(scope);
  const agents: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.isDirectory && !e.name.startsWith(".")) agents.push(e.name);
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  if (agents.includes(scope.agentId)) return;
  const known = agents.length === 0 ? "none yet" : agents.sort().join(", ");
  ctx.io.err(
    `penguin: agent ${scope.agentId} does not exist in project ${scope.projectId} (${dir}: ${known})${
      didYouMeanText(scope.agentId, agents)
    }\n`,
  );
}

const SHOW_HELP = `Usage: penguin sessions show <session> [--json]

Show a session: its model, workspace and counters, then its messages in
order across all of its trace files. The human prompts are numbered 1..n
(the numbers "sessions fork" takes); assistant text, thinking, tool calls
(->) and tool outputs (<-), aborts, failed requests and compactions are
listed compactly under the prompt they follow.

${TARGET_HELP}

Flags:
${flagLines()}
`;

async function showCommand(args: string[], ctx: CommandContext): Promise<number> {
  const p = parse("sessions show", args, ctx, SHOW_HELP, [], 1);
  if (!p) return 0;
  const scope = scopeOf(ctx, p);
  const located = await locateSession({ ...scope, target: one("sessions show", p, "a session") });
  const files = located.files.map((f) => f.path);
  const mask = await currentSecretsMask("sessions show", files, ctx, scope);
  const outline = await buildOutline(located, { preview: bool(p, "json") ? 2000 : 300, mask });
  for (const f of located.files) {
    const notice = skippedLinesNotice(
      f.path,
      outline.problems.filter((x) => x.file === f.path),
      problemsLeftOut(outline.problems, f.path),
    );
    if (notice) ctx.io.err(notice + "\n");
  }
  if (bool(p, "json")) {
    const { problems, ...rest } = outline;
    json(ctx, { ...rest, skipped: problems });
  } else {
    ctx.io.out(safeText(formatOutline(outline)));
  }
  return 0;
}

function printCopy(ctx: CommandContext, p: Parsed, c: CopiedSession, what: string): void {
  if (bool(p, "json")) {
    json(ctx, c);
    return;
  }
  ctx.io.out(
    `${what} into ${c.sessionId}\n  trace ${c.path} (${c.records} record(s) copied)\n` +
      `Continue it with:\n${c.continueWith.map((l) => `  ${l}\n`).join("")}`,
  );
}

const BEFORE: Flag<number> = {
  name: "before",
  type: "string",
  value: "<n>",
  help: "the new session holds the history before user message n",
  parse: positiveInteger,
};
const AT: Flag<number> = {
  name: "at",
  type: "string",
  value: "<n>",
  help: "the new session holds the history up to the assistant's\n" +
    "complete answer to user message n (the end of the last\ncompleted request of that task)",
  parse: positiveInteger,
};
const FORK_FLAGS = [BEFORE, AT];

const FORK_HELP = `Usage: penguin sessions fork <session> (--before <n> | --at <n>) [--json]

Create a new session from part of an existing one. n is a user message
number as "penguin sessions show" lists them.

${flagHelp(FORK_FLAGS, 17)}

The new session gets a new id and a session_meta with the same provider,
model, system prompt and workspace plus a "lineage" field naming the source;
the source's records are copied byte for byte. The source is never changed.
Prints the new id and the commands that continue it.

${TARGET_HELP}

Flags:
${flagLines()}

Example: retry the latest session from before its third prompt:
  penguin sessions show latest
  penguin sessions fork latest --before 3
`;

async function forkCommand(args: string[], ctx: CommandContext): Promise<number> {
  const p = parse("sessions fork", args, ctx, FORK_HELP, FORK_FLAGS, 1);
  if (!p) return 0;
  const scope = scopeOf(ctx, p);
  const session = one("sessions fork", p, "a session");
  const before = flagValue(p, BEFORE);
  const at = flagValue(p, AT);
  const c = await forkSession({ ...scope, session, before, at });
  const where = before !== undefined ? `before user message ${before}` : `at user message ${at}`;
  printCopy(ctx, p, c, `Forked ${c.lineage.parent_session_id} ${where}`);
  return 0;
}

const CLONE_HELP = `Usage: penguin sessions clone <session> [--json]

Create a new session holding the committed history of an existing one at its
current leaf (its latest trace file, less a request or compaction still in
progress). Same model, system prompt and workspace; a "lineage" field names
the source, which is never changed. Prints the new id and the commands that
continue it.

${TARGET_HELP}

Flags:
${flagLines()}
`;

async function cloneCommand(args: string[], ctx: CommandContext): Promise<number> {
  const p = parse("sessions clone", args, ctx, CLONE_HELP, [], 1);
  if (!p) return 0;
  const scope = scopeOf(ctx, p);
  const c = await cloneSession({ ...scope, session: one("sessions clone", p, "a session") });
  printCopy(ctx, p, c, `Cloned ${c.lineage.parent_session_id}`);
  return 0;
}

const FROM: Flag<Harness> = {
  name: "from",
  type: "string",
  value: "codex|claude|pi",
  help: "the files are sessions of this harness (default: detected\nfrom each file's content)",
  choices: HARNESSES,
  parse: (raw, label) => {
    if ((HARNESSES as readonly string[]).includes(raw)) return raw as Harness;
    throw new PenguinError(
      "usage",
      `${label}: expected codex, claude or pi, got ${JSON.stringify(raw)}`,
    );
  },
};

const IMPORT_FLAGS: readonly Flag<unknown>[] = [
  FROM,
  {
    name: "lenient",
    type: "boolean",
    help: "skip bad lines (each one is reported) instead of refusing the file",
  },
  {
    name: "no-children",
    type: "boolean",
    help: "do not bring along the subagent children found next to a session",
  },
  {
    ...WORKSPACE,
    help:
      "the directory the sessions continue in; must exist\n(default: the current directory); with\n" +
      "--from and no file, also: import the sessions recorded there",
  },
  {
    name: "latest",
    type: "boolean",
    help: "with --from and no file: only the most recent session",
  },
  {
    name: "all",
    type: "boolean",
    help:
      "with --from and no file: every session of the harness,\nwhatever directory it was recorded in",
  },
  {
    name: "again",
    type: "boolean",
    help: "import a session imported before again (a new copy)",
  },
  { name: "verbose", type: "boolean", help: "print the full loss report of each session" },
];

const IMPORT_HELP =
  `Usage: penguin sessions import <file.jsonl>... [--workspace <dir>] [--from codex|claude|pi]
                               [--lenient] [--again] [--verbose] [--json]
       penguin sessions import --from codex|claude|pi [--latest | --all] [--workspace <dir>]

Import sessions into the agent's traces directory: penguin trace files, or
sessions recorded by OpenAI Codex CLI, Claude Code or pi (the harness is
detected from each file's content, or given with --from).

A penguin trace is copied: every line must be a valid OmniMessage record and
the first record a session_meta; a file with a bad line is refused with
"file:line: reason" errors. Files of one session (x_001.jsonl, x_002.jsonl)
import as one session. A session whose id already exists gets a new id;
nothing is ever overwritten. The session_meta records where it came from
("imported_from") and the workspace chosen (below); every other line but a
workspace_moved record is copied verbatim.

In every format, the agent's vault values and MCP server secrets (env,
header and inline values) are masked wherever they appear in an imported
record; stderr says how many records were masked.

A foreign session is converted into a new session: prompts, answers,
thinking, every tool call paired with its output (names and arguments as
recorded), token usage and timestamps; its session_meta keeps the harness,
the original id, version, cwd and file in "imported_from". Claude Code
subagent transcripts next to the session become child sessions. A pi
session tree imports the branch leading to its last entry. The loss report
(--verbose, --json) lists every kind of record that could not be mapped,
with its count, an example file:line and why. A file with a malformed line is refused (file:line
errors) unless --lenient; nothing is written for a refused file. Continue
an imported session with: penguin run --resume <session> --provider <p>
--model-id <m>.

With --from and no file, the sessions are found where that harness keeps
them: Codex in $CODEX_HOME/sessions (~/.codex/sessions), Claude Code in
$CLAUDE_CONFIG_DIR/projects (~/.claude/projects), pi in
$PI_CODING_AGENT_DIR/sessions (~/.pi/agent/sessions). By default those
recorded in the current directory (or the --workspace directory) are
imported; --all imports every one, --latest only the most recent. Nothing
found is an error (exit 1) naming where it looked.

Each foreign session prints one line: its messages and tool calls, and
either "everything the model saw was imported" or what the model saw that
was not (records it never saw, such as UI events and duplicates, are not
named). --verbose prints the full loss report; --json always has it. A
session already here (a penguin trace of the same session id, imported or
recorded here, or a foreign session of the same harness and id) is not
imported again: it says "already imported as <id>" and writes nothing;
--again imports a new copy.

Where an imported session works: the directory named with --workspace, else
the current directory, never the one its file recorded (a file can name any
directory, the home directory too). The import says which; the recorded
path is kept in "imported_from" only. A workspace_moved record of a penguin
trace is left out (and reported) for the same reason.

Flags:
${flagLines(IMPORT_FLAGS)}

Examples:
  penguin sessions import --from codex --latest
  penguin sessions import --from claude --all
  penguin sessions import ~/.codex/sessions/2026/01/02/rollout-*.jsonl
  penguin sessions import ~/.claude/projects/-home-me-app/*.jsonl --lenient
  penguin sessions import backup/session-2026-01-02-*.jsonl --agent-id reviewer

Exit codes: 0 all imported, 1 some file refused, 2 usage error.
`;

/** The files to import: those given, or (with --from and none given) the harness's own sessions. */
async function gatherImportFiles(p: Parsed, from: Harness | undefined): Promise<void> {
  if (p.positionals.length === 0) {
    if (from === undefined) {
      throw new PenguinError(
        "usage",
        "sessions import: give at least one trace file, or --from codex|claude|pi to find that harness's sessions",
      );
    }
    const dir = flagValue(p, WORKSPACE);
    p.positionals.push(
      ...await discoverImports(from, {
        all: bool(p, "all"),
        latest: bool(p, "latest"),
        workspace: dir ?? Deno.cwd(),
      }),
    );
  } else if (bool(p, "all") || bool(p, "latest")) {
    throw new PenguinError(
      "usage",
      "sessions import: --all and --latest choose among found sessions; give them without files",
    );
  }
}

async function importCommand(args: string[], ctx: CommandContext): Promise<number> {
  // Long because: one command in its order (files sorted by harness, the secrets and progress,
  // both imports, the masked report as text or JSON); each step a few lines on shared locals.
  const p = parse("sessions import", args, ctx, IMPORT_HELP, IMPORT_FLAGS);
  if (!p) return 0;
  const scope = scopeOf(ctx, p);
  const from = flagValue(p, FROM);
  await gatherImportFiles(p, from);
  const lenient = bool(p, "lenient");
  const workspace = await chooseImportWorkspace(flagValue(p, WORKSPACE), () => Deno.cwd());
  // Without --from, each file goes where its content says; unknown ones get today's checks.
  const penguinFiles: string[] = [];
  const foreignFiles: string[] = [];
  for (const f of p.positionals) {
    if (from !== undefined) foreignFiles.push(f);
    else if (sniffForeign(f)) foreignFiles.push(f);
    else penguinFiles.push(f);
  }
  const progress = stderrProgress(ctx.io, bool(p, "json"));
  const all = p.positionals.length;
  // Every imported record is masked with the secrets known now (an old trace may hold one), the
  // other agents' vault values too, and so is every name printed while it runs.
  const secrets = await projectImportSecrets(scope), mask = importRecordMask(secrets);
  const onFile = (offset: number) => (done: number, _total: number, file: string) =>
    progress.show(
      maskReport(`importing ${offset + done + 1}/${all} ${basename(file)}`, secrets),
    );
  let report: Awaited<ReturnType<typeof importTraces>>;
  let foreign: Awaited<ReturnType<typeof importForeign>> | null;
  try {
    report = penguinFiles.length > 0
      ? await importTraces(penguinFiles, {
        ...scope,
        workspace,
        lenient,
        children: !bool(p, "no-children"),
        onFile: onFile(0),
        already: await importedPenguin(scope),
        again: bool(p, "again"),
        ...(mask ? { mask } : {}),
      })
      : { ok: true, imported: [], refused: [], skipped: [], missingChildren: [], masked: 0 };
    foreign = foreignFiles.length > 0
      ? await importForeign(foreignFiles, {
        ...scope,
        workspace,
        lenient,
        ...(from ? { from } : {}),
        onFile: onFile(penguinFiles.length),
        already: await importedForeign(scope),
        again: bool(p, "again"),
        ...(mask ? { mask } : {}),
      })
      : null;
  } finally {
    progress.done();
  }
  [report, foreign] = maskReport([report, foreign] as const, secrets); // paths the files recorded
  const ok = report.ok && (foreign?.ok ?? true);
  const masked = maskedNote(ctx, report.masked + (foreign?.masked ?? 0));
  if (bool(p, "json")) {
    const placed = { workspace: workspace.path, workspace_from: workspace.from };
    json(
      ctx,
      foreign
        ? {
          ...report,
          ok,
          masked,
          refused: [...report.refused, ...foreign.refused],
          foreign: foreign.imported,
          foreign_with_parent: foreign.withParent,
          foreign_already: foreign.already,
          ...placed,
        }
        : { ...report, ...placed },
    );
    return ok ? 0 : 1;
  }
  printImport(ctx, report, foreign, bool(p, "verbose"));
  if (report.imported.length + (foreign?.imported.length ?? 0) > 0) {
    ctx.io.out(safeText(`${importWorkspaceNote(workspace)}\n`));
  }
  return ok ? 0 : 1;
}

/** Say on stderr how many imported records were masked; returns that count. */
function maskedNote(ctx: CommandContext, masked: number): number {
  if (masked > 0) {
    ctx.io.err(`penguin: masked secrets (vault or MCP values) in ${masked} imported record(s)\n`);
  }
  return masked;
}

/** The import report for a terminal: each session imported, skipped records, refusals, totals. */
function printImport(
  ctx: CommandContext,
  report: Awaited<ReturnType<typeof importTraces>>,
  foreign: Awaited<ReturnType<typeof importForeign>> | null,
  verbose: boolean,
): void {
  for (const s of report.imported) {
    const as = s.renamed ? ` as ${s.sessionId} (the id ${s.originalId} was taken)` : "";
    ctx.io.out(safeText(
      `Imported ${s.renamed ? s.originalId : s.sessionId}${as}: ${s.files.length} file(s)\n` +
        s.files.map((f) => `  ${f.source} -> ${f.path}\n`).join("") +
        `  continues in ${s.workspace} (its file recorded "${s.recordedWorkspace}")\n`,
    ));
  }
  for (const s of foreign?.imported ?? []) {
    ctx.io.out(safeText(verbose ? formatForeignImport(s) : foreignImportLine(s)));
  }
  for (const a of report.already ?? []) {
    ctx.io.out(safeText(
      `${
        a.files[0]
      }: already imported as ${a.sessionId} (nothing written; --again imports a new copy)\n`,
    ));
  }
  for (const a of foreign?.already ?? []) {
    ctx.io.out(safeText(
      `${a.file}: already imported as ${a.sessionId} (nothing written; --again imports a new copy)\n`,
    ));
  }
  for (const f of foreign?.withParent ?? []) {
    ctx.io.out(safeText(`${f}: a subagent transcript, imported with its parent session\n`));
  }
  for (const line of report.skipped) ctx.io.err(safeText(`${line}\n`));
  for (const s of foreign?.imported ?? []) {
    for (const x of [s, ...s.children]) {
      for (const line of x.skipped) ctx.io.err(safeText(`${line} (skipped)\n`));
    }
  }
  for (const r of [...report.refused, ...(foreign?.refused ?? [])]) {
    ctx.io.err(safeText(
      `penguin: refused ${r.files.join(", ")}:\n${r.errors.map((e) => `  ${e}\n`).join("")}`,
    ));
  }
  const imported = report.imported.length + (foreign?.imported.length ?? 0);
  const refused = report.refused.length + (foreign?.refused.length ?? 0);
  ctx.io.out(`${imported} session(s) imported, ${refused} refused\n`);
}

/** True when `file` reads as a Codex, Claude Code or pi session (unreadable files: false). */
function sniffForeign(file: string): boolean {
  // The first line decides; it can be long (Codex records its instructions there).
  const chunks: Uint8Array[] = [];
  try {
    // Opened without blocking and checked as opened: a FIFO swapped in after a look hung the
    // open (attack round 30 p04; the import refuses it).
    using f = openRegularNow(file);
    for (let total = 0; total < 8 << 20;) {
      const buf = new Uint8Array(1 << 16);
      const n = f.read(buf);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      total += n;
      if (buf.subarray(0, n).includes(10)) break;
    }
  } catch {
    return false;
  }
  const head = new TextDecoder().decode(concatBytes(chunks));
  const format = detectFormat(head);
  return format !== null && format !== "penguin";
}

const DELETE_FLAGS: readonly Flag<unknown>[] = [
  { name: "yes", short: "y", type: "boolean", label: "--yes, -y", help: "do not ask" },
];

const DELETE_HELP = `Usage: penguin sessions delete <session> [--yes]

Delete a session: its trace files, its scratchpad directory, its MCP server
logs and its child (subagent) sessions, found through the "subagent" events
of its traces.
Asks "Delete session … and N child session(s)? [y/N]" on a terminal; without
a terminal it refuses (exit 2) unless --yes is given. A session in use by a
live process (its trace lock is held) is refused and nothing is deleted.

${TARGET_HELP}

Flags:
${flagLines(DELETE_FLAGS)}
`;

async function deleteCommand(args: string[], ctx: CommandContext): Promise<number> {
  const p = parse("sessions delete", args, ctx, DELETE_HELP, DELETE_FLAGS, 1);
  if (!p) return 0;
  const scope = scopeOf(ctx, p);
  const session = one("sessions delete", p, "a session");
  const plan = await planDelete({ ...scope, session });
  const children = childCount(plan);
  if (
    !bool(p, "yes") &&
    !(await confirmed(
      ctx,
      `Delete session ${plan.sessionId} and ${children} child session(s)`,
      `sessions delete: not deleting ${plan.sessionId}`,
    ))
  ) {
    ctx.io.out("Not deleted.\n");
    return 1;
  }
  // What it names comes from the traces (a pointer's child id): masked with the secrets known
  // now, as every view is (attack round 23 secrets B5).
  const done = await currentSecretsMaskValue(
    "sessions delete",
    await deleteSession({ ...scope, session }),
    [],
    ctx,
    scope,
  );
  if (bool(p, "json")) {
    json(ctx, done);
    return 0;
  }
  const files = done.files.length;
  const scratch = done.scratchpad ? ", its scratchpad" : "";
  ctx.io.out(
    `Deleted session ${done.sessionId} (${files} trace file(s)${scratch}) and ${
      childCount(done)
    } child session(s)\n`,
  );
  if (done.missingChildren.length > 0) {
    ctx.io.err(`Child session(s) not found: ${done.missingChildren.join(", ")}\n`);
  }
  return 0;
}

const TREE_HELP = `Usage: penguin sessions tree [<session>] [--json]

Show sessions as a tree: forks and clones under the session they came from
(their "lineage"), subagent sessions under the session that spawned them.
With a session, only the tree holding it.

${TARGET_HELP}

Flags:
${flagLines()}
`;

async function treeCommand(args: string[], ctx: CommandContext): Promise<number> {
  const p = parse("sessions tree", args, ctx, TREE_HELP, [], 1);
  if (!p) return 0;
  const scope = scopeOf(ctx, p);
  const found = await sessionTree({ ...scope, session: p.positionals[0] });
  const paths = (nodes: TreeNode[]): string[] =>
    nodes.flatMap((n) => [...(n.summary ? [n.summary.latestPath] : []), ...paths(n.children)]);
  // Titles come from the traces: masked with the secrets known now, as sessions show.
  const forest = await currentSecretsMaskValue("sessions tree", found, paths(found), ctx, scope);
  if (bool(p, "json")) printJsonArray(ctx.io, forest, VERBATIM);
  else for (const part of treeParts(forest)) ctx.io.out(safeText(part));
  return 0;
}

const COMPACT_HELP = `Usage: penguin sessions compact <session> [--json]

Compact a session's context now, as /compact does in chat: resume the
session (its recorded workspace and model, which must still be configured),
summarize the context with one compaction request on the session's model
(or discard it, per the agent's compaction.mode), then exit. The next time
the session is resumed, its context is the summary alone. Nothing is written
when there is nothing to compact (no completed request since the session
started or was last compacted).

${TARGET_HELP}

Flags:
${flagLines()}

Exit codes: 0 compacted or nothing to compact, 1 the compaction failed or
the session cannot be resumed, 2 usage or config error.
`;

async function compactCommand(args: string[], ctx: CommandContext): Promise<number> {
  const p = parse("sessions compact", args, ctx, COMPACT_HELP, [], 1);
  if (!p) return 0;
  const scope = scopeOf(ctx, p);
  const target = one("sessions compact", p, "a session");
  const agent = await createAgent({
    root: scope.root,
    projectId: scope.projectId,
    agentId: scope.agentId,
  });
  const session = await agent.resumeSession({ target, warn: (l) => ctx.io.err(l + "\n") });
  const asJson = bool(p, "json");
  const renderer = asJson ? undefined : createRenderer({
    write: ctx.io.out,
    color: ctx.io.color,
    collapse: false,
    spinner: false,
    toolPreviews: builtinToolPreviews,
  });
  const ctl = new AbortController();
  const onSignal = () => ctl.abort(new DOMException("interrupted by a signal", "AbortError"));
  Deno.addSignalListener("SIGINT", onSignal);
  let result: CompactionResult;
  try {
    const gen = session.compact({ signal: ctl.signal });
    let r = await gen.next();
    for (; !r.done; r = await gen.next()) {
      renderer?.push(r.value);
    }
    result = r.value;
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
    renderer?.flush();
    await session.dispose();
  }
  if (asJson) {
    json(ctx, { session_id: session.sessionId, trace: session.tracePath, ...result });
  } else if (result.status === "skipped") {
    const why = result.skipped === "just_compacted"
      ? "it was just compacted"
      : "no completed request in its current context";
    ctx.io.out(`Nothing to compact in ${session.sessionId}: ${why}\n`);
  }
  return result.status === "completed" || result.status === "skipped" ? 0 : 1;
}

/** The sessions commands. */
export const sessionsCommands: Command[] = commandGroup(["sessions"], [
  ["list", "list sessions", LIST_HELP, listCommand],
  ["show", "show a session's numbered messages", SHOW_HELP, showCommand],
  ["fork", "new session from a session before/at a user message", FORK_HELP, forkCommand],
  ["clone", "new session from a session's current state", CLONE_HELP, cloneCommand],
  ["import", "import trace files as sessions", IMPORT_HELP, importCommand],
  ["delete", "delete a session and its subagent sessions", DELETE_HELP, deleteCommand],
  ["compact", "compact a session's context now", COMPACT_HELP, compactCommand],
  ["tree", "show forks and subagent sessions as a tree", TREE_HELP, treeCommand],
]);
