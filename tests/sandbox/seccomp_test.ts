// The seccomp filter: decoded and run by a small BPF interpreter on
// synthetic seccomp_data, then checked on real processes in the sandbox.
import assert from "node:assert/strict";
import { decode } from "../../lib/sandbox/_bpf.ts";
import {
  AUDIT_ARCH_AARCH64,
  AUDIT_ARCH_X86_64,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SECCOMP_RET_KILL_PROCESS,
  SYSCALLS,
} from "../../lib/sandbox/seccomp.ts";
import { createPolicy, seccompProgram, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { collect, visibleTempDir } from "./_helpers.ts";
import { join } from "node:path";
import { withWorkspace } from "../support/roots.ts";

const EPERM = SECCOMP_RET_ERRNO | 1;
const AUDIT_ARCH_I386 = 0x40000003;

/** Run a classic BPF seccomp program on `struct seccomp_data` (nr, arch, ip, args). */
function run(program: Uint8Array, nr: number, arch: number, args: bigint[] = []): number {
  const data = new DataView(new ArrayBuffer(64));
  data.setInt32(0, nr, true);
  data.setUint32(4, arch, true);
  args.forEach((a, i) => data.setBigUint64(16 + 8 * i, BigInt.asUintN(64, a), true));
  const insns = decode(program);
  let acc = 0;
  for (let pc = 0, steps = 0; pc < insns.length; pc++, steps++) {
    assert.ok(steps <= insns.length, "the program loops");
    const { code, jt, jf, k } = insns[pc]!;
    switch (code) {
      case 0x20: // ld w abs
        assert.ok(k % 4 === 0 && k + 4 <= 64, `load offset ${k}`);
        acc = data.getUint32(k, true);
        break;
      case 0x15: // jeq k
        pc += acc === k ? jt : jf;
        break;
      case 0x35: // jge k
        pc += acc >= k ? jt : jf;
        break;
      case 0x54: // alu and k
        acc = (acc & k) >>> 0;
        break;
      case 0x06: // ret k
        return k;
      default:
        assert.fail(`unexpected opcode 0x${code.toString(16)} at ${pc}`);
    }
  }
  return assert.fail("the program ran off its end");
}

const prog = seccompProgram();

Deno.test("the filter is a whole number of 8-byte instructions that always returns", () => {
  assert.equal(prog.length % 8, 0);
  assert.ok(prog.length / 8 <= 64, `${prog.length / 8} instructions`);
  // Every jump lands inside the program and the last instruction returns.
  const insns = decode(prog);
  insns.forEach((insn, i) => {
    if (insn.code === 0x15 || insn.code === 0x35) {
      assert.ok(i + 1 + Math.max(insn.jt, insn.jf) < insns.length, `jump at ${i}`);
    }
  });
  assert.equal(insns.at(-1)!.code, 0x06);
});

for (
  const [name, arch] of [["x86_64", AUDIT_ARCH_X86_64], ["aarch64", AUDIT_ARCH_AARCH64]] as const
) {
  const nr = SYSCALLS[name];
  Deno.test(`${name}: socket(AF_UNIX) is refused with EPERM, other families and socketpair pass`, () => {
    assert.equal(run(prog, nr.socket!, arch, [1n, 1n, 0n]), EPERM);
    // The kernel reads `int family`: high bits set do not smuggle AF_UNIX through.
    assert.equal(run(prog, nr.socket!, arch, [0x1_0000_0001n, 1n]), EPERM);
    assert.equal(run(prog, nr.socket!, arch, [0xFFFF_FFFF_0000_0001n]), EPERM);
    assert.equal(run(prog, nr.socket!, arch, [2n, 1n]), SECCOMP_RET_ALLOW); // AF_INET
    assert.equal(run(prog, nr.socket!, arch, [10n, 2n]), SECCOMP_RET_ALLOW); // AF_INET6
    assert.equal(run(prog, nr.socket!, arch, [16n, 3n]), SECCOMP_RET_ALLOW); // AF_NETLINK
    // AF_VSOCK reaches the VM host whatever the network namespace.
    assert.equal(run(prog, nr.socket!, arch, [40n, 1n, 0n]), EPERM);
    const socketpair = name === "x86_64" ? 53 : 199;
    assert.equal(nr.socketpair, socketpair);
    assert.equal(run(prog, socketpair, arch, [1n, 1n, 0n]), SECCOMP_RET_ALLOW);
  });

  Deno.test(`${name}: a Unix socket pair may be stream or seqpacket, never datagram`, () => {
    const pair = (family: bigint, type: bigint) => run(prog, nr.socketpair!, arch, [family, type]);
    const NONBLOCK = 0o4000n, CLOEXEC = 0o2000000n;
    assert.equal(pair(1n, 1n), SECCOMP_RET_ALLOW); // SOCK_STREAM
    assert.equal(pair(1n, 5n), SECCOMP_RET_ALLOW); // SOCK_SEQPACKET
    assert.equal(pair(1n, 1n | NONBLOCK | CLOEXEC), SECCOMP_RET_ALLOW);
    assert.equal(pair(1n, 5n | CLOEXEC), SECCOMP_RET_ALLOW);
    // SOCK_DGRAM, and SOCK_RAW, which the kernel makes a datagram socket for AF_UNIX.
    assert.equal(pair(1n, 2n), EPERM);
    assert.equal(pair(1n, 2n | NONBLOCK | CLOEXEC), EPERM);
    assert.equal(pair(1n, 3n), EPERM);
    assert.equal(pair(1n, 4n), EPERM);
    // `int family`: high bits do not hide AF_UNIX; other families are the kernel's to refuse.
    assert.equal(pair(0x1_0000_0001n, 2n), EPERM);
    assert.equal(pair(2n, 2n), SECCOMP_RET_ALLOW);
  });

  Deno.test(`${name}: io_uring and the keyring calls are refused, ordinary calls pass`, () => {
    for (const call of ["io_uring_setup", "io_uring_enter", "io_uring_register"]) {
      assert.equal(run(prog, nr[call]!, arch), EPERM, call);
    }
    for (const call of ["add_key", "request_key", "keyctl"]) {
      assert.equal(run(prog, nr[call]!, arch), EPERM, call);
    }
    for (let n = 0; n < 460; n++) {
      if (Object.values(nr).includes(n)) continue;
      assert.equal(run(prog, n, arch, [1n]), SECCOMP_RET_ALLOW, `syscall ${n}`);
    }
  });
}

Deno.test("x32 system calls and foreign architectures kill the process", () => {
  assert.equal(run(prog, 0x40000000 | 41, AUDIT_ARCH_X86_64, [1n]), SECCOMP_RET_KILL_PROCESS);
  assert.equal(run(prog, 0x40000000 | 39, AUDIT_ARCH_X86_64), SECCOMP_RET_KILL_PROCESS);
  assert.equal(run(prog, 20, AUDIT_ARCH_I386), SECCOMP_RET_KILL_PROCESS);
  assert.equal(run(prog, 102, AUDIT_ARCH_I386), SECCOMP_RET_KILL_PROCESS); // socketcall
  assert.equal(run(prog, 39, 0x40000028), SECCOMP_RET_KILL_PROCESS); // arm (EABI)
  assert.equal(run(prog, 39, 0), SECCOMP_RET_KILL_PROCESS);
});

// ---- real processes ----------------------------------------------------------------------------

function hasTool(name: string): boolean {
  return new Deno.Command("bash", {
    args: ["-c", 'command -v "$1"', "-", name],
    stdout: "null",
    stderr: "null",
  }).outputSync().success;
}
const hasPython = hasTool("python3");

async function inSandbox(shell: string): Promise<{ out: string; code: number }> {
  return await withWorkspace(async (ws) => {
    const policy = createPolicy({
      workspace: ws,
      home: "",
      hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: ws },
    });
    const r = await collect(await spawnSandboxed({ argv: ["bash", "-c", shell], policy }));
    return { out: r.out, code: r.code };
  });
}

Deno.test("a sandboxed command runs under the filter", async () => {
  const r = await inSandbox("grep -E '^Seccomp(_filters)?:' /proc/self/status");
  assert.match(r.out, /^Seccomp:\s+2$/m);
  assert.match(r.out, /^Seccomp_filters:\s+[1-9]/m);
});

Deno.test({
  name: "perl: socketpair round-trips and socket(AF_UNIX) is refused with EPERM",
  ignore: !hasTool("perl"),
  async fn() {
    const r = await inSandbox(`perl -MSocket -e '
      socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die "socketpair: $!";
      syswrite($a, "x"); sysread($b, my $c, 1); print "pair $c\\n";
      if (socket(my $s, AF_UNIX, SOCK_STREAM, 0)) { print "unix allowed\\n" } else { print "unix ", $!{EPERM} ? "EPERM" : "$!", "\\n" }
      socket(my $t, AF_INET, SOCK_STREAM, 0) or die "inet: $!"; print "inet ok\\n"'`);
    assert.match(r.out, /^pair x$/m);
    assert.match(r.out, /^unix EPERM$/m);
    assert.match(r.out, /^inet ok$/m);
  },
});

Deno.test("a bash coprocess still works in the sandbox", async () => {
  const r = await inSandbox(
    'coproc C { read -r l; echo "echo:$l"; }; echo hi >&"${C[1]}"; read -r x <&"${C[0]}"; echo "$x"',
  );
  assert.match(r.out, /^echo:hi$/m);
});

Deno.test({
  name: "python: AF_UNIX refused (also with high bits set), socketpair and AF_INET work",
  ignore: !hasPython,
  async fn() {
    const r = await inSandbox(`python3 - <<'EOF'
import ctypes, socket
a, b = socket.socketpair(); a.send(b"x"); print("pair", b.recv(1).decode())
try:
    socket.socket(socket.AF_UNIX)
    print("unix allowed")
except PermissionError:
    print("unix EPERM")
libc = ctypes.CDLL(None, use_errno=True)
nr = {"x86_64": 41, "aarch64": 198}[__import__("platform").machine()]
fd = libc.syscall(ctypes.c_long(nr), ctypes.c_long(0x100000001), ctypes.c_long(1), ctypes.c_long(0))
print("raw", fd, ctypes.get_errno())
socket.socket(socket.AF_INET); print("inet ok")
EOF`);
    assert.match(r.out, /^pair x$/m);
    assert.match(r.out, /^unix EPERM$/m);
    assert.match(r.out, /^raw -1 1$/m);
    assert.match(r.out, /^inet ok$/m);
  },
});

Deno.test({
  name:
    "python: a datagram socket pair is refused, so no host socket gets a datagram (round 29 l05)",
  ignore: !hasPython,
  async fn() {
    const dir = await visibleTempDir("penguin-dgram-");
    const path = join(dir, "host.sock");
    // The host's listener: prints every datagram until "end", which the test sends afterwards.
    const listener = new Deno.Command("python3", {
      args: [
        "-c",
        `import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); print("ready", flush=True)
while True:
    d = s.recv(100)
    print(d.decode(), flush=True)
    if d == b"end": break`,
        path,
      ],
      stdout: "piped",
    }).spawn();
    try {
      const reader = listener.stdout.pipeThrough(new TextDecoderStream()).getReader();
      // Chunks as the pipe gives them: "ready" may come without its newline first.
      let said = "";
      while (!said.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        said += value;
      }
      assert.equal(said, "ready\n");
      const r = await inSandbox(`python3 - <<'EOF'
import socket
for t in ("SOCK_DGRAM", "SOCK_RAW"):
    try:
        a, b = socket.socketpair(socket.AF_UNIX, getattr(socket, t))
        a.sendto(b"leak " + t.encode(), ${JSON.stringify(path)})
        print(t, "sent")
    except PermissionError:
        print(t, "EPERM")
    except OSError as e:
        print(t, "error", e.errno)
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET); a.send(b"y"); print("seqpacket", b.recv(1).decode())
EOF`);
      assert.match(r.out, /^SOCK_DGRAM EPERM$/m);
      assert.match(r.out, /^SOCK_RAW EPERM$/m);
      assert.match(r.out, /^seqpacket y$/m);
      const end = new Deno.Command("python3", {
        args: [
          "-c",
          `import socket, sys
socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"end", sys.argv[1])`,
          path,
        ],
      });
      assert.ok((await end.output()).success);
      let got = "";
      while (!got.includes("end\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        got += value;
      }
      assert.equal(got, "end\n");
    } finally {
      try {
        listener.kill("SIGKILL");
      } catch {
        // Ended already.
      }
      await listener.status;
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "python: io_uring_setup and keyctl are refused with EPERM",
  ignore: !hasPython,
  async fn() {
    const r = await inSandbox(`python3 - <<'EOF'
import ctypes, platform
libc = ctypes.CDLL(None, use_errno=True)
keyctl = {"x86_64": 250, "aarch64": 219}[platform.machine()]
params = ctypes.create_string_buffer(120)
print("uring", libc.syscall(ctypes.c_long(425), ctypes.c_long(4), params), ctypes.get_errno())
print("keyctl", libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(0), ctypes.c_long(-3), ctypes.c_long(0)), ctypes.get_errno())
EOF`);
    assert.match(r.out, /^uring -1 1$/m);
    assert.match(r.out, /^keyctl -1 1$/m);
  },
});

Deno.test({
  name: "python on x86_64: an x32 system call kills the process with SIGSYS",
  ignore: !hasPython || Deno.build.arch !== "x86_64",
  async fn() {
    const r = await inSandbox(
      `python3 -c 'import ctypes; ctypes.CDLL(None).syscall(ctypes.c_long(0x40000000 | 39)); print("survived")'; echo "rc=$?"`,
    );
    assert.doesNotMatch(r.out, /^survived$/m);
    assert.match(r.out, /^rc=159$/m); // 128 + SIGSYS
  },
});
