/**
 * The data root a command acts with is one penguin made, or one the user
 * adopted (`lib/state/root_mark.ts`): a root a model's command prepared must
 * not decide where the user's keys go or what runs on the host.
 *
 * Before a command that acts with the root (runs a model, starts an MCP
 * server, writes a setting or a secret), its root is looked at: a missing one
 * is made and marked, an empty one is marked, a marked one is used; any other
 * is asked about on a terminal (y marks it) and refused without one, naming
 * `penguin trust --data-root`. Commands that only read what a root holds
 * (traces, listings, help) are let through unmarked.
 *
 * @module
 */
import { join } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import { resolveDataRoot } from "../state/root.ts";
import { markDataRoot, ROOT_MARK_FILE, rootEntries, rootStatus } from "../state/root_mark.ts";
import { mkdirPrivate } from "../state/_fs.ts";
import { safeText } from "../display/terminal_text.ts";
import { inside } from "../sandbox/_paths.ts";
import { readStdinLine } from "./line_reader.ts";
import type { Io } from "./command.ts";

/**
 * Commands (or groups, by their first words) that only read what a data root holds, and write
 * nothing in it (`skills list` and `schedules list` make the agent's directories: not here).
 */
const READ_ONLY: readonly (readonly string[])[] = [
  ["trace"],
  ["trust"],
  ["sessions", "list"],
  ["sessions", "show"],
  ["sessions", "tree"],
  ["sandbox", "check"],
  ["models", "list"],
  ["config", "model", "list"],
  ["config", "vault", "list"],
  ["memory", "list"],
  ["memory", "show"],
  ["batch", "k8s"],
  ["batch", "report"],
];

/** Whether the command at `path` with `args` acts with its data root (given `--root`: `rooted`). */
function actsWithRoot(path: readonly string[], args: readonly string[], rooted: boolean): boolean {
  // The demo keeps to a directory of its own unless given a root.
  if (path[0] === "demo") return rooted;
  // `trust` records a file's trust in the root; listing, or adopting the root, reads it only.
  if (path[0] === "trust") return !args.some((a) => a === "--data-root" || a === "--list");
  return !READ_ONLY.some((p) => p.every((w, i) => path[i] === w));
}

/** How a root not made by penguin is named in a message: its entries, a few. */
function holding(entries: string[]): string {
  const shown = entries.slice(0, 6).map((e) => safeText(e)).join(", ");
  return entries.length > 6 ? `${shown} and ${entries.length - 6} more` : shown;
}

/**
 * Refuse a data root that lies in a directory the commands of a running penguin may write (see
 * `lib/sandbox/_live_roots.ts`): made, marked or adopted now, it would be open to them (attack
 * round 27 c07). Its note in the list of data roots (made before this, at dispatch) hides it from
 * every sandbox planned after it.
 */
export async function refuseWhereCommandsWrite(root: string, verb: string): Promise<void> {
  const { liveRootsHolding } = await import("../sandbox/_live_roots.ts");
  const held = await liveRootsHolding(root);
  if (held.length === 0) return;
  const { pid, roots } = held[0]!;
  const holder = roots.find((r) => inside(root, r));
  const where = holder !== undefined
    ? `it lies in "${safeText(holder)}"`
    : `it holds "${safeText(roots.find((r) => inside(r, root)) ?? roots[0]!)}"`;
  throw new PenguinError(
    "usage",
    `Cannot ${verb} the data root "${safeText(root)}": ${where}, a directory ` +
      `the commands of a running penguin (pid ${pid}) may write, so they could change what it ` +
      `holds (its models, keys and MCP servers). Use a data root elsewhere, or run ` +
      `this again once that penguin has ended`,
  );
}

/**
 * Mark `root` as penguin's ({@linkcode markDataRoot}), then check again where running commands
 * write: a sandbox that noted its directories after the check before it, and so planned before
 * the mark, does not hide a root that held nothing yet; one that noted them later plans after the
 * mark, which hides it (`lib/sandbox/_data_roots.ts`). Refused then, the mark is taken back.
 */
export async function markWhereNoCommandWrites(root: string, verb: string): Promise<void> {
  await markDataRoot(root);
  await checkMarked(root, verb);
}

/** The check after the mark of {@linkcode markWhereNoCommandWrites}, the mark removed if refused. */
async function checkMarked(root: string, verb: string): Promise<void> {
  try {
    await refuseWhereCommandsWrite(root, verb);
  } catch (err) {
    await Deno.remove(join(root, ROOT_MARK_FILE)).catch(() => {});
    throw err;
  }
}

/** What the command at `path` runs with and after: `--root`, its arguments, where to ask. */
export interface GateInput {
  path: readonly string[];
  args: readonly string[];
  root: string | undefined;
  io: Io;
}

/**
 * Make sure the data root of a command that acts with it is penguin's: made
 * and marked when missing, marked when empty, asked about on a terminal
 * otherwise. Throws a usage error when the user says no or cannot be asked.
 * A root that cannot be resolved is left to the command to report; a command
 * that only reads its root is let through, and makes and marks nothing.
 */
export async function guardDataRoot(input: GateInput): Promise<void> {
  let path: string;
  try {
    path = resolveDataRoot({ root: input.root });
  } catch {
    return;
  }
  // A command that only reads a root makes and marks nothing: what it finds missing may be made
  // by a model's command while it runs (attack round 27 c14: listings run while a command kept
  // making `ws/later` with its own config had it marked once they ended).
  if (!actsWithRoot(input.path, input.args, input.root !== undefined)) return;
  let status = await rootStatus(path);
  if (status === "marked" || status === "unknown") return;
  // About to be made, marked or adopted: not where a running command could change it (checked
  // again once marked).
  await refuseWhereCommandsWrite(path, "use");
  if (status === "missing") {
    // One that cannot be made (a read-only parent) is the command's to report, at its write.
    if (!await mkdirPrivate(path).then(() => true, () => false)) return;
    status = await rootStatus(path);
  }
  if (status === "marked" || status === "unknown") return;
  if (status === "empty") {
    // Nothing in it to trust; one that cannot be marked (read-only) is asked about once it holds
    // something, and the command reports its own write.
    if (await markDataRoot(path).then(() => true, () => false)) await checkMarked(path, "use");
    return;
  }
  const io = input.io;
  const entries = await rootEntries(path).catch(() => []);
  const what = `penguin did not make the data root "${safeText(path)}" (it carries no mark of ` +
    `yours) and it holds ${holding(entries)}`;
  const why = "A data root decides where your API keys are sent and which programs penguin " +
    "starts on this machine; one a model's command prepared must not be taken silently";
  if (Deno.stdin.isTerminal()) {
    io.err(`${what}.\n${why}.\nUse it as yours from now on? [y/N] `);
    const answer = (await readStdinLine()).trim().toLowerCase();
    if (answer === "y" || answer === "yes") {
      await markWhereNoCommandWrites(path, "adopt");
      return;
    }
    throw new PenguinError("usage", `Not using the data root "${safeText(path)}"`);
  }
  throw new PenguinError(
    "usage",
    `Cannot use the data root: ${what}. ${why}. If it is yours (made by an older penguin, by ` +
      `PenguinHarness or copied by you), adopt it once: penguin --root ${
        JSON.stringify(path)
      } trust --data-root`,
  );
}
