// Run under a pseudo-terminal by terminal_test.ts: start a sandboxed command that traps SIGINT and
// waits for a line, report `helper-ready child=<pid> self=<pid>`, and once the terminal's Ctrl-C has
// reached this process, feed the command its line and report what it printed and its status.
import { createPolicy, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { collect, readUntil } from "./_helpers.ts";

const ws = Deno.args[0]!;
const policy = createPolicy({
  workspace: ws,
  home: "",
  hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: ws },
});
const child = await spawnSandboxed({
  shell: "trap 'echo caught' INT; echo ready; read -r line; echo got $line",
  policy,
});
await readUntil(child, "ready\n");
Deno.addSignalListener("SIGINT", async () => {
  await child.write("x\n");
  const { out, code } = await collect(child);
  console.log(`helper-result ${JSON.stringify({ out, code })}`);
  Deno.exit(0);
});
console.log(`helper-ready child=${child.pid} self=${Deno.pid}`);
