/**
 * A real `penguin run` as a user with a temp HOME: a visible temp dir holding `home`, the
 * workspace `ws` and the data root `data`, the scripted model making tool calls once and then
 * answering. Used by the tests of what the user's startup files and home let the model change.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type item, startModelServer, turn } from "./model_server.ts";
import { runCli } from "./cli.ts";
import { addServerModel, visibleTempDir } from "./roots.ts";

/** One tool call of the scripted model. */
export type ToolCall = ReturnType<typeof item.toolCall>;

/** Where one run takes place: the data root, the user's HOME and the workspace. */
export interface HomeRun {
  root: string;
  home: string;
  ws: string;
  /** Further `penguin run` flags, such as `--sandbox off`. */
  flags?: string[];
}

/** The places of {@linkcode withHomeBase}: `home` and `ws` made, `root` not yet. */
export interface HomeBase extends HomeRun {
  base: string;
}

/** A visible temp dir `base` holding `home` and `ws` (both made) and `root` (`base/data`); removed after `fn`. */
export async function withHomeBase(
  prefix: string,
  fn: (places: HomeBase) => Promise<void>,
): Promise<void> {
  const base = await visibleTempDir(prefix);
  try {
    const home = join(base, "home");
    const ws = join(base, "ws");
    await Deno.mkdir(home);
    await Deno.mkdir(ws);
    await fn({ base, home, ws, root: join(base, "data") });
  } finally {
    await Deno.remove(base, { recursive: true });
  }
}

/** `penguin run --root <root> --workspace <ws> <flags> -m go` with `home` as HOME. */
function penguinRun(run: HomeRun) {
  return runCli(
    ["--root", run.root, "run", "--workspace", run.ws, ...run.flags ?? [], "-m", "go"],
    { env: { HOME: run.home } },
  );
}

/**
 * One task whose first response makes `calls` at once, then answers; asserts it ends well after
 * two model requests and returns the second request's body (what the model was shown).
 */
export async function runCalls(run: HomeRun, calls: ToolCall[]): Promise<unknown> {
  const server = await startModelServer({ turns: [turn.of(...calls), turn.text("done")] });
  try {
    await addServerModel(run.root, server);
    const r = await penguinRun(run);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.length, 2);
    return server.requests[1]!.body;
  } finally {
    await server.close();
  }
}

/**
 * One task penguin must refuse to start: asserts it fails before asking the model anything and
 * returns its stderr (where the refusal is named).
 */
export async function runRefused(run: HomeRun): Promise<string> {
  const server = await startModelServer({ turns: [turn.text("done")] });
  try {
    await addServerModel(run.root, server);
    const r = await penguinRun(run);
    assert.notEqual(r.code, 0, r.stdout);
    assert.equal(server.requests.length, 0);
    return r.stderr;
  } finally {
    await server.close();
  }
}

/** The tool outputs the model was shown in a request body, by call id. */
export function outputsOf(body: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(visit);
    if (v === null || typeof v !== "object") return;
    const o = v as Record<string, unknown>;
    const id = o["call_id"] ?? o["tool_call_id"] ?? o["tool_use_id"];
    const text = o["output"] ?? o["content"];
    if (typeof id === "string" && text !== undefined) {
      out[id] = typeof text === "string" ? text : JSON.stringify(text);
    }
    Object.values(o).forEach(visit);
  };
  visit(body);
  return out;
}
