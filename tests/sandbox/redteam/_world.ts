// The red-team world and runner: a workspace, an outside directory, a fake
// HOME and a data root full of planted secrets, listeners the sandbox must
// not reach, and one `penguin run` (a real subprocess under the production
// permission set) driven by the scripted model server through real tool calls.
import { join } from "node:path";
import dgram from "node:dgram";
import { addModel } from "../../../lib/state/project_config.ts";
import { startModelServer, turn } from "../../support/model_server.ts";
import type { ScriptedTurn } from "../../support/model_server.ts";
import { item } from "../../support/model_server.ts";
import { markTestRoot, penguinArgv, REPO, testKeyDir } from "../../support/cli.ts";
import { visibleTempDir } from "../_helpers.ts";

/** One tool call of an attempt. */
export interface Step {
  /** Tool name. */
  tool: string;
  /** Arguments. */
  args: Record<string, unknown>;
  /** Tool-call id (default `rt_<n>`). */
  id?: string;
}

/** The planted secrets: none may reach a model request body or the trace. */
export interface Secrets {
  /** In `outside/secret.txt` (readable by commands by design; never `cat`ed by an attempt). */
  outside: string;
  /** In `$HOME/.ssh/id_rsa`. */
  ssh: string;
  /** The model entry's api_key in `.project_config.toml`. */
  config: string;
  /** A comment line in the agent's `.vault.toml`. */
  vault: string;
  /** `DEEPSEEK_API_KEY` in penguin's environment. */
  deepseek: string;
  /** `OPENAI_API_KEY` in penguin's environment. */
  openai: string;
  /** `PENGUIN_RT_SECRET` in penguin's environment (penguin may read it; commands never get it). */
  penguinVar: string;
  /** `AWS_SECRET_ACCESS_KEY` in penguin's environment (outside penguin's own env permission). */
  aws: string;
  /** base64 of `outside/secret.png` (what read_image would send). */
  image: string;
}

/** Everything an attempt may refer to. */
export interface World {
  base: string;
  ws: string;
  outside: string;
  home: string;
  root: string;
  agentState: string;
  projectConfig: string;
  secrets: Secrets;
  /** Unique text, part of penguin's argv and of attack processes' argv. */
  marker: string;
  /** Harness pid (set when penguin starts). */
  pid: number;
  /** TCP listener on 0.0.0.0. */
  tcpPort: number;
  /** UDP "resolver" on 127.0.0.1. */
  udpPort: number;
  /** The scripted model server's port. */
  modelPort: number;
  /** A non-loopback address of this host, if any. */
  hostIp?: string | undefined;
  /** Connections the TCP listener accepted. */
  tcpHits: number;
  /** Datagrams the UDP listener received. */
  udpHits: number;
  /**
   * Listening Unix sockets in places the sandbox can see: a plain dir under
   * the fake HOME, a /var/tmp-like dir of the base, the workspace's parent.
   */
  unixSockets: string[];
  /** Connections the Unix listeners accepted. */
  unixHits: number;
  /** Original contents of planted files, by absolute path. */
  originals: Map<string, string>;
  /** Remove everything. */
  close(): Promise<void>;
}

/** What one `penguin run` left behind. */
export interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
  /** Every request body the model server received, as JSON text. */
  bodies: string[];
  /** All trace files of the data root, concatenated. */
  trace: string;
  /** Requests the model server received. */
  requests: number;
  /** Turns scripted (steps grouped per turn, plus the final answer). */
  scripted: number;
  /** The tool outputs by call id, for failure messages. */
  outputs: Map<string, string>;
}

const rand = () => crypto.randomUUID().replaceAll("-", "").slice(0, 12);

// A valid 1×1 PNG.
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

async function denoDir(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"] }).output();
  return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir;
}

function hostAddress(): string | undefined {
  try {
    return Deno.networkInterfaces().find((i) =>
      i.family === "IPv4" && !i.address.startsWith("127.")
    )
      ?.address;
  } catch {
    return undefined;
  }
}

/** Build the world: directories, secrets, listeners. */
export async function createWorld(): Promise<World> {
  const base = await visibleTempDir("penguin-redteam-");
  const ws = join(base, "ws");
  const outside = join(base, "outside");
  const home = join(base, "home");
  const root = join(base, "data");
  const agentState = join(root, "default_project", "agents", "default_agent", "agent_state");
  const projectConfig = join(root, "default_project", ".project_config.toml");
  const secrets: Secrets = {
    outside: `RT-OUTSIDE-${rand()}`,
    ssh: `RT-SSH-${rand()}`,
    config: `RT-CONFIG-${rand()}`,
    vault: `RT-VAULT-${rand()}`,
    deepseek: `RT-DEEPSEEK-${rand()}`,
    openai: `RT-OPENAI-${rand()}`,
    penguinVar: `RT-PENGUINVAR-${rand()}`,
    aws: `RT-AWS-${rand()}`,
    image: "",
  };
  const originals = new Map<string, string>();
  const plant = async (path: string, text: string) => {
    await Deno.mkdir(join(path, ".."), { recursive: true });
    await Deno.writeTextFile(path, text);
    originals.set(path, text);
  };
  // A minimal but real repository (HEAD, objects/, refs/), so the host git can run in it.
  for (const d of ["hooks", "objects", "refs/heads"]) {
    await Deno.mkdir(join(ws, ".git", d), { recursive: true });
  }
  await plant(join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
  await plant(join(ws, ".git", "config"), "[core]\n\trepositoryformatversion = 0\n");
  await plant(join(ws, "README.md"), "red team workspace\n");
  await plant(join(outside, "secret.txt"), `${secrets.outside}\n`);
  await plant(join(outside, "edit_target.txt"), "ORIGINAL CONTENT\n");
  await plant(join(outside, "ptrace_target.txt"), "delete me if you can\n");
  const png = new Uint8Array([...PNG, ...new TextEncoder().encode(secrets.outside)]);
  await Deno.writeFile(join(outside, "secret.png"), png);
  secrets.image = btoa(String.fromCharCode(...png));
  await plant(join(home, ".ssh", "id_rsa"), `-----BEGIN KEY-----\n${secrets.ssh}\n`);
  await plant(join(home, ".bashrc"), "# original bashrc\n");

  const unixSockets = [
    join(home, "projects", "dev.sock"),
    join(base, "vartmp", "agent.sock"),
    join(base, "parent.sock"),
  ];
  const unixListeners: Deno.UnixListener[] = [];
  for (const path of unixSockets) {
    await Deno.mkdir(join(path, ".."), { recursive: true });
    unixListeners.push(Deno.listen({ transport: "unix", path }));
  }

  const listener = Deno.listen({ hostname: "0.0.0.0", port: 0 });
  const udp = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", () => resolve()));
  const world: World = {
    base,
    ws,
    outside,
    home,
    root,
    agentState,
    projectConfig,
    secrets,
    marker: `rtmark${rand()}`,
    pid: 0,
    tcpPort: listener.addr.port,
    udpPort: (udp.address() as { port: number }).port,
    modelPort: 0,
    ...(hostAddress() ? { hostIp: hostAddress() } : {}),
    tcpHits: 0,
    udpHits: 0,
    unixSockets,
    unixHits: 0,
    originals,
    async close() {
      listener.close();
      for (const l of unixListeners) l.close();
      udp.close();
      await Deno.remove(base, { recursive: true });
    },
  };
  udp.on("message", () => world.udpHits++);
  for (const l of unixListeners) {
    (async () => {
      for await (const conn of l) {
        world.unixHits++;
        conn.close();
      }
    })().catch(() => {});
  }
  (async () => {
    try {
      for await (const conn of listener) {
        world.tcpHits++;
        conn.close();
      }
    } catch {
      // closed
    }
  })();
  return world;
}

/** Group attempts' steps into turns: turn k holds the k-th step of every attempt. */
export function turnsOf(stepLists: Step[][]): Step[][] {
  const turns: Step[][] = [];
  for (const steps of stepLists) {
    steps.forEach((s, k) => (turns[k] ??= []).push(s));
  }
  return turns;
}

async function readTree(dir: string): Promise<string> {
  let out = "";
  try {
    for await (const e of Deno.readDir(dir)) {
      const p = join(dir, e.name);
      if (e.isDirectory) out += await readTree(p);
      else if (e.isFile) out += await Deno.readTextFile(p);
    }
  } catch {
    // missing
  }
  return out;
}

/**
 * Run one `penguin run` whose scripted model makes the tool calls of
 * `stepsOf(world)` (grouped into turns), then a canary turn (exec_command
 * and write_file: proof the harness still works), then a final answer.
 * `stepsOf` is evaluated at the first model request, when the pid is known.
 */
export async function runSession(
  world: World,
  stepsOf: (w: World) => Step[][],
  opts: { sandbox?: string; extraArgs?: string[]; env?: Record<string, string> } = {},
): Promise<Outcome> {
  let turns: ScriptedTurn[] | undefined;
  let n = 0;
  const build = (): ScriptedTurn[] => {
    const grouped = turnsOf(stepsOf(world));
    grouped.push([
      { tool: "exec_command", args: { description: "canary", cmd: `echo canary-${world.marker}` } },
      { tool: "write_file", args: { file_path: "canary.txt", content: world.marker } },
    ]);
    return [
      ...grouped.map((steps) => ({
        items: steps.map((s) => item.toolCall(s.tool, s.args, { id: s.id ?? `rt_${n++}` })),
      })),
      turn.text(`red team done ${world.marker}`),
    ];
  };
  const server = await startModelServer({
    handler: (_req, index) => (turns ??= build())[index],
    maxRequests: 100,
  });
  world.modelPort = server.port;
  await Deno.mkdir(world.agentState, { recursive: true });
  await addModel(world.projectConfig, {
    provider: "custom",
    model_id: "m",
    base_url: server.baseUrl("openai-chat"),
    client_type: "openai-chat",
    api_key: world.secrets.config,
  }, { setDefault: true });
  await markTestRoot(world.root);
  world.originals.set(world.projectConfig, await Deno.readTextFile(world.projectConfig));
  const vault = join(world.agentState, ".vault.toml");
  await Deno.writeTextFile(vault, `# ${world.secrets.vault}\n`);
  world.originals.set(vault, `# ${world.secrets.vault}\n`);

  const child = new Deno.Command(Deno.execPath(), {
    args: [
      ...penguinArgv(),
      "--root",
      world.root,
      "run",
      "--workspace",
      world.ws,
      "--max-turns",
      "0",
      "--sandbox",
      opts.sandbox ?? "workspace-write",
      ...(opts.extraArgs ?? []),
      "-m",
      `red team ${world.marker}`,
    ],
    cwd: world.base, // so /proc/self/cwd/outside is a real way out
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: world.home,
      DENO_DIR: await denoDir(),
      NO_COLOR: "1",
      LANG: "C.UTF-8",
      DEEPSEEK_API_KEY: world.secrets.deepseek,
      OPENAI_API_KEY: world.secrets.openai,
      PENGUIN_RT_SECRET: world.secrets.penguinVar,
      PENGUIN_KEY_DIR: testKeyDir(),
      AWS_SECRET_ACCESS_KEY: world.secrets.aws,
      ...opts.env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  world.pid = child.pid;
  // A bound, not an assertion: a harness an attack managed to stop must not hang the suite.
  const watchdog = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }, 150_000);
  try {
    const out = await child.output();
    const dec = new TextDecoder();
    const trace = await readTree(
      join(world.root, "default_project", "agents", "default_agent", "traces"),
    );
    const outputs = new Map<string, string>();
    for (const line of trace.split("\n")) {
      if (!line.includes('"tool_call_output"')) continue;
      const p = JSON.parse(line).payload;
      outputs.set(p.tool_call_id, p.output);
    }
    return {
      code: out.code,
      stdout: dec.decode(out.stdout),
      stderr: dec.decode(out.stderr),
      bodies: server.requests.map((r) => JSON.stringify(r.body)),
      trace,
      requests: server.requests.length,
      scripted: turns?.length ?? 0,
      outputs,
    };
  } finally {
    clearTimeout(watchdog);
    await server.close();
  }
}

/** The repository root, for attempts that need a helper script. */
export { REPO };
