// Helper for escape_test.ts: run a bounded fork bomb in a sandbox with a
// process limit and print how far it got. Args: <workspace> <limit>.
import { createPolicy, spawnSandboxed } from "../../lib/sandbox/mod.ts";

const [ws, limit] = Deno.args;
const policy = createPolicy({
  workspace: ws!,
  maxProcesses: Number(limit),
  home: "",
  hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: ws! },
});
// perl forks without bash's minutes-long retry loop when fork fails.
const bomb = "my $n = 0; for (1..300) { my $p = fork; last unless defined $p; " +
  "if (!$p) { sleep 60; exit } $n++ } print qq(forked=$n\\n)";
const child = await spawnSandboxed({
  argv: [
    "bash",
    "-c",
    `perl -e '${bomb}'; n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; echo procs=$n`,
  ],
  policy,
  stdin: "null",
});
let out = "";
const reader = child.output.getReader();
while (!out.includes("procs=")) {
  const { value, done } = await reader.read();
  if (done) break;
  out += value;
}
reader.releaseLock();
await child.kill(100);
console.log(out.trim());
