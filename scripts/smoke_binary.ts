// `deno run -A scripts/smoke_binary.ts <penguin argv…>`: the release smoke
// test. Runs penguin as a user would, from a fresh HOME and a workspace
// outside the repository, and stops at the first step that fails:
//
//   --version        prints "penguin <deno.json version>"
//   demo             the built-in scripted model's run; its trace validates
//   sandbox check    the OS sandbox works on this machine (exit 0)
//   config model add a model on the scripted model server (tests/support/model_server.ts, 127.0.0.1)
//   run              write_file, exec_command, read_file under the sandbox: the file
//                    tools run in a copy of penguin re-executed inside the sandbox
//                    (the binary itself when compiled), in the embedded Worker module
//   run --sandbox off read_file in the Worker inside penguin's own process
//   trace validate   the traces both runs wrote
//
// The argv is a compiled binary (`scripts/smoke_binary.ts dist/penguin-x86_64-unknown-linux-gnu`)
// or the source form (`scripts/smoke_binary.ts deno run -P=penguin … main.ts`, what
// tests/scripts/smoke_binary_test.ts runs). Penguin gets no inherited environment but
// PATH, a temporary HOME, NO_COLOR and, for the source form, DENO_DIR. Every step runs
// without extra permissions, so the compiled form passes only with the permission
// set baked into it. Prints one line per step; exit 0 when all passed, 1 otherwise.
import { basename, join } from "node:path";
import { type ModelServer, startModelServer, turn } from "../tests/support/model_server.ts";
import { ROOT } from "./compile.ts";

/** Output of one penguin run. */
interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** What the steps share. */
interface Smoke {
  /** The argv that starts penguin (arguments follow). */
  argv: string[];
  /** The environment penguin runs with (nothing else is inherited). */
  env: Record<string, string>;
  /** A fresh directory: HOME, data root and workspace live below it. */
  base: string;
  /** The data root of the configured model's runs. */
  root: string;
  /** The workspace of those runs. */
  workspace: string;
  /** Trace files to validate. */
  traces: string[];
  /** Directories to remove at the end besides `base`. */
  leftovers: string[];
}

/** The text written by the file tool and read back by the command. */
const FILE_TEXT = "written by penguin's file tool\n";
/** The text written by the command and read back by the file tool. */
const COMMAND_TEXT = "written by a sandboxed command";

/** The scripted model's turns: the sandboxed run (4 requests), then the unsandboxed one (2). */
function script() {
  return [
    turn.toolCall("write_file", { file_path: "smoke.txt", content: FILE_TEXT }),
    turn.toolCall("exec_command", {
      cmd: `cat smoke.txt && echo '${COMMAND_TEXT}' > command.txt`,
      description: "read the file back, write another",
    }),
    turn.toolCall("read_file", { file_path: "command.txt" }),
    turn.text("Smoke run done."),
    turn.toolCall("read_file", { file_path: "smoke.txt" }),
    turn.text("Unsandboxed read done."),
  ];
}

async function penguin(s: Smoke, args: string[], cwd: string): Promise<Ran> {
  const out = await new Deno.Command(s.argv[0]!, {
    args: [...s.argv.slice(1), ...args],
    cwd,
    env: s.env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** Throws with the run's output unless it exited 0. */
function ok(r: Ran, what: string): Ran {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  if (/NotCapable|Requires \w+ access|PermissionDenied/.test(r.stdout + r.stderr)) {
    throw new Error(`${what} hit a Deno permission check\n${r.stdout}\n${r.stderr}`);
  }
  return r;
}

function expect(cond: boolean, what: string, r?: Ran): void {
  if (!cond) throw new Error(r ? `${what}\n${r.stdout}\n${r.stderr}` : what);
}

/** The content of the last message of the model server's `i`-th request (openai-chat). */
function lastInput(server: ModelServer, i: number): string {
  const body = server.requests[i]?.body as { messages?: { content?: unknown }[] } | undefined;
  const content = body?.messages?.at(-1)?.content;
  return typeof content === "string" ? content : JSON.stringify(content ?? null);
}

/** Every `session-…_NNN.jsonl` below `dir` whose name holds `session`. */
async function traceFiles(dir: string, session: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) out.push(...await traceFiles(p, session));
    else if (e.name.startsWith(`${session}_`) && /_\d{3}\.jsonl$/.test(e.name)) out.push(p);
  }
  return out;
}

async function sessionTraces(s: Smoke, r: Ran): Promise<string[]> {
  const id = /^Session: (session-\S+)$/m.exec(r.stderr)?.[1];
  expect(id !== undefined, "run printed no Session: line", r);
  const files = await traceFiles(s.root, id!);
  expect(files.length > 0, `no trace file of ${id} under ${s.root}`);
  return files;
}

async function version(s: Smoke): Promise<void> {
  const expected = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json"))).version;
  const r = ok(await penguin(s, ["--version"], s.workspace), "--version");
  expect(r.stdout === `penguin ${expected}\n`, `--version: expected "penguin ${expected}"`, r);
}

async function demo(s: Smoke): Promise<void> {
  const r = await penguin(s, ["demo"], s.workspace);
  const dir = /^Everything is in (\S+) \(remove it when done\)\.$/m.exec(r.stdout)?.[1];
  if (dir !== undefined) s.leftovers.push(dir);
  ok(r, "demo");
  expect(/^\s*│ Hello from penguin's scripted demo model!$/m.test(r.stdout), "demo: no file", r);
  const trace = /^Trace: (\S+\.jsonl)$/m.exec(r.stdout)?.[1];
  expect(trace !== undefined, "demo printed no Trace: line", r);
  s.traces.push(trace!);
}

async function sandboxCheck(s: Smoke): Promise<void> {
  const r = await penguin(s, ["sandbox", "check"], s.workspace);
  ok(r, "sandbox check (the file tools and commands need a working OS sandbox)");
}

async function configure(s: Smoke, server: ModelServer): Promise<void> {
  ok(
    await penguin(s, [
      "--root",
      s.root,
      "config",
      "model",
      "add",
      "--provider",
      "custom",
      "--model-id",
      "m",
      "--base-url",
      server.baseUrl("openai-chat"),
      "--client-type",
      "openai-chat",
      "--set-default",
    ], s.workspace),
    "config model add",
  );
}

async function sandboxedRun(s: Smoke, server: ModelServer): Promise<void> {
  const r = ok(
    await penguin(s, [
      "--root",
      s.root,
      "run",
      "--workspace",
      s.workspace,
      "-m",
      "Write smoke.txt, run a command, read its file.",
    ], s.workspace),
    "run",
  );
  expect(/Smoke run done\./.test(r.stdout), "run: no final answer", r);
  expect(server.requests.length === 4, `run: ${server.requests.length} model requests, not 4`, r);
  const created = lastInput(server, 1);
  expect(/^Created "smoke\.txt"/.test(created), `write_file answered: ${created}`, r);
  const command = lastInput(server, 2);
  expect(command.includes(FILE_TEXT.trim()), `exec_command answered: ${command}`, r);
  const read = lastInput(server, 3);
  expect(read.includes(COMMAND_TEXT), `read_file answered: ${read}`, r);
  const written = await Deno.readTextFile(join(s.workspace, "smoke.txt"));
  expect(written === FILE_TEXT, `smoke.txt holds ${JSON.stringify(written)}`);
  s.traces.push(...await sessionTraces(s, r));
}

async function unsandboxedRun(s: Smoke, server: ModelServer): Promise<void> {
  const r = ok(
    await penguin(s, [
      "--root",
      s.root,
      "run",
      "--workspace",
      s.workspace,
      "--sandbox",
      "off",
      "-m",
      "Read smoke.txt.",
    ], s.workspace),
    "run --sandbox off",
  );
  expect(/Unsandboxed read done\./.test(r.stdout), "run --sandbox off: no final answer", r);
  const read = lastInput(server, 5);
  expect(read.includes(FILE_TEXT.trim()), `read_file answered: ${read}`, r);
  s.traces.push(...await sessionTraces(s, r));
}

async function validate(s: Smoke): Promise<void> {
  const r = ok(await penguin(s, ["trace", "validate", ...s.traces], s.workspace), "trace validate");
  const summary = `${s.traces.length} file(s), `;
  expect(r.stdout.includes(summary) && /, 0 problem\(s\)\n$/.test(r.stdout), "trace validate", r);
}

/** Deno's module cache directory (`DENO_DIR`, else what `deno info` reports). */
async function denoDir(): Promise<string> {
  const set = Deno.env.get("DENO_DIR");
  if (set !== undefined) return set;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  }).output();
  return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir as string;
}

async function newSmoke(argv: string[]): Promise<Smoke> {
  const tmp = await Deno.stat("/var/tmp").then((st) => st.isDirectory, () => false);
  // Under /var/tmp the workspace is one a sandboxed command sees at its own path.
  const base = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "penguin-smoke-", ...(tmp ? { dir: "/var/tmp" } : {}) }),
  );
  const home = join(base, "home");
  const workspace = join(base, "workspace");
  await Deno.mkdir(home);
  await Deno.mkdir(workspace);
  const env: Record<string, string> = {
    HOME: home,
    NO_COLOR: "1",
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
  };
  // The source form (`deno run … main.ts`) keeps Deno's module cache, which lives under HOME by default.
  if (basename(argv[0]!).startsWith("deno")) env.DENO_DIR = await denoDir();
  return { argv, env, base, root: join(base, "data"), workspace, traces: [], leftovers: [] };
}

/** `name` as an absolute path: relative to the current directory, or found on PATH when it has no slash. */
function program(name: string): string {
  if (name.startsWith("/")) return name;
  if (name.includes("/")) return join(Deno.cwd(), name);
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      if (dir !== "" && Deno.statSync(join(dir, name)).isFile) return join(dir, name);
    } catch {
      // Not in this directory.
    }
  }
  return name;
}

/** Run every step against `argv`; prints one line each; true when all passed. */
export async function smoke(argv: string[]): Promise<boolean> {
  const s = await newSmoke(argv);
  const server = await startModelServer({ turns: script() });
  const steps: [string, () => Promise<void>][] = [
    ["--version", () => version(s)],
    ["demo", () => demo(s)],
    ["sandbox check", () => sandboxCheck(s)],
    ["config model add", () => configure(s, server)],
    ["run (sandboxed file tools and command)", () => sandboxedRun(s, server)],
    ["run --sandbox off (file tool in a Worker)", () => unsandboxedRun(s, server)],
    ["trace validate", () => validate(s)],
  ];
  try {
    for (const [name, step] of steps) {
      try {
        await step();
        console.log(`smoke: ok    ${name}`);
      } catch (e) {
        console.log(`smoke: FAIL  ${name}: ${e instanceof Error ? e.message : String(e)}`);
        return false;
      }
    }
    console.log(`smoke: all ${steps.length} steps passed (${argv.join(" ")})`);
    return true;
  } finally {
    await server.close();
    for (const dir of [s.base, ...s.leftovers]) await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  if (Deno.args.length === 0) {
    console.error("usage: deno run -A scripts/smoke_binary.ts <penguin binary | argv…>");
    Deno.exit(2);
  }
  const argv = [program(Deno.args[0]!), ...Deno.args.slice(1)];
  Deno.exit(await smoke(argv) ? 0 : 1);
}
