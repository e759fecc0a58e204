/**
 * `penguin trust [<path>]`, `penguin trust --list`, `penguin trust --revoke
 * [<path>]`: trust a workspace's `penguin.jsonc` so its widening settings
 * apply. The file is read once; what is shown and what is recorded (the
 * SHA-256 of its exact bytes, with its path) come from the same bytes. The
 * records live in the data root (`lib/state/trust.ts`), out of every
 * sandbox's sight.
 *
 * @module
 */
import { basename, dirname, join, resolve } from "node:path";
import { PenguinError } from "../../protocol/errors.ts";
import { resolveDataRoot } from "../../state/root.ts";
import { listTrust, recordTrust, revokeTrust, sha256Hex } from "../../state/trust.ts";
import { rootEntries, rootStatus } from "../../state/root_mark.ts";
import { markWhereNoCommandWrites, refuseWhereCommandsWrite } from "../_root_gate.ts";
import {
  at,
  readWorkspacePolicyBytes,
  shellWord,
  wideningSettings,
  WORKSPACE_POLICY_FILE,
} from "../../sandbox/workspace_policy.ts";
import { safeText } from "../../display/terminal_text.ts";
import { bool, type Flag, flagHelp, parseDeclared } from "../args.ts";
import type { Command, CommandContext } from "../command.ts";
import { formatTable, printHelp } from "./_config_common.ts";
import { loadPolicy, maskPolicyText } from "./_workspace_policy.ts";

const LIST: Flag<boolean> = {
  name: "list",
  type: "boolean",
  help: "list the trusted files: trusted, changed since, or missing",
};
const REVOKE: Flag<boolean> = {
  name: "revoke",
  type: "boolean",
  help: "forget the trust of <path> (default: ./penguin.jsonc)",
};
const DATA_ROOT: Flag<boolean> = {
  name: "data-root",
  type: "boolean",
  help: "adopt the data root (--root, else PENGUIN_HOME, else ~/.penguin/data) as penguin's",
};
const TRUST_FLAGS: readonly Flag<unknown>[] = [LIST, REVOKE, DATA_ROOT];

const HELP = `Usage: penguin trust [<path>] | --list | --revoke [<path>] | --data-root

Trust a workspace's penguin.jsonc (<path> is the file or its workspace;
default: the current directory's). A penguin.jsonc may only narrow what
penguin allows; the settings that widen it ("git": "writable",
"network": "on", writable roots outside the workspace) apply only while
you trust the file's exact content. penguin trust shows those settings and
records the file's path with the SHA-256 of its content in the data root
(<root>/.trust/, 0600), where no sandboxed command can reach. When the
file changes it is untrusted again: penguin warns and ignores its widening
settings until you review it and run penguin trust again. The same content
at another path (a copy in a subdirectory) is not trusted.

penguin trust --data-root adopts a data root penguin did not make (one an
older penguin or PenguinHarness made, or one you copied or moved): penguin
marks each root it makes, and acts with an unmarked one that holds anything
only once you adopt it, since a root decides where your API keys are sent
and which programs penguin starts. It lists what the root holds, then marks it.

Flags:
${flagHelp(TRUST_FLAGS, 14)}
`;

/**
 * The path penguin reads the policy from for `arg` (a workspace directory
 * or its penguin.jsonc; default the current directory): the workspace's
 * real path, then the file name. With `mustExist` false, a workspace that
 * is gone resolves as written.
 */
async function policyPath(arg: string | undefined, mustExist: boolean): Promise<string> {
  const given = resolve(arg ?? ".");
  const info = await Deno.stat(given).catch(() => undefined);
  let dir: string;
  if (info?.isDirectory) dir = given;
  else if (basename(given) === WORKSPACE_POLICY_FILE) dir = dirname(given);
  else {
    throw new PenguinError(
      "usage",
      `trust: ${JSON.stringify(given)} is neither a workspace directory nor its ` +
        `${WORKSPACE_POLICY_FILE} (penguin reads only <workspace>/${WORKSPACE_POLICY_FILE})`,
    );
  }
  const real = await Deno.realPath(dir).catch(() => undefined);
  if (real === undefined && mustExist) {
    throw new PenguinError(
      "not_found",
      `trust: the directory ${JSON.stringify(dir)} does not exist`,
    );
  }
  return join(real ?? dir, WORKSPACE_POLICY_FILE);
}

/** Refuse what penguin would not apply as it is: a missing file, a link, not a regular file. */
async function requirePlainFile(path: string): Promise<void> {
  const info = await Deno.lstat(path).catch(() => undefined);
  if (info === undefined) {
    throw new PenguinError("not_found", `trust: there is no ${JSON.stringify(path)}`);
  }
  if (info.isSymlink) {
    throw new PenguinError(
      "config",
      `trust: ${JSON.stringify(path)} is a symbolic link; a command could point it elsewhere. ` +
        `Replace the link with a copy of the file it points to, then trust that`,
    );
  }
  if (!info.isFile) {
    throw new PenguinError("config", `trust: ${JSON.stringify(path)} is not a regular file`);
  }
}

async function trustFile(arg: string | undefined, ctx: CommandContext): Promise<number> {
  const root = resolveDataRoot({ root: ctx.root });
  const path = await policyPath(arg, true);
  await requirePlainFile(path);
  const { policy, trust } = await loadPolicy(dirname(path), ctx.root);
  if (policy === undefined) {
    throw new PenguinError("not_found", `trust: there is no ${JSON.stringify(path)}`);
  }
  const out: string[] = [`${policy.path}`, `  sha256 ${policy.sha256}`];
  const widening = wideningSettings(policy);
  if (widening.length === 0) {
    out.push("It has no setting that widens what penguin allows (it only narrows).");
  } else {
    out.push("Settings that widen what penguin allows (they apply while this content is trusted):");
    for (const w of widening) out.push(`  ${at(w.position)}${w.setting}: ${w.grants}`);
  }
  if (trust === "trusted") out.push("Already trusted with exactly this content.");
  if (trust === "changed") out.push("It changed since you trusted it; this content replaces that.");
  await recordTrust(root, policy.path, policy.sha256);
  out.push(
    `Trusted. Any change to the file makes it untrusted again; ` +
      `\`penguin trust --revoke ${shellWord(policy.path)}\` forgets it now.`,
  );
  // The file is the model's to write: a setting may hold a secret a command put there.
  ctx.io.out(safeText(await maskPolicyText(out.join("\n"), ctx.root)) + "\n");
  return 0;
}

async function listTrusted(ctx: CommandContext): Promise<number> {
  const root = resolveDataRoot({ root: ctx.root });
  const records = await listTrust(root);
  if (records.length === 0) {
    ctx.io.out("No penguin.jsonc is trusted.\n");
    return 0;
  }
  const rows: string[][] = [["STATUS", "TRUSTED AT", "PATH"]];
  for (const r of records) {
    let status: string;
    try {
      const bytes = await readWorkspacePolicyBytes(r.path);
      status = bytes === undefined
        ? "missing"
        : (await sha256Hex(bytes)) === r.sha256
        ? "trusted"
        : "changed";
    } catch {
      // Too large, not a regular file, unreadable: not the content trusted.
      status = "changed";
    }
    rows.push([status, r.trusted_at, r.path]);
  }
  ctx.io.out(formatTable(rows));
  return 0;
}

async function revoke(arg: string | undefined, ctx: CommandContext): Promise<number> {
  const root = resolveDataRoot({ root: ctx.root });
  const path = await policyPath(arg, false);
  if (!(await revokeTrust(root, path))) {
    throw new PenguinError(
      "not_found",
      `trust --revoke: ${JSON.stringify(path)} is not trusted (see penguin trust --list)`,
    );
  }
  ctx.io.out(safeText(`No longer trusted: ${path}`) + "\n");
  return 0;
}

/** `trust --data-root`: what the root holds, then its mark. */
async function adoptRoot(ctx: CommandContext): Promise<number> {
  const root = resolveDataRoot({ root: ctx.root });
  const status = await rootStatus(root);
  if (status === "missing") {
    throw new PenguinError(
      "not_found",
      `trust --data-root: there is no data root at ${JSON.stringify(root)} (penguin makes and ` +
        "marks one when a command first needs it)",
    );
  }
  if (status === "unknown") {
    throw new PenguinError(
      "config",
      "trust --data-root: penguin has nowhere to keep its key (set HOME or PENGUIN_KEY_DIR)",
    );
  }
  if (status === "marked") {
    ctx.io.out(safeText(`The data root ${root} is already penguin's.`) + "\n");
    return 0;
  }
  await refuseWhereCommandsWrite(root, "adopt");
  const entries = await rootEntries(root);
  const out = [`Data root ${root}`];
  out.push(entries.length === 0 ? "  (empty)" : `  holds: ${entries.join(", ")}`);
  await markWhereNoCommandWrites(root, "adopt");
  out.push("Adopted: penguin acts with it from now on.");
  ctx.io.out(safeText(out.join("\n")) + "\n");
  return 0;
}

async function run(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("trust", args, TRUST_FLAGS, 1);
  if (bool(p, "help")) return printHelp(ctx, HELP);
  const arg = p.positionals[0];
  if (bool(p, LIST.name)) {
    if (bool(p, REVOKE.name) || arg !== undefined) {
      throw new PenguinError("usage", "trust: --list takes no path and no --revoke");
    }
    return await listTrusted(ctx);
  }
  if (bool(p, DATA_ROOT.name)) {
    if (bool(p, REVOKE.name) || arg !== undefined) {
      throw new PenguinError(
        "usage",
        "trust: --data-root takes no path (give the root with --root)",
      );
    }
    return await adoptRoot(ctx);
  }
  if (bool(p, REVOKE.name)) return await revoke(arg, ctx);
  return await trustFile(arg, ctx);
}

/** `penguin trust`. */
export const trustCommand: Command = {
  path: ["trust"],
  summary: "trust a workspace's penguin.jsonc so its widening settings apply",
  help: HELP,
  run,
};
