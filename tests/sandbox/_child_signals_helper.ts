// Run by child_signals_test.ts with SIGHUP, SIGINT and SIGQUIT ignored (as a script's background
// job or nohup leaves them). For each way a command can start (direct bwrap, supervised bwrap,
// no sandbox): the command's own SigIgn line, then whether its `trap … QUIT` and `trap … INT` run
// when penguin signals it. Prints one JSON line per launch.
import { createPolicy, type SandboxMode, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { _pinLaunch } from "../../lib/sandbox/spawn.ts";
import { collect, readUntil } from "./_helpers.ts";

const ws = Deno.args[0]!;
const policy = createPolicy({
  workspace: ws,
  home: "",
  hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: ws },
});
// Penguin's permission set cannot read its own /proc status: a child that reads its parent's can.
// What went wrong is kept: one CI run saw an empty answer, with nothing to say why.
async function parentSigIgn(): Promise<{ mask: string; said: string }> {
  const run = await new Deno.Command("bash", {
    args: [
      "--noprofile",
      "--norc",
      "-c",
      'while read -r k v; do [ "$k" = SigIgn: ] && echo "$v"; done </proc/$PPID/status; echo "ppid $PPID" >&2',
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return {
    mask: dec.decode(run.stdout).trim(),
    said: `exit ${run.code}, pid ${Deno.pid}: ${dec.decode(run.stderr).trim()}`,
  };
}
const first = await parentSigIgn();
// A second look only when the first said nothing usable, its answer reported with the first's.
const read = /^[0-9a-f]{16}$/.test(first.mask) ? first : await parentSigIgn();
const selfIgnored = read.mask;
const selfIgnoredRead = read === first ? first.said : `${first.said}; again: ${read.said}`;
const launches: [string, SandboxMode, boolean][] = [
  ["direct", "workspace-write", true],
  ["supervised", "workspace-write", false],
  ["off", "off", true],
];
for (const [name, mode, direct] of launches) {
  _pinLaunch(direct ? {} : { direct: false });
  const p = { ...policy, mode };
  const status = await collect(
    await spawnSandboxed({ shell: "grep '^SigIgn' /proc/self/status", policy: p }),
  );
  const traps: Record<string, number | null> = {};
  for (const sig of ["SIGQUIT", "SIGINT"] as const) {
    const child = await spawnSandboxed({
      shell: `trap 'echo trapped; exit 6' ${sig.slice(3)}; echo ready; ` +
        "while :; do sleep 0.05; done",
      policy: p,
    });
    await readUntil(child, "ready\n");
    child.signal(sig);
    // A signal the command cannot trap would leave it looping: kill it after a first try.
    const timer = setTimeout(() => child.kill(0), 20_000);
    const r = await collect(child);
    clearTimeout(timer);
    traps[sig] = r.out.includes("trapped") ? r.code : null;
  }
  console.log(
    JSON.stringify({ name, selfIgnored, selfIgnoredRead, command: status.out.trim(), traps }),
  );
}
