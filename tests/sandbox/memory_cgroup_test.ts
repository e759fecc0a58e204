// The memory bound on penguin's commands (lib/sandbox/_memory_cgroup.ts): where the machine lets
// penguin make a memory cgroup (root, a cgroup v1 memory hierarchy), every sandbox joins this
// process's cgroup under the shared `penguin` one, and memory a command holds outside any
// process's share — tmpfs pages, tmpfs inodes, System V shared memory, a memfd — is counted
// against the limit: the kernel stops the command inside the cgroup instead of killing the host's
// processes (attack round 27: c02, c04, c05, c06). Here this process's own cgroup is pinned to
// 96 MiB; each holder tries to take 160 MiB and must be stopped before it does.
import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnSandboxed } from "../../lib/sandbox/spawn.ts";
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";
import {
  _pinMemoryLimit,
  BOUND_DENOMINATOR,
  BOUND_NUMERATOR,
  memoryCgroup,
} from "../../lib/sandbox/_memory_cgroup.ts";
import { exitVerdict } from "../../lib/tools/command_session.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { withPolicyWorkspace } from "./_helpers.ts";
import { useTestRunDir } from "../support/run_dir.ts";
import { memoryCgroupsHere } from "./_cgroups.ts";

useTestRunDir();
const LIMIT = 96 * 1024 * 1024;
_pinMemoryLimit(LIMIT);

const ignore = !bwrap || !memoryCgroupsHere();

/** Run `shell` in a sandbox (kept or its own) and return its exit code and output. */
async function sandboxed(
  shell: string,
  reuse: boolean,
): Promise<{ code: number; signal: string | null; memoryBound?: number; out: string }> {
  let result: { code: number; signal: string | null; memoryBound?: number; out: string } = {
    code: -1,
    signal: null,
    out: "",
  };
  await withPolicyWorkspace(async (base) => {
    const keeping = reuse ? keepStandIns() : undefined;
    try {
      let out = "";
      const child = await spawnSandboxed({
        shell,
        policy: { ...base, hideOtherDataRoots: false },
        reuse,
        onOutput: (chunk) => void (out += chunk),
      });
      const status = await child.status;
      result = { ...status, out };
    } finally {
      await keeping?.end();
    }
  });
  return result;
}

Deno.test({
  name: "a running command's processes are in penguin's memory cgroup, under the shared bound",
  ignore,
  fn: async () => {
    const { code, out } = await sandboxed("echo ok", false);
    assert.equal(code, 0, out);
    const made = memoryCgroup();
    assert.ok(made !== undefined, "the cgroup was made with the first command");
    assert.match(made.dir, /\/penguin\/penguin-\d+-\d+$/);
    assert.equal(
      (await Deno.readTextFile(join(made.dir, "memory.limit_in_bytes"))).trim(),
      String(LIMIT),
    );
    const parent = join(made.dir, "..");
    const bound = Number((await Deno.readTextFile(join(parent, "memory.limit_in_bytes"))).trim());
    assert.equal(made.bound, bound);
    // Made by the first penguin of the machine: a share of the memory its cgroup may use.
    const total = Number(/MemTotal:\s+(\d+)/.exec(await Deno.readTextFile("/proc/meminfo"))![1]) *
      1024;
    assert.ok(bound <= Math.floor(total / BOUND_DENOMINATOR) * BOUND_NUMERATOR, String(bound));
  },
});

Deno.test({
  name: "a command the kernel kills at the memory bound is told so in its exit note",
  ignore,
  fn: async () => {
    // Its own memory, the largest process of the cgroup: the out-of-memory killer's pick.
    const status = await sandboxed(
      "exec python3 -c 'b = bytearray(200 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1'",
      false,
    );
    assert.equal(status.signal, "SIGKILL", status.out);
    assert.equal(status.memoryBound, LIMIT);
    assert.equal(
      exitVerdict(status).note,
      "[terminated by signal SIGKILL: the kernel stopped it when penguin's commands reached " +
        "their memory bound (96 MiB; files in /tmp and /dev/shm count; put large temporary " +
        "data in the workspace)]",
    );
  },
});

/** How often this process's cgroup reached its limit so far (0 before it is made). */
async function failures(): Promise<number> {
  const made = memoryCgroup();
  if (made === undefined) return 0;
  return Number((await Deno.readTextFile(join(made.dir, "memory.failcnt"))).trim());
}

/** Each holds 160 MiB where no process's share counts it; `done` is printed only if it got all. */
const HOLDERS: Record<string, string> = {
  "tmpfs /tmp pages":
    "dd if=/dev/zero of=/tmp/fill bs=1M count=160 status=none && echo done; echo ended",
  "tmpfs /dev/shm pages":
    "dd if=/dev/zero of=/dev/shm/fill bs=1M count=160 status=none && echo done; echo ended",
  "tmpfs inodes (kernel memory)": "cd /tmp && i=0 && while [ $i -lt 400000 ]; do " +
    ': >"f$i" || break; i=$((i+1)); done; [ $i -eq 400000 ] && echo done; echo ended',
  "System V shared memory": "perl -e 'use IPC::SysV qw(IPC_PRIVATE IPC_CREAT S_IRWXU); " +
    "my $id = shmget(IPC_PRIVATE, 160<<20, IPC_CREAT|S_IRWXU) // die; my $b = q(x) x (1<<20); " +
    "for my $i (0..159) { shmwrite($id, $b, $i<<20, 1<<20) or die } print qq(done\\n)'; echo ended",
  "System V message queues":
    "perl -e 'use IPC::SysV qw(IPC_PRIVATE IPC_CREAT S_IRWXU IPC_NOWAIT); " +
    "my $m = pack(q(l! a*), 1, q(x) x 8000); for my $q (1..20480) { " +
    "my $id = msgget(IPC_PRIVATE, IPC_CREAT|S_IRWXU) // die qq(msgget $!); " +
    "msgsnd($id, $m, IPC_NOWAIT) or die qq(msgsnd $!); msgsnd($id, $m, IPC_NOWAIT) or die } " +
    "print qq(done\\n)'; echo ended",
  "extended attributes in /tmp": "python3 -c 'import os\n" +
    'v = b"x" * 60000\nfor i in range(3000):\n p = f"/tmp/f{i}"\n open(p, "w").close()\n' +
    ' os.setxattr(p, "user.a", v)\nprint("done", flush=True)' +
    "'; echo ended",
  "an unmapped memfd": "python3 -c 'import os\n" +
    'fd = os.memfd_create("x")\nb = b"x" * (1 << 20)\nfor _ in range(160): os.write(fd, b)\n' +
    'print("done", flush=True)\'; echo ended',
};

Deno.test({
  name: "two sandboxes' /tmp together past the memory bound: one of them is stopped",
  ignore,
  fn: async () => {
    const before = await failures();
    await withPolicyWorkspace(async (base) => {
      const policy = { ...base, hideOtherDataRoots: false };
      let first = "";
      const { promise: filled, resolve } = Promise.withResolvers<void>();
      const holder = await spawnSandboxed({
        shell: "dd if=/dev/zero of=/tmp/fill bs=1M count=60 status=none; echo filled; read -r x",
        policy,
        onOutput: (chunk) => {
          first += chunk;
          if (first.includes("filled")) resolve();
        },
      });
      try {
        await Promise.race([filled, holder.status]);
        assert.match(first, /filled/);
        let out = "";
        const second = await spawnSandboxed({
          shell: "dd if=/dev/zero of=/tmp/fill bs=1M count=60 status=none && echo done; echo ended",
          policy,
          onOutput: (chunk) => void (out += chunk),
        });
        await second.status;
        // One of the two is stopped (the kernel picks which): the second did not get its 60 MiB,
        // or the holder was killed, and its /tmp with it.
        // (A holder still alive reads the end of its input and exits 1.)
        await holder.closeStdin();
        const held = await holder.status;
        if (/^done$/m.test(out)) assert.equal(held.signal, "SIGKILL", `both held 60 MiB: ${out}`);
      } finally {
        await holder.kill();
      }
    });
    assert.ok((await failures()) > before, "the limit was reached");
  },
});

for (const [what, shell] of Object.entries(HOLDERS)) {
  for (const reuse of [false, true]) {
    Deno.test({
      name: `${what} past the memory bound: the command is stopped inside its cgroup (${
        reuse ? "kept" : "own"
      } sandbox)`,
      ignore,
      fn: async () => {
        const before = await failures();
        const { out, signal, memoryBound } = await sandboxed(shell, reuse);
        assert.doesNotMatch(out, /^done$/m, out);
        assert.ok((await failures()) > before, `the limit was reached: ${out}`);
        // Killed outright (the kernel may take the shell too): the status says which bound.
        if (signal === "SIGKILL") assert.equal(memoryBound, LIMIT);
        // After the sandbox ended, its memory is given back: another command runs.
        const again = await sandboxed("echo again", reuse);
        assert.match(again.out, /again/);
      },
    });
  }
}
