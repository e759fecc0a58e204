/**
 * What `/proc` says about penguin's own process.
 * Deno's permission set (anything short of `--allow-all`) refuses penguin
 * every `/proc/<pid>/…` and `/proc/self/…` read, so a short bash, which
 * penguin may run, reads them: for penguin's own process, its parent's
 * entries (the bash is penguin's child).
 *
 * @module
 */
import { findBash } from "./_executables.ts";

/** Penguin's own process, as `/proc` shows it. */
export interface ProcFacts {
  /** Signal numbers penguin ignores (`SigIgn` of `/proc/<pid>/status`). */
  ignored?: Set<number>;
}

const SELF = `p=$PPID
while read -r k v; do [ "$k" = SigIgn: ] && echo "sigign $v"; done 2>/dev/null <"/proc/$p/status"
true`;

async function bash(script: string, args: string[] = []): Promise<string | undefined> {
  if (Deno.build.os !== "linux") return undefined;
  const path = await findBash();
  if (path === undefined) return undefined;
  try {
    const out = await new Deno.Command(path, {
      args: ["--noprofile", "--norc", "-c", script, "penguin-proc", ...args],
      clearEnv: true,
      env: { PATH: "/usr/bin:/bin" },
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    return out.success ? new TextDecoder().decode(out.stdout) : undefined;
  } catch {
    return undefined;
  }
}

/** The signal numbers of a `SigIgn` hex mask. */
export function signalsOfMask(hex: string): Set<number> | undefined {
  if (!/^[0-9a-fA-F]{1,16}$/.test(hex)) return undefined;
  const mask = BigInt(`0x${hex}`);
  const out = new Set<number>();
  for (let n = 1; n <= 64; n++) if ((mask >> BigInt(n - 1)) & 1n) out.add(n);
  return out;
}

let self: Promise<ProcFacts> | undefined;

/** Penguin's own process (read once; empty where there is no `/proc` or no bash). */
export function procFacts(): Promise<ProcFacts> {
  self ??= bash(SELF).then((text) => {
    const facts: ProcFacts = {};
    for (const line of (text ?? "").split("\n")) {
      const [key, value] = [line.slice(0, line.indexOf(" ")), line.slice(line.indexOf(" ") + 1)];
      if (key === "sigign") {
        const set = signalsOfMask(value);
        if (set) facts.ignored = set;
      }
    }
    return facts;
  });
  return self;
}
