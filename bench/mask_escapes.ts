// Secret masking of escape-heavy text: `deno run -A bench/mask_escapes.ts [old-checkout] [runs]`.
//
// Two inputs, generated deterministically (a fixed-seed generator):
// - `json`: about 1.66 MB of `json.dumps`-style text (ASCII-only output: CJK, Cyrillic and
//   Latin-1 as `\uXXXX`, Windows paths with doubled backslashes, ANSI colours as `\u001b[…m`,
//   `\n` and `\"`);
// - `numeric`: about 0.6 MB of random `\NNN`, `\xHHH`, `\dNNN` and `\uHHHH` escapes among words.
// Ten random secrets of 12 to 48 characters (none of them in the text). Each input is masked
// whole (`maskSecrets`) and streamed (`createSecretMasker`, 4 KiB pieces), each in a child
// process of its own, so its peak RSS (VmHWM) is its own; the time is the median of `runs`
// (default 3) in that process, after one warm-up, in CPU ms (user and system: the machine may be
// loaded). With `old-checkout` (a directory holding
// `lib/`, e.g. `git archive 734b18d lib | tar -x -C /tmp/old`), the same runs are made against
// its masker too, and both are printed side by side.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { peakRss } from "./_peak_rss.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));

/** A fixed-seed generator (mulberry32): the same inputs on every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const hex4 = (c: number) => c.toString(16).padStart(4, "0");

/** About `size` characters of what Python's `json.dumps` writes (ensure_ascii) of mixed records. */
export function jsonDumps(size: number, rand: () => number): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const range = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo));
  const escaped = (lo: number, hi: number, n: number) => {
    let s = "";
    for (let i = 0; i < n; i++) s += `\\u${hex4(range(lo, hi))}`;
    return s;
  };
  const words = ["build", "error", "warning", "user", "path", "ok", "value", "module", "test"];
  const field = (): string => {
    switch (range(0, 7)) {
      case 0:
        return escaped(0x4e00, 0x9fa5, range(2, 12)); // CJK
      case 1:
        return escaped(0x0410, 0x044f, range(3, 14)); // Cyrillic
      case 2:
        return `caf\\u00e9 na\\u00efve r\\u00e9sum\\u00e9 ${pick(words)} \\u00fc\\u00f6\\u00e4`;
      case 3:
        return `C:\\\\Users\\\\${pick(words)}\\\\AppData\\\\Local\\\\Temp\\\\${pick(words)}.log`;
      case 4:
        return `\\u001b[3${range(0, 8)}m${pick(words)}\\u001b[0m: ${pick(words)} ${range(0, 999)}`;
      case 5:
        return `line ${range(1, 500)}\\n\\t${pick(words)} \\"${pick(words)}\\"`;
      default:
        return `${pick(words)} ${pick(words)} ${range(0, 100000)}`;
    }
  };
  const parts: string[] = [];
  let length = 0;
  while (length < size) {
    const rec = `{"id": ${range(0, 1e6)}, "name": "${field()}", "msg": "${field()}", ` +
      `"detail": "${field()} ${field()}"}\n`;
    parts.push(rec);
    length += rec.length;
  }
  return parts.join("").slice(0, size);
}

/** About `size` characters of random numeric escapes (`\NNN`, `\xHHH`, `\dNNN`, `\uHHHH`). */
export function numericDump(size: number, rand: () => number): string {
  const hex = "0123456789abcdef";
  const digits = (base: number, n: number) => {
    let s = "";
    for (let i = 0; i < n; i++) s += hex[Math.floor(rand() * base)];
    return s;
  };
  const parts: string[] = [];
  let length = 0;
  while (length < size) {
    let piece: string;
    const r = rand();
    if (r < 0.25) piece = `\\${digits(8, 3)}`;
    else if (r < 0.5) piece = `\\x${digits(16, 3)}`;
    else if (r < 0.7) piece = `\\d${digits(10, 3)}`;
    else if (r < 0.9) piece = `\\u${digits(16, 4)}`;
    else piece = rand() < 0.5 ? " " : rand() < 0.5 ? "\n" : "word";
    parts.push(piece);
    length += piece.length;
  }
  return parts.join("").slice(0, size);
}

/** Ten random secrets of 12 to 48 characters, as a vault's. */
export function benchSecrets(
  rand: () => number,
): { kind: "vault"; name: string; value: string }[] {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=";
  return Array.from({ length: 10 }, (_, i) => {
    const n = 12 + Math.floor(rand() * 37);
    let value = "";
    for (let k = 0; k < n; k++) value += alphabet[Math.floor(rand() * alphabet.length)];
    return { kind: "vault" as const, name: `K${i}`, value };
  });
}

export const INPUTS: Record<"json" | "numeric", () => string> = {
  json: () => jsonDumps(1_660_000, rng(1)),
  numeric: () => numericDump(600_000, rng(2)),
};

type Mode = "whole" | "stream";

/** In a child: time `mode` masking of `input` with the masker under `root`; prints ms. */
async function child(root: string, input: keyof typeof INPUTS, mode: Mode, runs: number) {
  const mod = await import(join(root, "lib/tools/secret_mask.ts"));
  const text = INPUTS[input]();
  const secrets = benchSecrets(rng(3));
  const once = () => {
    if (mode === "whole") return mod.maskSecrets(text, secrets) as string;
    const m = mod.createSecretMasker(secrets);
    const out: string[] = [];
    for (let i = 0; i < text.length; i += 4096) out.push(m.push(text.slice(i, i + 4096)));
    out.push(m.flush());
    return out.join("");
  };
  const first = once();
  if (first !== text) throw new Error(`${input} ${mode}: the text changed (no secret is in it)`);
  // CPU time (user and system) of this process: on a loaded machine, wall time mostly measures
  // the others.
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = process.cpuUsage();
    once();
    const t = process.cpuUsage(t0);
    times.push((t.user + t.system) / 1000);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ ms: times[Math.floor(times.length / 2)], bytes: text.length }));
}

async function measure(root: string, input: string, mode: Mode, runs: number) {
  const cmd = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", import.meta.filename!, "--child", root, input, mode, String(runs)],
    stdout: "piped",
    stderr: "inherit",
  });
  const proc = cmd.spawn();
  const [out, rss] = await Promise.all([proc.output(), peakRss(proc)]);
  if (rss.code !== 0) throw new Error(`${root} ${input} ${mode}: exit ${rss.code}`);
  const got = JSON.parse(new TextDecoder().decode(out.stdout));
  return { ms: got.ms as number, bytes: got.bytes as number, peakMb: rss.peakKb / 1024 };
}

if (import.meta.main) {
  if (Deno.args[0] === "--child") {
    const [, root, input, mode, runs] = Deno.args;
    await child(root!, input as keyof typeof INPUTS, mode as Mode, Number(runs));
  } else {
    const old = Deno.args[0];
    const runs = Number(Deno.args[1] ?? 3);
    console.log("| input | mode | size | new ms | new peak MB | old ms | old peak MB | new/old |");
    console.log("| ----- | ---- | ---- | ------ | ----------- | ------ | ----------- | ------- |");
    for (const input of Object.keys(INPUTS)) {
      for (const mode of ["whole", "stream"] as const) {
        const a = await measure(REPO, input, mode, runs);
        const b = old ? await measure(old, input, mode, runs) : null;
        const size = `${(a.bytes / 1e6).toFixed(2)} MB`;
        const oldCols = b ? `${b.ms.toFixed(0)} | ${b.peakMb.toFixed(0)}` : "- | -";
        const ratio = b ? (a.ms / b.ms).toFixed(2) : "-";
        console.log(
          `| ${input} | ${mode} | ${size} | ${a.ms.toFixed(0)} | ${
            a.peakMb.toFixed(0)
          } | ${oldCols} | ${ratio} |`,
        );
      }
    }
  }
}
