// A `penguin run` left running while a test looks at what it holds, and the FIFOs its scripted
// commands wait on: the test goes on when a command has written one, and lets it end by writing
// another (no sleeps).
import assert from "node:assert/strict";
import { join } from "node:path";
import { penguinArgv, penguinEnv, REPO } from "./cli.ts";

/** Make the FIFO `path`. */
export async function mkfifo(path: string): Promise<void> {
  assert.ok((await new Deno.Command("mkfifo", { args: [path] }).output()).success, path);
}

/** `penguin --root <root> run --workspace <ws> -m <task>`, running, its output piped. */
export function startRun(root: string, ws: string, task = "go"): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [...penguinArgv(), "--root", root, "run", "--workspace", ws, "-m", task],
    cwd: REPO,
    env: penguinEnv(),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** `startRun` with the data root `<base>/data`. */
export function startRunIn(base: string, ws: string, task = "go"): Deno.ChildProcess {
  return startRun(join(base, "data"), ws, task);
}

/** A running `penguin run` whose one command waits (see {@linkcode heldRun}). */
export interface HeldRun {
  /** The penguin process. */
  child: Deno.ChildProcess;
  /** Let the command and the session end; the run's output. */
  end(): Promise<Deno.CommandOutput>;
  /** Stop the model server (in `finally`; lets a session still waiting end). */
  close(): Promise<void>;
}

/**
 * A `penguin --root <root> run --workspace <ws>` whose scripted model runs one command that writes
 * `up` in the workspace (`<ws>/up`, a FIFO) and then waits to read `<ws>/go`; resolves once the
 * command runs. `cmd` adds to the command (a marker to find its processes by).
 */
export async function heldRun(root: string, ws: string, cmd = ""): Promise<HeldRun> {
  const { addServerModel } = await import("./roots.ts");
  const { item, startModelServer, turn } = await import("./model_server.ts");
  await mkfifo(join(ws, "up"));
  await mkfifo(join(ws, "go"));
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  const server = await startModelServer({
    handler: async (_rec, i) => {
      if (i === 0) {
        return turn.of(item.toolCall("exec_command", {
          cmd: `echo up > up; cat go > /dev/null${cmd === "" ? "" : ` # ${cmd}`}`,
          yield_time_ms: 1000,
        }, { id: "c1" }));
      }
      await released;
      return turn.text("done");
    },
    maxRequests: 10,
  });
  await addServerModel(root, server);
  const child = startRun(root, ws);
  assert.equal(await Deno.readTextFile(join(ws, "up")), "up\n");
  return {
    child,
    async end() {
      await Deno.writeTextFile(join(ws, "go"), "go\n");
      release();
      return await child.output();
    },
    async close() {
      release();
      await server.close();
    },
  };
}
