/**
 * Agent snapshots: `<agent>/snapshots/v<version>.tar.gz`, a gzip-compressed
 * tar of `agent_state/` (entries named `agent_state/…`, permission bits
 * kept), and importing one into an agent.
 *
 * Some files never travel: every `.vault.toml` and `.project_config.toml`
 * (at any depth; they hold secrets), and the top-level `chat_history` (the
 * machine's input history). A snapshot leaves them out; an import skips
 * them when an archive holds them, and keeps the agent's own. The MCP
 * servers' `env` and header values in `system_config.yaml` are secrets too:
 * the snapshot's copy has them emptied (lib/state/snapshot_secrets.ts), and
 * so are the telemetry header values and endpoint credentials
 * (lib/state/snapshot_telemetry.ts). Every other secret value penguin knows
 * is masked in every file packed, or the file left out when it is binary
 * (lib/state/snapshot_mask.ts).
 *
 * Whether message contents go to telemetry (`telemetry.include_content`)
 * never comes from a snapshot: an import takes it out of the archive's
 * `system_config.yaml` and reports it.
 *
 * An import never takes in a git repository (lib/state/_git_shapes.ts): every
 * `.git` entry at any depth, and every directory laid out as a bare
 * repository, is left out and reported (an `agent_state/` laid out as one
 * refuses the archive). The host's git would run what its configuration and
 * hooks name, and a session takes a repository it finds as the user's.
 *
 * A snapshot holds plain files and directories only: a symbolic link or
 * other special file in `agent_state/` is left out (and reported). A
 * version is packed once: when `v<version>.tar.gz` exists it is not
 * repacked.
 *
 * Reading an archive for import is strict, and streamed: it is
 * decompressed once, in pieces, into a directory of its own beside the
 * agent's state (`.agent_state.unpack-…`), holding one piece in memory
 * whatever its size, and nothing of the agent's is touched before it is
 * accepted whole: an absolute path, a `..`, a backslash, an
 * entry outside `agent_state/`, a link or device entry, a path given twice,
 * or more files or bytes than {@linkcode SNAPSHOT_LIMITS} refuses the whole
 * archive, and `agent_state/system_config.yaml` must parse with a string
 * `system_prompt` and a natural-number `version`. Installing builds the new
 * `agent_state/` in a directory beside the old one and renames it into
 * place, so a failure leaves the old state as it was; a process that dies
 * between the renames is repaired by the next import or agent load (see
 * lib/state/agent_state_swap.ts).
 *
 * @module
 */
import { basename, join, relative } from "node:path";
import { packTar } from "modern-tar";
import { PenguinError } from "../protocol/errors.ts";
import { exists, fsFailure, mkdirPrivate } from "./_fs.ts";
import { bareRepoDirs, dotGitIn, GIT_REPO_REASON } from "./_git_shapes.ts";
import { gzip } from "./_gzip.ts";
import type { TarHeader } from "./_tar.ts";
import { ArchiveFormatError, type Placement, unpackTarGz } from "./_unpack.ts";
import {
  lockAgentState,
  OLD_PREFIX,
  recoverAgentStateSwap,
  STAGE_PREFIX,
} from "./agent_state_swap.ts";
import type { AgentPaths } from "./paths.ts";
import { dropIncludeContent, snapshotReach } from "./snapshot_reach.ts";
import { parseSystemConfig } from "./system_config_parse.ts";
import { maskFile, secretInName, type TextMask } from "./snapshot_mask.ts";
import { refuseAliases, withoutMcpSecrets } from "./snapshot_secrets.ts";
import { withoutTelemetrySecrets } from "./snapshot_telemetry.ts";
import { readUntrustedBytes } from "./untrusted_file.ts";

/** Largest snapshot accepted or written: files, bytes unpacked, bytes of the archive file. */
export const SNAPSHOT_LIMITS: Readonly<SnapshotLimits> = Object.freeze({
  files: 20_000,
  bytes: 512 * 1024 * 1024,
  archiveBytes: 256 * 1024 * 1024,
});

/** Size limits of a snapshot (see {@linkcode SNAPSHOT_LIMITS}). */
export interface SnapshotLimits {
  /** Files (directories not counted). */
  files: number;
  /** Bytes of all files together. */
  bytes: number;
  /** Bytes of the `.tar.gz` file itself. */
  archiveBytes: number;
}

/** Basenames never put in a snapshot nor taken from one (compared lower-cased). */
const SECRET_NAMES: ReadonlySet<string> = new Set([".vault.toml", ".project_config.toml"]);

/** Top-level `agent_state` entries that stay with the machine. */
const LOCAL_FILES: readonly string[] = ["chat_history"];

const SPECIAL = {
  symlink: "a symbolic link",
  hardlink: "a hard link",
  other: "a device or other special file",
} as const;

/** The top directory of every entry. */
const TOP = "agent_state";

/** Why a path inside `agent_state/` does not travel, or undefined when it does. */
function staysLocal(rel: string): string | undefined {
  const parts = rel.split("/");
  if (parts.some((p) => SECRET_NAMES.has(p.toLowerCase()))) {
    return "a vault or project config is never put in a snapshot nor imported";
  }
  if (LOCAL_FILES.includes(parts[0]!)) {
    return "the chat input history stays with each machine";
  }
  return undefined;
}

/** The path of the snapshot of `version`. */
export function snapshotPath(paths: AgentPaths, version: number): string {
  return join(paths.snapshots, `v${version}.tar.gz`);
}

/** One entry left out of a snapshot or an import, and why. */
export interface SkippedEntry {
  /** `agent_state/…`. */
  path: string;
  /** Why, in words. */
  reason: string;
  /** Packed all the same, changed as `reason` says (secrets masked or emptied). */
  packed?: boolean;
}

/** The outcome of {@linkcode snapshotAgent}. */
export interface SnapshotResult {
  /** The archive. */
  path: string;
  /** The version packed. */
  version: number;
  /** False when the archive of that version existed already (it is not repacked). */
  created: boolean;
  /** Files packed (0 when not created). */
  files: number;
  /** Entries left out. */
  skipped: SkippedEntry[];
}

interface PackEntry {
  header: {
    name: string;
    size: number;
    type: "file" | "directory";
    mode: number;
    mtime: Date;
    uid: number;
    gid: number;
  };
  body?: Uint8Array;
}

async function collect(
  stateDir: string,
  limits: SnapshotLimits,
  onFile: ((files: number, bytes: number) => void) | undefined,
  mask: TextMask | undefined,
): Promise<{ entries: PackEntry[]; files: number; skipped: SkippedEntry[] }> {
  const entries: PackEntry[] = [];
  const skipped: SkippedEntry[] = [];
  let files = 0;
  let bytes = 0;
  const walk = async (dir: string, rel: string) => {
    const names: string[] = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    names.sort();
    for (const name of names) {
      const abs = join(dir, name);
      const relPath = rel === "" ? name : `${rel}/${name}`;
      const archived = `${TOP}/${relPath}`;
      const info = await Deno.lstat(abs);
      const local = staysLocal(relPath);
      if (local !== undefined) {
        if (!LOCAL_FILES.includes(relPath)) skipped.push({ path: archived, reason: local });
        continue;
      }
      const named = mask === undefined ? undefined : secretInName(name, mask);
      if (named !== undefined) {
        skipped.push({ path: mask!(archived), reason: named });
        continue;
      }
      const meta = {
        mode: (info.mode ?? 0o600) & 0o777,
        mtime: info.mtime ?? new Date(0),
        uid: 0,
        gid: 0,
      };
      if (info.isSymlink) {
        skipped.push({ path: archived, reason: "a symbolic link (snapshots hold plain files)" });
      } else if (info.isDirectory) {
        entries.push({ header: { name: `${archived}/`, size: 0, type: "directory", ...meta } });
        await walk(abs, relPath);
      } else if (info.isFile) {
        const tooBig = () =>
          new PenguinError(
            "runtime",
            `Cannot snapshot "${stateDir}": it holds more than ${limits.files} files or ${
              limits.bytes / 1024 / 1024
            } MiB, the most a snapshot holds`,
          );
        // The model writes its memory directories (and may swap a link or a FIFO in while this
        // runs): a file is read only as the regular file lstat saw, and never past the limit.
        // A file larger than what is left is refused from its size, unread.
        if (info.size > limits.bytes - bytes) throw tooBig();
        const read = await readUntrustedBytes(dir, name, Math.max(0, limits.bytes - bytes));
        if (!read.ok) {
          if (!read.missing) skipped.push({ path: archived, reason: read.message });
          continue;
        }
        if (read.truncated) throw tooBig();
        const body = packedBody(relPath, abs, read.bytes, mask, skipped);
        if (body === undefined) continue;
        files++;
        bytes += body.length;
        onFile?.(files, bytes);
        if (files > limits.files || bytes > limits.bytes) throw tooBig();
        entries.push({
          header: { name: archived, size: body.length, type: "file", ...meta },
          body,
        });
      } else {
        skipped.push({ path: archived, reason: "not a regular file" });
      }
    }
  };
  await walk(stateDir, "");
  return { entries, files, skipped };
}

/**
 * The bytes to pack of file `relPath` (read from `abs`): `system_config.yaml`
 * without its MCP and telemetry credentials, every file through `mask`;
 * undefined when the file is left out. What was changed or left out is
 * pushed on `skipped`.
 */
function packedBody(
  relPath: string,
  abs: string,
  bytes: Uint8Array,
  mask: TextMask | undefined,
  skipped: SkippedEntry[],
): Uint8Array | undefined {
  const archived = `${TOP}/${relPath}`;
  let body = bytes;
  if (relPath === "system_config.yaml") {
    refuseAliases(new TextDecoder().decode(body), abs);
    const mcp = withoutMcpSecrets(new TextDecoder().decode(body), abs);
    if (mcp.removed.length > 0) {
      skipped.push({
        path: archived,
        reason: `MCP secrets left out (values emptied): ${mcp.removed.join(", ")}`,
        packed: true,
      });
    }
    const telemetry = withoutTelemetrySecrets(mcp.text, abs);
    if (telemetry.removed.length > 0) {
      skipped.push({
        path: archived,
        reason: `telemetry credentials left out (header values emptied, URLs cut to ` +
          `scheme://host:port): ${telemetry.removed.join(", ")}`,
        packed: true,
      });
    }
    if (mcp.removed.length + telemetry.removed.length > 0) {
      body = new TextEncoder().encode(telemetry.text);
    }
  }
  if (mask === undefined) return body;
  const masked = maskFile(body, mask);
  if (masked.kind === "left_out") {
    skipped.push({ path: archived, reason: masked.reason });
    return undefined;
  }
  if (masked.kind === "same") return body;
  if (relPath === "system_config.yaml") checkMaskedConfig(masked.body, abs);
  skipped.push({
    path: archived,
    reason: masked.markers.length > 0
      ? `secret values masked (written as ${masked.markers.join(", ")})`
      : "secret values masked",
    packed: true,
  });
  return masked.body;
}

/** Refuses the snapshot when masking a secret in `system_config.yaml` left it unreadable. */
function checkMaskedConfig(body: Uint8Array, abs: string): void {
  try {
    const v = parseSystemConfig(new TextDecoder().decode(body), abs).version;
    if (typeof v === "number" && Number.isInteger(v) && v >= 1) return;
  } catch {
    // Reported below.
  }
  throw new PenguinError(
    "config",
    `Cannot snapshot "${abs}": it holds a secret value (a vault value or an API key), and the ` +
      `file masked no longer reads as a configuration; take the value out of it`,
  );
}

/**
 * Write the snapshot of the agent's `agent_state/` at `version` (the
 * agent's current version), unless that version's archive exists. `onFile`
 * is told the files and bytes read so far after each file. `mask` (every
 * secret value penguin knows replaced by its marker) is applied to every
 * file and name packed (lib/state/snapshot_mask.ts).
 */
export async function snapshotAgent(
  paths: AgentPaths,
  version: number,
  limits: SnapshotLimits = SNAPSHOT_LIMITS,
  onFile?: (files: number, bytes: number) => void,
  mask?: TextMask,
): Promise<SnapshotResult> {
  const path = snapshotPath(paths, version);
  if (await exists(path, { followLinks: false, strict: true })) {
    return { path, version, created: false, files: 0, skipped: [] };
  }
  const stateInfo = await Deno.stat(paths.agentState).catch(() => undefined);
  if (!stateInfo?.isDirectory) {
    throw new PenguinError("not_found", `Cannot snapshot: "${paths.agentState}" does not exist`);
  }
  const { entries, files, skipped } = await collect(paths.agentState, limits, onFile, mask);
  const root: PackEntry = {
    header: {
      name: `${TOP}/`,
      size: 0,
      type: "directory",
      mode: (stateInfo.mode ?? 0o700) & 0o777,
      mtime: stateInfo.mtime ?? new Date(0),
      uid: 0,
      gid: 0,
    },
  };
  const archive = await gzip(await packTar([root, ...entries]));
  await mkdirPrivate(paths.snapshots);
  const tmp = join(paths.snapshots, `.${basename(path)}.tmp-${crypto.randomUUID().slice(0, 8)}`);
  try {
    await Deno.writeFile(tmp, archive, { createNew: true, mode: 0o600 });
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw fsFailure(err, "write the snapshot", path) ?? err;
  }
  return { path, version, created: true, files, skipped };
}

/** A validated snapshot archive, unpacked into a directory of its own. */
export interface SnapshotArchive {
  /** The archive file. */
  source: string;
  /** `version` of its `system_config.yaml`. */
  version: number;
  /** The unpacked `agent_state/` (what is imported); removed by {@linkcode discardSnapshot}. */
  dir: string;
  /** Directories, relative to `agent_state/`. */
  dirs: string[];
  /**
   * Files, relative to `agent_state/`, with their permission bits, size and
   * `data`: the whole bytes of `system_config.yaml` and of the scheduled
   * tasks (up to {@linkcode HELD_BYTES}), the first bytes of the others.
   */
  files: { path: string; mode: number; size: number; data: Uint8Array }[];
  /** Entries that are not imported, and why. */
  skipped: SkippedEntry[];
  /**
   * What it would set up that sends data off the machine or runs programs
   * beyond the model's commands (telemetry, every MCP server,
   * enabled scheduled tasks, skills holding programs: see
   * lib/state/snapshot_reach.ts). The importer must accept them first.
   */
  reach: string[];
  /** Settings taken out of its `system_config.yaml` (`telemetry.include_content`), in words. */
  dropped: string[];
}

/** Bytes of a file kept in memory to be read (its configuration, its scheduled tasks). */
export const HELD_BYTES = 1024 * 1024;
/** The largest scheduled task file a snapshot may hold (all of it is kept in memory). */
export const SCHEDULE_BYTES = 64 * 1024;
/** The most bytes kept in memory for one import: configuration and scheduled tasks together. */
export const HELD_TOTAL_BYTES = 8 * 1024 * 1024;
/**
 * The largest `AGENTS.md` or `SKILL.md` a snapshot may hold: every later run and
 * `skills list` reads them whole (a 400 MiB one held each run at ~900 MB).
 */
export const TEXT_BYTES = 1024 * 1024;
/** Bytes kept of any other file (a skill's file starting with `#!` may be a program). */
const HEAD_BYTES = 2;

/** Remove what {@linkcode readSnapshot} unpacked (after an import, or when it is not made). */
export async function discardSnapshot(archive: SnapshotArchive): Promise<void> {
  await Deno.remove(archive.dir, { recursive: true }).catch(() => {});
}

function refuse(source: string, why: string): PenguinError {
  return new PenguinError("data", `Cannot import the snapshot "${source}": ${why}`);
}

/**
 * The entry's path relative to `agent_state/` ("" for the top itself,
 * undefined for the archive's own top, `./`); throws when unsafe.
 */
function relativeToTop(source: string, raw: string): string | undefined {
  const shown = JSON.stringify(raw);
  if (raw.includes("\\")) throw refuse(source, `${shown} contains a backslash`);
  if (raw.startsWith("/") || /^[A-Za-z]:/.test(raw)) {
    throw refuse(source, `${shown} is an absolute path`);
  }
  const parts = raw.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) throw refuse(source, `${shown} leaves the archive (..)`);
  if (parts.length === 0) return undefined;
  if (parts[0] !== TOP) throw refuse(source, `${shown} is not under ${TOP}/`);
  return parts.slice(1).join("/");
}

/** The prefix of the directory a snapshot is unpacked into, beside the agent's state. */
export const UNPACK_PREFIX = ".agent_state.unpack-";

/**
 * Read and validate the snapshot at `file`, unpacking it into a new
 * directory in `unpackIn` (the agent's directory, so the import is a rename)
 * as it is decompressed: memory holds one decompressed piece, whatever the
 * archive's size. Throws a `data` error naming the first problem, having
 * removed what it unpacked.
 */
export async function readSnapshot(
  file: string,
  unpackIn: string,
  limits: SnapshotLimits = SNAPSHOT_LIMITS,
): Promise<SnapshotArchive> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(file);
  } catch {
    throw new PenguinError("not_found", `Cannot import the snapshot "${file}": no such file`);
  }
  if (!info.isFile) throw refuse(file, "it is not a regular file");
  if (info.size > limits.archiveBytes) {
    throw refuse(file, `it is larger than ${limits.archiveBytes / 1024 / 1024} MiB`);
  }
  await mkdirPrivate(unpackIn);
  const dir = join(unpackIn, `${UNPACK_PREFIX}${crypto.randomUUID().slice(0, 8)}`);
  await Deno.mkdir(dir, { mode: 0o700 });
  const out: SnapshotArchive = {
    source: file,
    version: 0,
    dir,
    dirs: [],
    files: [],
    skipped: [],
    reach: [],
    dropped: [],
  };
  try {
    await unpackInto(file, limits, out);
    await leaveOutBareRepos(file, out);
    await checkConfig(file, out);
  } catch (err) {
    await discardSnapshot(out);
    throw err;
  }
  return out;
}

async function unpackInto(file: string, limits: SnapshotLimits, out: SnapshotArchive) {
  // Long because: one validation pass over the archive's entries in order; every check shares
  // the running counts and the set of paths seen.
  const seen = new Set<string>();
  let bytes = 0;
  const tooBig = () => refuse(file, `it unpacks to more than ${limits.bytes / 1024 / 1024} MiB`);
  let heldTotal = 0;
  const gitSkipped = new Set<string>();
  const place = (e: TarHeader): Placement => {
    // Long because: every rule an archive entry must meet (kind, path, git repositories, size,
    // secrets) in the order they are checked, with the refusal each gives.
    const rel = relativeToTop(file, e.path);
    const shown = JSON.stringify(e.path);
    if (e.kind !== "file" && e.kind !== "directory") {
      throw refuse(
        file,
        `${shown} is ${SPECIAL[e.kind]} (a snapshot holds plain files and directories)`,
      );
    }
    if (rel === undefined || rel === "") {
      if (e.kind !== "directory") throw refuse(file, `${shown} is not a directory`);
      return undefined;
    }
    if (seen.has(rel)) throw refuse(file, `${shown} appears twice`);
    seen.add(rel);
    // Every entry counts, directories and entries left out too: only files were counted, and
    // 500,000 directories in a 4.4 MB archive took an import 100 s and 350 MB (attack round 25
    // bounded C13).
    if (seen.size > 2 * limits.files) {
      throw refuse(file, `it holds more than ${2 * limits.files} entries (files and directories)`);
    }
    const local = staysLocal(rel);
    if (local !== undefined) {
      out.skipped.push({ path: `${TOP}/${rel}`, reason: local });
      return undefined;
    }
    const git = dotGitIn(rel);
    if (git !== undefined) {
      // Named once, with nothing under it unpacked.
      if (!gitSkipped.has(git)) {
        out.skipped.push({ path: `${TOP}/${git}`, reason: GIT_REPO_REASON });
      }
      gitSkipped.add(git);
      return undefined;
    }
    const at = join(out.dir, ...rel.split("/"));
    if (e.kind === "directory") {
      out.dirs.push(rel);
      return { dir: at };
    }
    bytes += e.size;
    if (out.files.length + 1 > limits.files) {
      throw refuse(file, `it holds more than ${limits.files} files`);
    }
    if (bytes > limits.bytes) throw tooBig(); // from its header, before its bytes
    const held = rel === "system_config.yaml" || /^schedule\/[^/]+\.toml$/.test(rel)
      ? HELD_BYTES
      : HEAD_BYTES;
    if (rel === "system_config.yaml" && e.size > HELD_BYTES) {
      throw refuse(file, `${shown} is larger than ${HELD_BYTES / 1024 / 1024} MiB`);
    }
    if (/^schedule\/[^/]+\.toml$/.test(rel) && e.size > SCHEDULE_BYTES) {
      throw refuse(file, `${shown} is larger than ${SCHEDULE_BYTES / 1024} KiB`);
    }
    if ((rel === "AGENTS.md" || /^skills\/[^/]+\/SKILL\.md$/.test(rel)) && e.size > TEXT_BYTES) {
      throw refuse(
        file,
        `${shown} is larger than ${TEXT_BYTES / 1024 / 1024} MiB (every later run reads it whole)`,
      );
    }
    heldTotal += Math.min(held, e.size);
    if (heldTotal > HELD_TOTAL_BYTES) {
      throw refuse(
        file,
        `its configuration and scheduled tasks are larger than ${
          HELD_TOTAL_BYTES / 1024 / 1024
        } MiB together`,
      );
    }
    const entry = { path: rel, mode: e.mode, size: e.size, data: new Uint8Array() };
    out.files.push(entry);
    const head = new Uint8Array(Math.min(held, e.size));
    let got = 0;
    // Owner read and write always; never group or other write, setuid or setgid.
    const mode = (e.mode & 0o755) | 0o600;
    return {
      file: at,
      mode,
      onData: (piece) => {
        if (got >= head.length) return;
        const n = Math.min(head.length - got, piece.length);
        head.set(piece.subarray(0, n), got);
        got += n;
        entry.data = head.subarray(0, got);
      },
    };
  };
  let fits;
  try {
    // Tar headers and padding add at most 1 KiB per file.
    fits = await unpackTarGz(
      file,
      limits.bytes + (limits.files + 2) * 1024,
      place,
      (path, why) => refuse(file, `writing ${TOP}/${relative(out.dir, path)} failed (${why})`),
    );
  } catch (err) {
    if (err instanceof ArchiveFormatError) {
      throw refuse(
        file,
        err.layer === "gzip"
          ? `it is not a gzip file (${err.message})`
          : `it is not a tar archive (${err.message})`,
      );
    }
    throw err;
  }
  if (!fits) throw tooBig();
}

/**
 * Take out of the unpacked tree every directory git would take for a bare
 * repository (lib/state/_git_shapes.ts), named in `out.skipped`; refuses an
 * archive whose `agent_state/` itself is one.
 */
async function leaveOutBareRepos(file: string, out: SnapshotArchive): Promise<void> {
  const repos = bareRepoDirs([...out.dirs, ...out.files.map((f) => f.path)]);
  if (repos.includes("")) {
    throw refuse(
      file,
      `${TOP}/ itself holds HEAD with objects or commondir, which makes it ${GIT_REPO_REASON}`,
    );
  }
  for (const repo of repos) {
    await Deno.remove(join(out.dir, ...repo.split("/")), { recursive: true });
    const kept = (p: string) => p !== repo && !p.startsWith(`${repo}/`);
    out.dirs = out.dirs.filter(kept);
    out.files = out.files.filter((f) => kept(f.path));
    out.skipped.push({ path: `${TOP}/${repo}`, reason: GIT_REPO_REASON });
  }
}

/** Check the unpacked `system_config.yaml` and take out what a snapshot never sets. */
async function checkConfig(file: string, out: SnapshotArchive): Promise<void> {
  const config = out.files.find((f) => f.path === "system_config.yaml");
  if (!config) throw refuse(file, `it has no ${TOP}/system_config.yaml`);
  const text = new TextDecoder().decode(config.data);
  const parsed = parseSystemConfig(text, `${file}: ${TOP}/system_config.yaml`);
  const v = parsed.version;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
    throw refuse(file, `${TOP}/system_config.yaml has no version (a natural number)`);
  }
  out.version = v;
  out.reach = snapshotReach(parsed, out.files);
  const kept = dropIncludeContent(text, parsed);
  if (kept === undefined) {
    throw refuse(
      file,
      `${TOP}/system_config.yaml sets telemetry.include_content in a way that cannot be taken ` +
        `out (a snapshot never sets it; write the telemetry section without YAML aliases)`,
    );
  }
  if (kept.dropped.length > 0) {
    config.data = new TextEncoder().encode(kept.text);
    config.size = config.data.length;
    const path = join(out.dir, "system_config.yaml");
    await Deno.remove(path);
    await Deno.writeFile(path, config.data, {
      createNew: true,
      mode: (config.mode & 0o755) | 0o600,
    });
    out.dropped = kept.dropped;
  }
}

/** The outcome of {@linkcode installSnapshot}. */
export interface InstalledSnapshot {
  /** Files written. */
  files: number;
  /** Local files of the old state carried over (`.vault.toml`, `chat_history`). */
  kept: string[];
  /** What an earlier, interrupted import left and was repaired first (lines for the user). */
  recovered: string[];
}

/** Options of {@linkcode installSnapshot}. */
export interface InstallOptions {
  /**
   * Called under the agent's state lock, after the repair of an earlier
   * interrupted import and before anything is written; throwing stops the
   * import (e.g. while a session of the agent runs).
   */
  check?: () => Promise<void>;
}

/**
 * Replace the agent's `agent_state/` with `archive`'s, holding the agent's
 * state lock (lib/state/agent_state_swap.ts): what an interrupted import
 * left is repaired first, then the new tree is built beside the old one
 * (`.agent_state.import-…`), the old state's vault and chat history are
 * copied in, and it is renamed into place. On any failure the new tree is
 * removed and the old state is left as it was.
 */
export async function installSnapshot(
  paths: AgentPaths,
  archive: SnapshotArchive,
  opts: InstallOptions = {},
): Promise<InstalledSnapshot> {
  const release = await lockAgentState(paths);
  try {
    const recovered = await recoverAgentStateSwap(paths);
    await opts.check?.();
    return { ...await swapIn(paths, archive), recovered };
  } finally {
    release();
  }
}

async function swapIn(
  paths: AgentPaths,
  archive: SnapshotArchive,
): Promise<{ files: number; kept: string[] }> {
  const tag = crypto.randomUUID().slice(0, 8);
  const stage = join(paths.agent, `${STAGE_PREFIX}${tag}`);
  const old = join(paths.agent, `${OLD_PREFIX}${tag}`);
  const kept: string[] = [];
  let moved = false;
  try {
    // The unpacked tree becomes the stage: an import that dies from here on is repaired as one.
    await Deno.rename(archive.dir, stage);
    if (Deno.build.os !== "windows") await Deno.chmod(stage, 0o700);
    for (const name of [basename(paths.vault), ...LOCAL_FILES]) {
      const from = join(paths.agentState, name);
      if (!(await Deno.lstat(from).then((i) => i.isFile, () => false))) continue;
      await Deno.copyFile(from, join(stage, name));
      if (Deno.build.os !== "windows") await Deno.chmod(join(stage, name), 0o600);
      kept.push(name);
    }
    if (await exists(paths.agentState, { followLinks: false, strict: true })) {
      await Deno.rename(paths.agentState, old);
      moved = true;
    }
    await Deno.rename(stage, paths.agentState);
  } catch (err) {
    await Deno.remove(stage, { recursive: true }).catch(() => {});
    if (moved) await Deno.rename(old, paths.agentState).catch(() => {});
    throw err;
  }
  if (moved) await Deno.remove(old, { recursive: true }).catch(() => {});
  await mkdirPrivate(paths.scratchpad);
  return { files: archive.files.length, kept };
}
