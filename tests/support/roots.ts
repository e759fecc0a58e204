/**
 * Temporary data roots and workspaces for tests, each removed when its test
 * body ends: a bare root ({@linkcode withRoot}), a workspace the sandbox can
 * see ({@linkcode withWorkspace}), and a root whose default model is the
 * scripted model server ({@linkcode makeRoot}, {@linkcode withModelRoot}).
 *
 * @module
 */
import { join } from "node:path";
import type { WireProtocol } from "../../lib/models/wire.ts";
import { addModel, type ModelInput } from "../../lib/state/project_config.ts";
import { type ModelServer, type ModelServerOptions, withModelServer } from "./model_server.ts";
import { markTestRoot } from "./cli.ts";

/** Run `fn` with a new empty directory, removed afterwards. */
export async function withTempDir<T>(
  prefix: string,
  fn: (dir: string) => Promise<T>,
): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Run `fn` with a new empty data root, removed afterwards. */
export function withRoot<T>(fn: (root: string) => Promise<T>): Promise<T> {
  return withTempDir("penguin-test-root-", fn);
}

/**
 * A temp dir that is visible inside the sandbox. Dirs under /tmp are not: the
 * sandbox mounts a private /tmp, which would make "hidden" checks pass for
 * the wrong reason. /var/tmp lies on the read-only root.
 */
export async function visibleTempDir(prefix = "penguin-sbx-test-"): Promise<string> {
  const base = await Deno.stat("/var/tmp").then(
    (s) => s.isDirectory ? "/var/tmp" : undefined,
    () => undefined,
  );
  return await Deno.realPath(await Deno.makeTempDir({ prefix, ...(base ? { dir: base } : {}) }));
}

/** Run `fn` with a new empty workspace the sandbox can see ({@linkcode visibleTempDir}), removed afterwards. */
export async function withWorkspace<T>(fn: (ws: string) => Promise<T>): Promise<T> {
  const ws = await visibleTempDir();
  try {
    return await fn(ws);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
}

/** A temporary data root and workspace. */
export interface Sandbox {
  /** The directory holding both (`<base>/data`, `<base>/ws`). */
  base: string;
  /** Data root. */
  root: string;
  /** An empty workspace directory. */
  workspace: string;
  /** Remove everything. */
  cleanup(): Promise<void>;
}

/**
 * Make (custom, m) at `server`, spoken to over `protocol`, the default model
 * of data root `root`, with the fields of `extra` (an API key, a context window).
 */
export async function addServerModel(
  root: string,
  server: ModelServer,
  extra: Partial<ModelInput> = {},
  protocol: WireProtocol = "openai-chat",
): Promise<void> {
  await addModel(join(root, "default_project", ".project_config.toml"), {
    provider: "custom",
    model_id: "m",
    base_url: server.baseUrl(protocol),
    client_type: protocol,
    ...extra,
  }, { setDefault: true });
  // Made by the test as penguin would make it: penguin's, marked (lib/state/root_mark.ts).
  await markTestRoot(root);
}

/** Options of {@linkcode makeRoot}. */
export interface RootOptions {
  /** The model's context window. */
  contextWindow?: number;
  /** Put it where the sandbox can see it ({@linkcode visibleTempDir}). */
  visible?: boolean;
  /** The wire protocol the model is configured with (default `openai-chat`). */
  protocol?: WireProtocol;
}

/** A temp root with `(custom, m)` → `server` (openai-chat unless `opts.protocol`) as the default model. */
export async function makeRoot(server: ModelServer, opts: RootOptions = {}): Promise<Sandbox> {
  const base = opts.visible
    ? await visibleTempDir("penguin-agent-")
    : await Deno.makeTempDir({ prefix: "penguin-agent-" });
  const root = join(base, "data");
  const workspace = join(base, "ws");
  await Deno.mkdir(workspace, { recursive: true });
  await addServerModel(
    root,
    server,
    opts.contextWindow ? { context_window: opts.contextWindow } : {},
    opts.protocol,
  );
  return {
    base,
    root,
    workspace: await Deno.realPath(workspace),
    cleanup: () => Deno.remove(base, { recursive: true }),
  };
}

/**
 * Run `body` with a root whose default model is `server` (started from the
 * options when they are not a server), then close the server and remove
 * the root.
 */
export async function withModelRoot<T = void>(
  server: ModelServer | ModelServerOptions,
  body: (sb: Sandbox, server: ModelServer) => Promise<T>,
  opts: RootOptions = {},
): Promise<T> {
  if (!("baseUrl" in server)) {
    return withModelServer(server, (started) => onRoot(started, body, opts));
  }
  try {
    return await onRoot(server, body, opts);
  } finally {
    await server.close();
  }
}

async function onRoot<T>(
  server: ModelServer,
  body: (sb: Sandbox, server: ModelServer) => Promise<T>,
  opts: RootOptions,
): Promise<T> {
  const sb = await makeRoot(server, opts);
  try {
    return await body(sb, server);
  } finally {
    await sb.cleanup();
  }
}
