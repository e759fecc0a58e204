/**
 * The seccomp filter every bubblewrap sandbox runs under: a classic BPF
 * program, built here, that bwrap installs (`--seccomp FD`) right before it
 * execs the command, after `PR_SET_NO_NEW_PRIVS`. It is inherited by every
 * process of the sandbox and cannot be removed.
 *
 * What it refuses, and why each one is needed:
 *
 * - `socket(AF_UNIX, …)` → EPERM. A read-only mount does not stop
 *   `connect(2)`, so any listening socket the sandbox can see (docker.sock,
 *   an ssh or gpg agent, a dev server in `/var/tmp` or `$HOME`) was an open
 *   door, with the network off too. Refusing to create the socket closes
 *   every path at once, where the former scan of `/run` found only some.
 *   `socketpair(2)` stays allowed for stream and seqpacket pairs: it makes
 *   an already connected, nameless pair (pipes for Python multiprocessing,
 *   `make -j`, coprocesses), which can neither connect again nor send to
 *   an address. Only the low 32 bits of the first argument are compared, as
 *   the kernel reads `int family`.
 * - `socketpair(AF_UNIX, …)` of any other type (`SOCK_DGRAM`, and
 *   `SOCK_RAW`, which the kernel makes a datagram socket) → EPERM. A
 *   datagram socket may `connect` again and `sendto` any address: a pair's
 *   end sent a datagram, with a descriptor, to a host socket outside every
 *   root with the network off (journald, `/dev/log`, a service's control
 *   socket), and got its reply (attack round 29 l05, l19). The type is
 *   compared without its flags (`SOCK_NONBLOCK`, `SOCK_CLOEXEC`).
 * - `io_uring_setup`, `io_uring_enter`, `io_uring_register` → EPERM.
 *   Measured: io_uring works inside the sandbox here, and its
 *   `IORING_OP_SOCKET` and `IORING_OP_CONNECT` make and connect a Unix
 *   socket without the `socket` system call. EPERM is what programs see
 *   when `kernel.io_uring_disabled` is set, so libraries fall back to epoll.
 * - `add_key`, `request_key`, `keyctl` → EPERM. Measured: the kernel
 *   keyrings are not namespaced; a sandboxed command could describe the
 *   host user's session keyring by id and plant keys in it (`add_key` into
 *   a keyring the same uid owns), a write outside the sandbox.
 * - On x86_64, the x32 ABI (system call numbers with bit 30 set) → the
 *   process is killed: its `socket` has another number, and nothing penguin
 *   runs uses x32.
 * - Any other architecture (i386 through `int 0x80` on x86_64, arm32 on
 *   aarch64) → the process is killed: there `socket` is multiplexed through
 *   `socketcall(2)`, whose arguments live in memory a filter cannot read.
 *   Killing (not an errno) because a 32-bit program that sees every system
 *   call fail, `exit` included, would spin instead of ending.
 *
 * Left allowed on purpose: `ptrace` (the PID namespace shows only the
 * sandbox's own processes, every capability is dropped, and since Linux
 * 4.8 seccomp re-checks a system call a tracer rewrote, so tracing cannot
 * step around this filter; strace and gdb keep working), `bpf` (refused
 * without CAP_SYS_ADMIN / CAP_BPF when `kernel.unprivileged_bpf_disabled`
 * is 1 or 2, the default of current kernels, and no capability is left),
 * `userfaultfd` (with `vm.unprivileged_userfaultfd=0` only user-mode faults,
 * an aid to kernel exploits rather than a way out; blocking it would not
 * stop those).
 *
 * @module
 */
import {
  ALU_AND_K,
  type AsmInsn,
  assemble,
  type BpfInsn,
  encode,
  JEQ_K,
  JGE_K,
  LD_W_ABS,
  RET_K,
} from "./_bpf.ts";

/** `AUDIT_ARCH_X86_64`. */
export const AUDIT_ARCH_X86_64 = 0xC000003E;
/** `AUDIT_ARCH_AARCH64`. */
export const AUDIT_ARCH_AARCH64 = 0xC00000B7;
/** `__X32_SYSCALL_BIT`. */
export const X32_SYSCALL_BIT = 0x40000000;
/** `SECCOMP_RET_KILL_PROCESS`. */
export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
/** `SECCOMP_RET_ERRNO` (the errno goes in the low 16 bits). */
export const SECCOMP_RET_ERRNO = 0x00050000;
/** `SECCOMP_RET_ALLOW`. */
export const SECCOMP_RET_ALLOW = 0x7FFF0000;
/** The errno refused system calls return. */
export const EPERM = 1;
/** `AF_UNIX`. */
export const AF_UNIX = 1;
/**
 * `AF_VSOCK`: sockets to the virtual machine's host and its other guests,
 * which no network namespace separates — with the network off a command
 * could still reach a service the hypervisor offers.
 */
export const AF_VSOCK = 40;

/** Offsets in `struct seccomp_data` (little-endian: the low half of an argument comes first). */
export const SECCOMP_DATA = { nr: 0, arch: 4, arg0Low: 16, arg1Low: 24 } as const;

/** `SOCK_STREAM`, `SOCK_SEQPACKET`: the socket types a Unix socket pair may have. */
export const PAIR_TYPES = [1, 5] as const;
/** `SOCK_TYPE_MASK`: the type without its flags. */
const SOCK_TYPE_MASK = 0xf;

/** Architectures the filter knows. */
export type SeccompArch = "x86_64" | "aarch64";

/** System call numbers the filter names, per architecture. */
export const SYSCALLS: Record<SeccompArch, Record<string, number>> = {
  x86_64: {
    socket: 41,
    socketpair: 53,
    add_key: 248,
    request_key: 249,
    keyctl: 250,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
  },
  aarch64: {
    socket: 198,
    socketpair: 199,
    add_key: 217,
    request_key: 218,
    keyctl: 219,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
  },
};

/** System calls refused outright with EPERM. */
const DENIED = [
  "io_uring_setup",
  "io_uring_enter",
  "io_uring_register",
  "add_key",
  "request_key",
  "keyctl",
];

/** What the filter refuses, one phrase each (for `penguin sandbox check`). */
export const SECCOMP_BLOCKS: readonly string[] = [
  "socket(AF_UNIX) (stream and seqpacket socketpair allowed)",
  "socketpair(AF_UNIX) of datagram type (it can send to any address)",
  "socket(AF_VSOCK) (the VM host's sockets, outside any network namespace)",
  "io_uring",
  "kernel keyrings (add_key, request_key, keyctl)",
  "x32 and foreign-architecture system calls (process killed)",
];

function archBlock(arch: SeccompArch): AsmInsn[] {
  const nr = SYSCALLS[arch];
  const out: AsmInsn[] = [{ label: arch, code: LD_W_ABS, k: SECCOMP_DATA.nr }];
  if (arch === "x86_64") out.push({ code: JGE_K, k: X32_SYSCALL_BIT, jt: "kill" });
  out.push({ code: JEQ_K, k: nr.socket!, jt: "socket" });
  out.push({ code: JEQ_K, k: nr.socketpair!, jt: "socketpair" });
  for (const name of DENIED) out.push({ code: JEQ_K, k: nr[name]!, jt: "deny" });
  out.push({ code: RET_K, k: SECCOMP_RET_ALLOW });
  return out;
}

/** The filter as instructions (see the module doc for what it does). */
export function seccompInstructions(): BpfInsn[] {
  return assemble([
    { code: LD_W_ABS, k: SECCOMP_DATA.arch },
    { code: JEQ_K, k: AUDIT_ARCH_X86_64, jt: "x86_64" },
    { code: JEQ_K, k: AUDIT_ARCH_AARCH64, jt: "aarch64" },
    { code: RET_K, k: SECCOMP_RET_KILL_PROCESS },
    ...archBlock("x86_64"),
    ...archBlock("aarch64"),
    { label: "socket", code: LD_W_ABS, k: SECCOMP_DATA.arg0Low },
    { code: JEQ_K, k: AF_UNIX, jt: "deny" },
    { code: JEQ_K, k: AF_VSOCK, jt: "deny" },
    { code: RET_K, k: SECCOMP_RET_ALLOW },
    { label: "socketpair", code: LD_W_ABS, k: SECCOMP_DATA.arg0Low },
    { code: JEQ_K, k: AF_UNIX, jf: "allow" },
    { code: LD_W_ABS, k: SECCOMP_DATA.arg1Low },
    { code: ALU_AND_K, k: SOCK_TYPE_MASK },
    { code: JEQ_K, k: PAIR_TYPES[0], jt: "allow" },
    { code: JEQ_K, k: PAIR_TYPES[1], jt: "allow" },
    { label: "deny", code: RET_K, k: SECCOMP_RET_ERRNO | EPERM },
    { label: "allow", code: RET_K, k: SECCOMP_RET_ALLOW },
    { label: "kill", code: RET_K, k: SECCOMP_RET_KILL_PROCESS },
  ]);
}

let cached: Uint8Array | undefined;

/** The filter as the bytes bwrap reads from `--seccomp FD` (`struct sock_filter[]`). */
export function seccompProgram(): Uint8Array {
  cached ??= encode(seccompInstructions());
  return cached.slice();
}

/**
 * The filter as `\xHH` escapes, for the supervisor to write with bash's
 * `printf %b` into the pipe bwrap reads: no temporary file to create,
 * protect or clean up.
 */
export function seccompEscapes(): string {
  return Array.from(seccompProgram(), (b) => `\\x${b.toString(16).padStart(2, "0")}`).join("");
}

/** The architecture penguin runs on, as the filter names it, or undefined when it has no rules for it. */
export function seccompArch(): SeccompArch | undefined {
  const a = Deno.build.arch as string;
  return a === "x86_64" || a === "aarch64" ? a : undefined;
}
