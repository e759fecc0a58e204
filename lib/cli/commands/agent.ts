/**
 * `penguin agent snapshot|import`: an agent's state as a `.tar.gz`
 * (`<agent>/snapshots/v<version>.tar.gz`), and restoring one into an agent.
 *
 * @module
 */
import { resolve } from "node:path";
import { PenguinError } from "../../protocol/errors.ts";
import {
  agentPaths,
  type AgentRef,
  type BuiltinToolConfig,
  DEFAULT_AGENT_ID,
  DEFAULT_PROJECT_ID,
  parseSystemConfig,
  resolveDataRoot,
  resolveSystemConfig,
  type SystemConfig,
  validateAgentId,
  validateProjectId,
} from "../../state/mod.ts";
// Not re-exported by state/mod.ts: only this command loads the tar writer.
import {
  discardSnapshot,
  type InstalledSnapshot,
  installSnapshot,
  readSnapshot,
  type SkippedEntry,
  snapshotAgent,
  type SnapshotArchive,
} from "../../state/snapshot.ts";
import { serversNeedingUrl } from "../../state/snapshot_secrets.ts";
import { liveSessions } from "../../trace/lock.ts";
import { envWithApiKeys } from "../../sandbox/api_key_env.ts";
import { definitionFromConfig, resolveToolDefinitions } from "../../agent/toolset.ts";
import { resolveTelemetry } from "../../telemetry/config.ts";
import type { ToolDefinition } from "../../tools/tool.ts";
import { bool, type Flag, flagHelp, type Parsed, parseDeclared, str } from "../args.ts";
import { escapeControls, safeText } from "../../display/terminal_text.ts";
import { AGENT_TARGET } from "./_common_flags.ts";
import { type Command, type CommandContext, commandGroup } from "../command.ts";
import { stderrProgress } from "../render/progress.ts";
import { confirmed } from "./_confirm.ts";
import { printHelp } from "./_config_common.ts";

const IMPORT_FLAGS: readonly Flag<unknown>[] = [
  {
    name: "yes",
    short: "y",
    type: "boolean",
    label: "--yes, -y",
    help: "replace an equal or newer version; accept what it sends out or runs",
  },
  {
    name: "force",
    type: "boolean",
    help: "import even while sessions of the agent are running",
  },
  ...AGENT_TARGET,
];

const SNAPSHOT_HELP = `Usage: penguin agent snapshot [--agent-id <id>] [--project-id <id>]

Pack the agent's state (agent_state/: system_config.yaml, AGENTS.md, skills,
memory, schedules…) into <agent>/snapshots/v<version>.tar.gz, where version
is the "version" of its system_config.yaml. Every .vault.toml (and any
.project_config.toml) is left out at any depth, and so is the chat input
history; symbolic links are left out and reported. Permission bits are
kept. Every vault value and API key penguin knows is masked in every text
file packed ([redacted:vault:NAME]); a binary file or a name holding one
is left out. MCP env and header values, telemetry header values and the
credentials of their URLs are emptied (URLs cut to scheme://host:port);
a system_config.yaml using a YAML alias or merge key (<<) is refused. A
version is packed once: when its archive exists it is not repacked (raise
"version" in system_config.yaml to take a new snapshot).

Flags:
${flagHelp(AGENT_TARGET, 23)}
`;

const IMPORT_HELP =
  `Usage: penguin agent import <file.tar.gz> [--yes] [--agent-id <id>] [--project-id <id>]

Replace the agent's state with a snapshot (see penguin agent snapshot); an
agent that does not exist yet is created. The archive is checked whole
before anything is written: every entry must be a plain file or directory
under agent_state/ (no absolute paths, no "..", no links or devices), within
the size limits, and agent_state/system_config.yaml must hold a
system_prompt and a version. A vault is never imported: a .vault.toml in
the archive is skipped and reported, and the agent keeps its own vault and
chat history. The new state is built beside the old one and renamed into
place, so a failed import changes nothing.

A running session of the agent (a live process holding one of its session
locks, traces/.locks/) reads the state it would replace: the import is
refused (exit 1) and names the sessions, unless --force is given. An import
interrupted between its two renames (the process killed) is rolled back by
the next import or the next load of the agent: the old state under
.agent_state.old-<tag> is renamed back, and what it did is printed.

Importing a version that is not newer than the agent's current one asks
for confirmation on a terminal; without a terminal it is refused (exit 2)
unless --yes is given. So is a snapshot that sets up what sends data off
this machine or runs programs beyond the model's commands: a telemetry
endpoint (and the headers sent to it), every MCP server (its command line
or URL, and what it reaches beyond the sandbox), every scheduled task,
enabled or not (with the workspace each would write in), skills that may
run commands (any file but SKILL.md, text and images, and any executable
file, #! file or file under scripts/ or bin/), and every built-in tool
setting it changes from the tool's default: permission (r runs a tool
unasked under --approve read-only), limits (timeoutMs or maxOutputLength
0 lifts them) and definition (description, parameters). Each is listed
first; the refusal lists them too.
telemetry.include_content (message contents on the spans) is never
taken from a snapshot: it is taken out and reported.

Flags:
${flagHelp(IMPORT_FLAGS, 23)}
`;

async function readTextIfExists(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

function agentRef(ctx: CommandContext, p: Parsed): AgentRef {
  return {
    root: resolveDataRoot({ root: ctx.root }),
    projectId: validateProjectId(str(p, "project-id") ?? DEFAULT_PROJECT_ID),
    agentId: validateAgentId(str(p, "agent-id") ?? DEFAULT_AGENT_ID),
  };
}

function reportSkipped(ctx: CommandContext, skipped: readonly SkippedEntry[]): void {
  for (const s of skipped) {
    ctx.io.err(safeText(`penguin: ${s.packed ? "packed" : "skipped"} ${s.path}: ${s.reason}\n`));
  }
}

async function snapshotCommand(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("agent snapshot", args, AGENT_TARGET, 0);
  if (bool(p, "help")) return printHelp(ctx, SNAPSHOT_HELP);
  const ref = agentRef(ctx, p);
  const paths = agentPaths(ref);
  const text = await readTextIfExists(paths.systemConfig);
  if (text === undefined) {
    throw new PenguinError(
      "not_found",
      `agent snapshot: agent ${ref.agentId} has no state yet ("${paths.systemConfig}" does not exist)`,
    );
  }
  const version = resolveSystemConfig(parseSystemConfig(text, paths.systemConfig)).version;
  // What a running session's commands may change (its memory) is not read from under them.
  const { refuseWhereCommandsWrite } = await import("../../sandbox/live_writers.ts");
  await refuseWhereCommandsWrite(paths.agentState, `Cannot snapshot agent ${ref.agentId}`);
  // Loaded when used: the masker is no part of the other commands' startup.
  const { snapshotTextMask } = await import("../../agent/snapshot_known_secrets.ts");
  const mask = await snapshotTextMask(ref, await envWithApiKeys());
  const progress = stderrProgress(ctx.io);
  const done = await snapshotAgent(
    paths,
    version,
    undefined,
    (files, bytes) =>
      progress.show(
        `packing ${files} file${files === 1 ? "" : "s"}, ${(bytes / 1024 / 1024).toFixed(1)} MiB`,
      ),
    mask,
  ).finally(() => progress.done());
  if (!done.created) {
    ctx.io.out(
      `Snapshot v${version} of agent ${ref.agentId} already exists: ${done.path}\n` +
        `(a version is packed once; raise "version" in ${paths.systemConfig} to take a new one)\n`,
    );
    return 0;
  }
  reportSkipped(ctx, done.skipped);
  ctx.io.out(
    `Wrote snapshot v${version} of agent ${ref.agentId}: ${done.path} (${done.files} file${
      done.files === 1 ? "" : "s"
    })\n`,
  );
  return 0;
}

/** The agent's current version, "unreadable" when its config does not parse, undefined when it has none. */
async function currentVersion(path: string): Promise<number | "unreadable" | undefined> {
  const text = await readTextIfExists(path);
  if (text === undefined) return undefined;
  try {
    return resolveSystemConfig(parseSystemConfig(text, path)).version;
  } catch {
    return "unreadable";
  }
}

/**
 * Where the archive's telemetry sends every session's spans, resolved as a
 * session resolves it (`resolveTelemetry`, without this machine's
 * environment): an empty endpoint counts as absent, so what is listed is
 * where the spans go. An endpoint that is not an http(s) URL turns the
 * export off and is not listed; header names are, since an endpoint set in
 * the environment gets them.
 */
function telemetryReach(config: SystemConfig): string[] {
  const headers = Object.keys(config.telemetry?.otlp?.headers ?? {}).sort();
  const resolved = resolveTelemetry(() => undefined, config, () => {});
  if (resolved !== null) {
    const withHeaders = headers.length > 0 ? ` with the headers ${headers.join(", ")}` : "";
    return [
      `telemetry sends the spans of every session to ${resolved.url} (${resolved.source})` +
      withHeaders,
    ];
  }
  return headers.length > 0
    ? [`telemetry.otlp.headers ${headers.join(", ")} go with every span export`]
    : [];
}

/**
 * A `tools.builtin` permission (`r` or `rw`) that differs from the tool's
 * default, or is set on a name that is no built-in tool, in words. `r` is
 * what matters (`--approve read-only` runs the tool unasked); `rw` on a
 * read-only tool only asks more, but it is a change the user accepts like
 * the others. A value other than `r` or `rw` changes nothing.
 */
function permissionReach(entry: BuiltinToolConfig, base: ToolDefinition | undefined): string[] {
  const set = entry["permission"];
  if ((set !== "r" && set !== "rw") || base?.permission === set) return [];
  const tool = base === undefined
    ? `tools.builtin entry "${entry.name}" (no built-in tool of that name)`
    : `built-in tool "${entry.name}"`;
  return set === "r"
    ? [`${tool} is marked read-only (permission: r), so --approve read-only runs it unasked`]
    : [
      `${tool} is marked permission: rw${
        base === undefined ? "" : ` (its default is ${base.permission})`
      }`,
    ];
}

/**
 * The limits and definition a `tools.builtin` entry changes, taken as a
 * session takes them (`definitionFromConfig`), in words: `timeoutMs` and
 * `maxOutputLength` (`<= 0` lifts the tool's own limit), its description,
 * parameters, `call_description` and `forModel`.
 */
function settingsReach(entry: BuiltinToolConfig, base: ToolDefinition): string[] {
  const def = definitionFromConfig(entry, base);
  const changed: string[] = [];
  if (def.timeoutMs !== base.timeoutMs) {
    const none = def.timeoutMs <= 0 ? "no time limit; " : "";
    changed.push(`timeoutMs ${def.timeoutMs} (${none}default ${base.timeoutMs})`);
  }
  if (def.maxOutputLength !== base.maxOutputLength) {
    const none = def.maxOutputLength <= 0 ? "no output cap of its own; " : "";
    changed.push(`maxOutputLength ${def.maxOutputLength} (${none}default ${base.maxOutputLength})`);
  }
  if (def.description !== base.description) changed.push("its description");
  if (JSON.stringify(def.parameters) !== JSON.stringify(base.parameters)) {
    changed.push("its parameters");
  }
  if (def.callDescription !== base.callDescription) {
    changed.push(`call_description ${def.callDescription}`);
  }
  if (def.forModel !== base.forModel) changed.push(`forModel ${def.forModel ?? "any"}`);
  return changed.length > 0
    ? [`built-in tool "${entry.name}": the snapshot sets ${changed.join("; ")}`]
    : [];
}

/**
 * What the archive's `system_config.yaml` sets up that the snapshot's own
 * listing (`archive.reach`) leaves to this command, in words: the telemetry
 * endpoint first, and last every `tools.builtin` setting that differs from
 * the tool's default (permissions, limits, definitions; the subagent tools
 * and describe_image included).
 */
function configReach(archive: SnapshotArchive): { first: string[]; last: string[] } {
  const file = archive.files.find((f) => f.path === "system_config.yaml");
  if (!file) return { first: [], last: [] };
  const config = parseSystemConfig(new TextDecoder().decode(file.data), archive.source);
  const defaults = new Map(resolveToolDefinitions().map((d) => [d.name, d]));
  const tools = (config.tools?.builtin ?? []).flatMap((t) => {
    const base = defaults.get(t.name);
    return [...permissionReach(t, base), ...(base ? settingsReach(t, base) : [])];
  });
  return { first: telemetryReach(config), last: tools };
}

/**
 * Ask before importing a snapshot that sets up what sends data off the
 * machine or runs programs beyond the model's commands (a telemetry
 * endpoint, MCP servers, scheduled tasks, skills with programs…). Without a
 * terminal: refused, listing them.
 */
async function confirmReach(ctx: CommandContext, cmd: string, reach: string[]): Promise<boolean> {
  // Controls shown as escapes, never dropped: a URL `http://good.example<ESC>]0;@evil/<BEL>`
  // showed as good.example while it connects to evil (attack round 20 imports I6-I9).
  const list = reach.map((m) => `  ${escapeControls(m)}\n`).join("");
  return await confirmed(
    ctx,
    `The snapshot sets up what sends data off this machine or runs programs:\n${list}` +
      `Import it with them`,
    `${cmd}: the snapshot sets up what sends data off this machine or runs programs beyond ` +
      `the model's commands:\n${list}Not importing it`,
  );
}

/** Ask what an import needs asked, then install `archive`; undefined when it is not made. */
async function importArchive(
  ctx: CommandContext,
  p: Parsed,
  cmd: string,
  ref: AgentRef,
  paths: ReturnType<typeof agentPaths>,
  archive: SnapshotArchive,
): Promise<InstalledSnapshot | undefined> {
  for (const d of archive.dropped) ctx.io.err(safeText(`penguin: not imported: ${d}\n`));
  // What it sends off the machine or runs is asked first: a refusal without a terminal lists it.
  const { first, last } = configReach(archive);
  const reach = [...first, ...archive.reach, ...last];
  if (reach.length > 0 && !bool(p, "yes") && !(await confirmReach(ctx, cmd, reach))) {
    ctx.io.out("Not imported.\n");
    return undefined;
  }
  const current = await currentVersion(paths.systemConfig);
  const needsConfirmation = current === "unreadable" ||
    (current !== undefined && archive.version <= current);
  if (needsConfirmation && !bool(p, "yes")) {
    const what = current === "unreadable"
      ? `agent ${ref.agentId}'s state (its system_config.yaml cannot be read)`
      : `agent ${ref.agentId} at version ${current} with version ${archive.version}${
        archive.version === current ? " (the same version)" : " (a downgrade)"
      }`;
    if (!(await confirmed(ctx, `Replace ${what}`, `${cmd}: not replacing ${what}`))) {
      ctx.io.out("Not imported.\n");
      return undefined;
    }
  }
  reportSkipped(ctx, archive.skipped);
  return await installSnapshot(paths, archive, {
    check: async () => {
      if (bool(p, "force")) return;
      const live = await liveSessions(paths.traces);
      if (live.length === 0) return;
      const named = live.map((l) =>
        l.holder ? `${l.sessionId} (process ${l.holder.pid})` : l.sessionId
      );
      throw new PenguinError(
        "locked",
        `${cmd}: agent ${ref.agentId} has ${live.length} running session(s): ${
          named.join(", ")
        }; they read the state an import replaces. Wait for them to finish, or pass --force`,
      );
    },
  });
}

async function importCommand(args: string[], ctx: CommandContext): Promise<number> {
  const cmd = "agent import";
  const p = parseDeclared(cmd, args, IMPORT_FLAGS, 1);
  if (bool(p, "help")) return printHelp(ctx, IMPORT_HELP);
  const file = p.positionals[0];
  if (!file) throw new PenguinError("usage", `${cmd}: give the snapshot file (.tar.gz)`);
  const ref = agentRef(ctx, p);
  const paths = agentPaths(ref);
  const archive = await readSnapshot(resolve(file), paths.agent);
  const config = archive.files.find((f) => f.path === "system_config.yaml");
  const needUrl = config ? serversNeedingUrl(new TextDecoder().decode(config.data)) : [];
  let done;
  try {
    done = await importArchive(ctx, p, cmd, ref, paths, archive);
  } finally {
    await discardSnapshot(archive);
  }
  if (done === undefined) return 1;
  for (const line of done.recovered) ctx.io.err(`penguin: ${line}\n`);
  const kept = done.kept.length > 0 ? `; kept its own ${done.kept.join(" and ")}` : "";
  ctx.io.out(
    `Imported snapshot v${archive.version} into agent ${ref.agentId} (${done.files} file${
      done.files === 1 ? "" : "s"
    }${kept}).\n`,
  );
  if (needUrl.length > 0) {
    ctx.io.out(
      safeText(
        `MCP servers to set up (their URL's path, query or userinfo, or arguments, were left out ` +
          `of the snapshot):\n` + needUrl.map((s) => `  ${s.command}\n`).join(""),
      ),
    );
  }
  return 0;
}

/** The `agent` commands. */
export const agentCommands: Command[] = commandGroup(["agent"], [
  [
    "snapshot",
    "pack an agent's state into snapshots/v<version>.tar.gz (no vault)",
    SNAPSHOT_HELP,
    snapshotCommand,
  ],
  [
    "import",
    "replace an agent's state with a snapshot (never its vault)",
    IMPORT_HELP,
    importCommand,
  ],
]);
