// Run under a pseudo-terminal by terminal_test.ts: start a sandboxed command that traps SIGINT and
// waits for a line, report `helper-ready child=<pid> self=<pid>`, and once the terminal's Ctrl-C has
// reached this process, feed the command its line and report what it printed and its status.
import { createPolicy, spawnSandboxed } from "../../lib/sandbox/mod.ts";

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
let out = "";
const reader = child.output.getReader();
while (!out.includes("ready\n")) {
  const { done, value } = await reader.read();
  if (done) break;
  out += value;
}
out = "";
Deno.addSignalListener("SIGINT", async () => {
  await child.write("x\n");
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    out += value;
  }
  const status = await child.status;
  console.log(`helper-result ${JSON.stringify({ out, code: status.code })}`);
  Deno.exit(0);
});
console.log(`helper-ready child=${child.pid} self=${Deno.pid}`);
