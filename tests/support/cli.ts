// Runs the penguin CLI as a subprocess under the production permission set
// (deno.json "permissions.penguin"), exactly the flags the binary is built with.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { processDir } from "./run_dir.ts";

/** Repository root. */
export const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** Result of one CLI run. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options for {@linkcode runCli}. */
export interface CliOptions {
  env?: Record<string, string>;
  cwd?: string;
  stdin?: string;
  /** Drop the inherited environment (PATH is kept; HOME is the test HOME). */
  clearEnv?: boolean;
  /**
   * Take the data root penguin runs with as the user's before it runs, when the test made it
   * (default): see {@linkcode adoptTestRoot}. False for tests of penguin's own look at a root.
   */
  adopt?: boolean;
}

// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

/**
 * The argv that runs penguin the way `deno task penguin` does: the flags of
 * that task in deno.json (the one place they live), with the config and the
 * entry module given by absolute path.
 */
export function penguinArgv(): string[] {
  const config = JSON.parse(Deno.readTextFileSync(`${REPO}deno.json`));
  const words = String(config.tasks.penguin).split(/\s+/);
  if (words[0] !== "deno" || words.at(-1) !== "main.ts") {
    throw new Error(`deno.json task "penguin" is not "deno <flags> main.ts": ${words.join(" ")}`);
  }
  return [...words.slice(1, -1), "--config", `${REPO}deno.json`, `${REPO}main.ts`];
}

let home: string | undefined;

/**
 * An empty HOME for penguin under test, one per test process (under
 * /var/tmp, so it exists inside the sandbox too), removed when the process
 * ends: the rc files, configuration and secrets of the user who runs the
 * suite never reach penguin or its commands.
 */
export function testHome(): string {
  if (home !== undefined) return home;
  const base = (() => {
    try {
      return Deno.statSync("/var/tmp").isDirectory ? { dir: "/var/tmp" } : {};
    } catch {
      return {};
    }
  })();
  const dir = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "penguin-test-home-", ...base }));
  home = dir;
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // Already gone.
    }
  });
  return dir;
}

let cacheDir: string | undefined;

/** Deno's cache directory, kept when penguin runs with {@linkcode testHome} (it lives under HOME by default). */
export function denoDir(): string {
  if (cacheDir !== undefined) return cacheDir;
  const fromEnv = Deno.env.get("DENO_DIR");
  if (fromEnv) return cacheDir = fromEnv;
  const out = new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  return cacheDir = JSON.parse(new TextDecoder().decode(out.stdout)).denoDir as string;
}

/**
 * The directory of the key penguin under test marks its data roots with
 * (lib/state/root_mark.ts): one per test process, whatever HOME a test gives
 * penguin, so a root a test made and marked ({@linkcode markTestRoot}) is
 * penguin's to every penguin it starts.
 */
export function testKeyDir(): string {
  // One per test process, never removed while it runs (modules of one process share the
  // environment; see run_dir.ts).
  return processDir("PENGUIN_KEY_DIR", "penguin-test-keys-");
}

// Every penguin a test starts, with the test process's environment or penguinEnv's, marks and
// checks data roots with the one key of this test process.
testKeyDir();

/** Mark `root` (made by a test through the state library) as penguin's, as penguin would. */
export async function markTestRoot(root: string): Promise<void> {
  const { markDataRoot } = await import("../../lib/state/root_mark.ts");
  await markDataRoot(root, { keyDir: testKeyDir() });
}

/**
 * The environment of a penguin subprocess: no colour, the test HOME, Deno's cache, the test's
 * root key ({@linkcode testKeyDir}), then `extra`.
 */
export function penguinEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    NO_COLOR: "1",
    HOME: testHome(),
    DENO_DIR: denoDir(),
    PENGUIN_KEY_DIR: testKeyDir(),
    ...extra,
  };
}

/** `setsid`, when there is one: it runs a command without a controlling terminal. */
const SETSID = (() => {
  try {
    return Deno.statSync("/usr/bin/setsid").isFile ? "/usr/bin/setsid" : undefined;
  } catch {
    return undefined;
  }
})();

/**
 * The command and arguments that run `argv` (deno first) with no controlling
 * terminal, so a test never reads from the terminal of whoever runs the suite.
 */
export function withoutTerminal(argv: string[]): { command: string; args: string[] } {
  return SETSID ? { command: SETSID, args: argv } : { command: argv[0]!, args: argv.slice(1) };
}

/**
 * Mark the data root `args` and `env` name for penguin (`--root`, else `PENGUIN_HOME`, else
 * `$HOME/.penguin/data`) as penguin's when it holds something and carries no mark: a root the
 * test filled through the state library (or copied from a fixture) is the user's, as if adopted
 * with `penguin trust --data-root`. Empty and missing roots are left to penguin.
 */
export async function adoptTestRoot(
  args: string[],
  env: Record<string, string>,
  cwd = REPO,
): Promise<void> {
  const at = args.findIndex((a) => a === "--root" || a.startsWith("--root="));
  const given = at < 0
    ? undefined
    : args[at]!.startsWith("--root=")
    ? args[at]!.slice("--root=".length)
    : args[at + 1];
  const root = given ?? env.PENGUIN_HOME ?? `${env.HOME ?? testHome()}/.penguin/data`;
  const dir = root.startsWith("/") ? root : `${cwd.replace(/\/?$/, "/")}${root}`;
  const entries = await Array.fromAsync(Deno.readDir(dir)).catch(() => []);
  if (entries.length === 0 || entries.some((e) => e.name === ".root_mark")) return;
  const { markDataRoot } = await import("../../lib/state/root_mark.ts");
  await markDataRoot(dir, { keyDir: env.PENGUIN_KEY_DIR ?? testKeyDir() });
}

/** Run `penguin <args>` without a controlling terminal and collect its output (HOME is {@linkcode testHome} unless `env` sets it). */
export async function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const env: Record<string, string> = penguinEnv(opts.env);
  if (opts.adopt !== false) await adoptTestRoot(args, env, opts.cwd);
  if (opts.clearEnv) {
    const path = Deno.env.get("PATH");
    if (path !== undefined && env.PATH === undefined) env.PATH = path;
  }
  const { command, args: argv } = withoutTerminal([Deno.execPath(), ...penguinArgv(), ...args]);
  const cmd = new Deno.Command(command, {
    args: argv,
    cwd: opts.cwd ?? REPO,
    env,
    clearEnv: opts.clearEnv ?? false,
    stdin: opts.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  });
  const child = cmd.spawn();
  if (opts.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(opts.stdin));
    await w.close();
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr).replace(ANSI, ""),
  };
}

/** Run `command` with no input and collect its output as text. */
export async function runText(
  command: string,
  opts: Omit<Deno.CommandOptions, "stdin" | "stdout" | "stderr">,
): Promise<CliResult> {
  const out = await new Deno.Command(command, {
    ...opts,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/**
 * The argv of `penguin config model add` of (`provider`, `modelId`) in
 * `root`, with `extra` flags after them.
 */
export function modelAddArgs(
  root: string,
  provider: string,
  modelId: string,
  ...extra: string[]
): string[] {
  return [
    "--root",
    root,
    "config",
    "model",
    "add",
    "--provider",
    provider,
    "--model-id",
    modelId,
    ...extra,
  ];
}

/** The argv of `penguin mcp add <name>` in `root`, with `extra` flags and the command after it. */
export function mcpAddArgs(root: string, name: string, ...extra: string[]): string[] {
  return ["--root", root, "mcp", "add", name, ...extra];
}

/** {@linkcode runCli}, asserting that penguin exited 0. */
export async function runCliOk(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const r = await runCli(args, opts);
  assert.equal(r.code, 0, `penguin ${args.join(" ")}: ${r.stderr}`);
  return r;
}

/**
 * `penguin config model add` of (custom, `modelId`) at `baseUrl`
 * (openai-chat) as the project's default model, with `extra` flags (prices,
 * a key); asserts it succeeded.
 */
export async function addModelCli(
  root: string,
  baseUrl: string,
  extra: string[] = [],
  modelId = "m",
): Promise<void> {
  const r = await runCli(
    modelAddArgs(
      root,
      "custom",
      modelId,
      "--base-url",
      baseUrl,
      ...extra,
      "--client-type",
      "openai-chat",
      "--set-default",
    ),
  );
  if (r.code !== 0) throw new Error(`config model add failed (${r.code}): ${r.stderr}`);
}

/**
 * Start `penguin <args>` from the repository as a child process (the test
 * environment, stdout and stderr piped; `stdin` written and closed when
 * given, else no stdin), for tests that read its output while it runs or
 * signal it.
 */
export function spawnCli(args: string[], stdin?: string): Deno.ChildProcess {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...penguinArgv(), ...args],
    cwd: REPO,
    env: penguinEnv(),
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const w = child.stdin.getWriter();
    w.write(new TextEncoder().encode(stdin)).then(() => w.close()).catch(() => {});
  }
  return child;
}

/**
 * A piped `penguin chat` in a test's data root and workspace, as `spawnCli`
 * runs it but with stdin piped and left open (the chat waits for lines);
 * stderr `"piped"` or `"null"`.
 */
export function spawnChat(
  sb: { root: string; workspace: string },
  stderr: "piped" | "null",
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [...penguinArgv(), ...inRoot(sb, "chat")],
    cwd: REPO,
    env: penguinEnv(),
    stdin: "piped",
    stdout: "piped",
    stderr,
  }).spawn();
}

/**
 * The argv of `penguin <command>` in a test's data root and workspace:
 * `--root <root> <command> --workspace <workspace> ...args`.
 */
export function inRoot(
  sb: { root: string; workspace: string },
  command: "run" | "chat",
  ...args: string[]
): string[] {
  return ["--root", sb.root, command, "--workspace", sb.workspace, ...args];
}

/**
 * All of `stream` as text; `seen` is called once the text holds `needle`,
 * and at the end in any case (so nothing waiting on it is left hanging).
 */
export async function readWatching(
  stream: ReadableStream<Uint8Array>,
  needle: string,
  seen: () => void,
): Promise<string> {
  let text = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    text += chunk;
    if (text.includes(needle)) seen();
  }
  seen();
  return text;
}
