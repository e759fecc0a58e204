/**
 * Checks that a secret did not get out: the text of every file under a
 * directory ({@linkcode readAll}), a search for any piece of a secret
 * ({@linkcode assertNoPieceOf}), a vault value set through the CLI
 * ({@linkcode setVault}), and every way the CLI prints a stored session
 * ({@linkcode traceViews}).
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { publicPrefixLength } from "../../lib/tools/_public_prefix.ts";
import { inRoot, runCli, runCliOk } from "./cli.ts";
import { withModelRoot } from "./roots.ts";
import { item, type ModelServer, startModelServer, turn } from "./model_server.ts";

/** Every file under `dir`, as text. */
export async function readAll(dir: string): Promise<string> {
  let out = "";
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) out += await readAll(p);
    else if (e.isFile) out += await Deno.readTextFile(p);
  }
  return out;
}

/**
 * Fail when any `size`-character piece of one of `secrets` occurs in `text`, found at `where`;
 * pieces that end before `size` characters past the secret's public prefix (`vlt-`, `sk-proj-`)
 * are not pieces to the masker (lib/tools/_public_prefix.ts), and a secret shorter than 12
 * characters counts only whole.
 */
export function assertNoPieceOf(text: string, secrets: string[], where: string, size = 8): void {
  for (const secret of secrets) {
    const from = secret.length < 12 ? 0 : publicPrefixLength(secret, size);
    for (let i = from; i + size <= secret.length; i++) {
      const piece = secret.slice(i, i + size);
      assert.ok(!text.includes(piece), `${where} holds "${piece}", a piece of a secret`);
    }
  }
}

/** `penguin config vault set --key <key> --value <value>` in `root`; asserts it succeeded. */
export async function setVault(root: string, key: string, value: string): Promise<void> {
  await runCliOk(["--root", root, "config", "vault", "set", "--key", key, "--value", value]);
}

/** What one command printed of a stored session. */
export interface TraceView {
  /** The command, for messages: `trace export --format md`, `trace show`. */
  where: string;
  /** The export format; absent for `trace show`. */
  format?: string;
  /** Its stdout. */
  stdout: string;
  /** Its stdout and stderr. */
  text: string;
}

/**
 * What penguin prints of session `sid` in `root`: `trace export` in each of
 * `formats` (otlp with `--include-content`, then the `extra` flags), then
 * `trace show`, with PAGER=cat; asserts each command succeeded.
 */
export async function traceViews(
  root: string,
  sid: string,
  formats: readonly string[] = ["md", "html", "json", "otlp"],
  extra: readonly string[] = [],
): Promise<TraceView[]> {
  const run = (args: string[]) => runCliOk(["--root", root, "trace", ...args], PAGER_CAT);
  const views: TraceView[] = [];
  for (const format of formats) {
    const content = format === "otlp" ? ["--include-content"] : [];
    const r = await run(["export", sid, "--format", format, ...content, ...extra]);
    const where = [`trace export --format ${format}`, ...extra].join(" ");
    views.push({ where, format, stdout: r.stdout, text: r.stdout + r.stderr });
  }
  const show = await run(["show", sid]);
  views.push({ where: "trace show", stdout: show.stdout, text: show.stdout + show.stderr });
  return views;
}

const PAGER_CAT = { env: { PAGER: "cat" } };

/**
 * A scripted model whose session holds `value` in a command, its output and the answer: a trace
 * to import before `value` is a secret, then show, export or follow.
 */
export function startValueEchoingModel(value: string): Promise<ModelServer> {
  return startModelServer({
    turns: [
      turn.of(item.toolCall("exec_command", { cmd: `echo out-${value}` }, { id: "c1" })),
      turn.text(`the answer is ${value}`),
    ],
  });
}

/** What {@linkcode runPrintingVaultValue} saw. */
export interface PrintedVaultValue {
  /** run's stdout and stderr. */
  out: string;
  /** The request body that carried the command's output back to the model. */
  next: string;
  /** The text of every file of the data root, the vault's own value taken out. */
  stored: string;
}

/**
 * `penguin run` against a scripted model whose first turn runs `cmd` and whose second answers,
 * with `value` in the vault as `DB_PW`: what run printed (it exits 0), what the model got next,
 * and what was stored.
 */
export async function runPrintingVaultValue(
  cmd: string,
  value: string,
): Promise<PrintedVaultValue> {
  const requests: string[] = [];
  return await withModelRoot({
    handler: (req, i) => {
      requests.push(JSON.stringify(req.body));
      if (i > 0) return turn.text("done");
      return turn.of(item.toolCall("exec_command", { description: "dump config", cmd }, {
        id: "c1",
      }));
    },
    maxRequests: 5,
  }, async (sb) => {
    await setVault(sb.root, "DB_PW", value);
    const res = await runCli(inRoot(sb, "run", "-m", "dump the config"));
    assert.equal(res.code, 0, res.stderr);
    assert.ok(requests.length >= 2, "the command's output went back to the model");
    return {
      out: res.stdout + res.stderr,
      next: requests[1]!,
      stored: (await readAll(sb.root)).replaceAll(value, ""),
    };
  });
}
