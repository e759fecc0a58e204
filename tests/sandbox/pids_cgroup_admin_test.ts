// penguin's pids cgroup lies below the one it runs in (lib/sandbox/_pids_cgroup.ts): made at the
// hierarchy's root, its commands left an administrator's `pids.max` (a CI job's, systemd's
// TasksMax) and started 600 processes where 200 were allowed (attack round 29 i06). A penguin
// process started in a cgroup with a limit of 400 makes its cgroup inside it, and its command's
// forks stop at half of what that limit leaves: one session's commands took a job's whole limit
// and the user's next penguin could not start (round 30 p03). Bounded: 400 processes at most.
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO } from "../support/cli.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { visibleTempDir } from "./_helpers.ts";

const V1 = "/sys/fs/cgroup/pids";
const v1Here = Deno.build.os === "linux" && Deno.uid() === 0 && (() => {
  try {
    Deno.statSync("/usr/bin/python3");
  } catch {
    return false;
  }
  try {
    return Deno.statSync(join(V1, "cgroup.procs")).isFile;
  } catch {
    return false;
  }
})();

/** This process's pids cgroup (v1), as `/proc/self/cgroup` names it. */
function ownPidsPath(): string {
  const line = Deno.readTextFileSync("/proc/self/cgroup").split("\n")
    .find((l) => l.split(":")[1] === "pids");
  return (line?.split(":").slice(2).join(":") ?? "/").replace(/\/$/, "");
}

Deno.test({
  name:
    "penguin's pids cgroup is made inside the one it runs in; its commands take half of what its limit leaves",
  ignore: !bwrap || !v1Here,
  fn: async () => {
    const admin = join(V1 + ownPidsPath(), `penguin-test-admin-${crypto.randomUUID().slice(0, 8)}`);
    const dir = await visibleTempDir("penguin-pids-admin-");
    await Deno.mkdir(admin);
    try {
      await Deno.writeTextFile(join(admin, "pids.max"), "400");
      const script = join(dir, "run.ts");
      const url = (p: string) => JSON.stringify(pathToFileURL(join(REPO, p)).href);
      await Deno.writeTextFile(
        script,
        `import { createPolicy, spawnSandboxed } from ${url("lib/sandbox/mod.ts")};
import { cgroupDir } from ${url("lib/sandbox/_pids_cgroup.ts")};
const ws = Deno.args[0];
const policy = createPolicy({ workspace: ws, home: "", hostEnv: { PATH: "/usr/bin:/bin", HOME: ws } });
let out = "";
const child = await spawnSandboxed({
  // Forks until one is refused (at most 400); the children wait until the command ends.
  argv: ["python3", "-c", ${
          JSON.stringify(`import os, signal
n = 0
for i in range(400):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        signal.pause()
        os._exit(0)
    n += 1
print("started=%d" % n, flush=True)`)
        }],
  policy: { ...policy, hideOtherDataRoots: false },
  onOutput: (c) => void (out += c),
});
await child.status;
console.log(JSON.stringify({ dir: cgroupDir(), out }));
`,
      );
      const ws = join(dir, "ws");
      await Deno.mkdir(ws);
      // The shell joins the administrator's cgroup, then becomes the penguin process.
      const o = await new Deno.Command("bash", {
        args: [
          "-c",
          'echo $$ > "$0/cgroup.procs" && exec "$1" run -A --config "$2" "$3" "$4"',
          admin,
          Deno.execPath(),
          join(REPO, "deno.json"),
          script,
          ws,
        ],
        cwd: REPO,
      }).output();
      const text = new TextDecoder().decode(o.stdout);
      assert.ok(o.success, new TextDecoder().decode(o.stderr));
      const got = JSON.parse(text.trim().split("\n").at(-1)!) as { dir?: string; out: string };
      assert.ok(got.dir?.startsWith(admin + "/penguin-"), text);
      // Stopped by the kernel's limit (`started=`) or by the init's guard, whichever came first.
      const started = Number(
        (/started=(\d+)/.exec(got.out) ?? /started more than (\d+) processes/.exec(got.out))?.[1],
      );
      assert.ok(started > 0 && started < 200, text);
    } finally {
      for await (const e of Deno.readDir(admin)) {
        if (e.isDirectory) await Deno.remove(join(admin, e.name)).catch(() => {});
      }
      await Deno.remove(admin).catch(() => {});
      await Deno.remove(dir, { recursive: true });
    }
  },
});
