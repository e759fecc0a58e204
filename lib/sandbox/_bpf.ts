/**
 * Classic BPF, as much as a seccomp filter needs: the instruction encoding
 * (`struct sock_filter`, 8 bytes, little-endian on every architecture
 * penguin filters) and the few opcodes used. Internal to `seccomp.ts`.
 *
 * @module
 */

/** One `struct sock_filter`: u16 code, u8 jt, u8 jf, u32 k. */
export interface BpfInsn {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

/** `BPF_LD | BPF_W | BPF_ABS`: A = u32 at offset k of `struct seccomp_data`. */
export const LD_W_ABS = 0x20;
/** `BPF_JMP | BPF_JEQ | BPF_K`: if A == k skip jt, else skip jf. */
export const JEQ_K = 0x15;
/** `BPF_JMP | BPF_JGE | BPF_K`: if A >= k skip jt, else skip jf. */
export const JGE_K = 0x35;
/** `BPF_ALU | BPF_AND | BPF_K`: A &= k. */
export const ALU_AND_K = 0x54;
/** `BPF_RET | BPF_K`: return k. */
export const RET_K = 0x06;

/** The kernel's limit on a filter's length (BPF_MAXINSNS). */
export const MAX_INSNS = 4096;

/** The program as the kernel reads it: 8 little-endian bytes per instruction. */
export function encode(program: BpfInsn[]): Uint8Array {
  if (program.length === 0 || program.length > MAX_INSNS) {
    throw new RangeError(`a BPF program has 1 to ${MAX_INSNS} instructions, got ${program.length}`);
  }
  const bytes = new Uint8Array(program.length * 8);
  const view = new DataView(bytes.buffer);
  program.forEach((insn, i) => {
    if (insn.jt > 255 || insn.jf > 255 || insn.jt < 0 || insn.jf < 0) {
      throw new RangeError(`BPF instruction ${i}: jump offset out of range`);
    }
    view.setUint16(i * 8, insn.code, true);
    view.setUint8(i * 8 + 2, insn.jt);
    view.setUint8(i * 8 + 3, insn.jf);
    view.setUint32(i * 8 + 4, insn.k >>> 0, true);
  });
  return bytes;
}

/** The inverse of {@linkcode encode}. */
export function decode(bytes: Uint8Array): BpfInsn[] {
  if (bytes.length % 8 !== 0) throw new RangeError("BPF program length is not a multiple of 8");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: BpfInsn[] = [];
  for (let at = 0; at < bytes.length; at += 8) {
    out.push({
      code: view.getUint16(at, true),
      jt: view.getUint8(at + 2),
      jf: view.getUint8(at + 3),
      k: view.getUint32(at + 4, true),
    });
  }
  return out;
}

/** An instruction whose jump targets may name a label (forward jumps only, as BPF requires). */
export interface AsmInsn {
  code: number;
  k: number;
  jt?: number | string;
  jf?: number | string;
  /** A label naming this instruction. */
  label?: string;
}

/** Resolve label jumps into relative offsets. Throws on an unknown or backward label. */
export function assemble(source: AsmInsn[]): BpfInsn[] {
  const at = new Map<string, number>();
  source.forEach((insn, i) => {
    if (insn.label === undefined) return;
    if (at.has(insn.label)) throw new Error(`BPF label "${insn.label}" defined twice`);
    at.set(insn.label, i);
  });
  return source.map((insn, i) => {
    const offset = (target: number | string | undefined): number => {
      if (target === undefined) return 0;
      if (typeof target === "number") return target;
      const to = at.get(target);
      if (to === undefined || to <= i) {
        throw new Error(`BPF instruction ${i}: label "${target}" is not ahead of it`);
      }
      return to - i - 1;
    };
    return { code: insn.code, jt: offset(insn.jt), jf: offset(insn.jf), k: insn.k };
  });
}
