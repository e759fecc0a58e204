// How many sandboxes a session starts: `deno run -A bench/sandbox_starts.ts [other checkout ...]`.
//
// For each checkout (this repository first), with a run directory of its own (`PENGUIN_RUN_DIR`,
// empty at first) and a data root of its own, runs a 5-turn `penguin run` (five `exec_command`
// `echo step-N`, then text) against the scripted model twice, each under
// `strace -f -e trace=execve`, and counts the execs of bwrap: `bwrap --version` apart from the
// sandboxes it starts. The second run is a second penguin process on the same machine: what a
// process remembers from the first one shows there.
import { join } from "node:path";
import { startModelServer, turn } from "../tests/support/model_server.ts";
import { denoDir, REPO } from "../tests/support/cli.ts";
import { addModelArgv, checkoutsOf, quietCommand, taskArgv } from "./_checkouts.ts";

const CHECKOUTS = checkoutsOf(REPO, Deno.args);
const base = await Deno.realPath(
  await Deno.makeTempDir({ dir: "/var/tmp", prefix: "penguin-bench-starts-" }),
);

let n = 0;
const server = await startModelServer({
  maxRequests: 1_000_000,
  handler: () => {
    const i = n++ % 6;
    return i < 5 ? turn.toolCall("exec_command", { cmd: `echo step-${i}` }) : turn.text("done");
  },
});

for (const [i, c] of CHECKOUTS.entries()) {
  const dir = join(base, `c${i}`);
  const [home, ws, root, run] = ["home", "ws", "root", "run"].map((d) => join(dir, d)) as [
    string,
    string,
    string,
    string,
  ];
  for (const d of [home, ws]) await Deno.mkdir(d, { recursive: true });
  const env = {
    NO_COLOR: "1",
    HOME: home,
    DENO_DIR: denoDir(),
    PATH: Deno.env.get("PATH") ?? "",
    PENGUIN_RUN_DIR: run,
  };
  const penguin = async (args: string[], trace?: string) => {
    const argv = [...taskArgv(c), ...args];
    const out = await (trace
      ? quietCommand(
        "strace",
        [
          ...["-f", "-qq", "-e", "trace=execve", "-s", "256", "-v", "-o", trace],
          ...[Deno.execPath(), ...argv],
        ],
        env,
        ws,
      )
      : quietCommand(Deno.execPath(), argv, env, ws)).output();
    if (!out.success) {
      throw new Error(new TextDecoder().decode(out.stderr));
    }
  };
  await penguin(addModelArgv(root, server.baseUrl("openai-chat")));
  for (const round of [1, 2]) {
    const log = join(dir, `strace-${round}.log`);
    n = 0;
    await penguin(
      ["run", "--root", root, "--workspace", ws, "--approve", "allow-all", "-m", "go"],
      log,
    );
    const execs = [
      ...(await Deno.readTextFile(log)).matchAll(/execve\("([^"]*\/bwrap)", \[([^\]]*)/g),
    ]
      .map((m) => m[2]!);
    const version = execs.filter((a) => /"--version"/.test(a)).length;
    console.log(
      `${c} run ${round}: bwrap --version ${version}, sandboxes ${execs.length - version}`,
    );
  }
}
server.close?.();
if (!Deno.env.get("KEEP")) await Deno.remove(base, { recursive: true });
else console.log(base);
