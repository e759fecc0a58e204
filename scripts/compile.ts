// `deno task compile` / `deno task compile:dry`: builds the penguin binary
// with the production permission set "penguin" from deno.json (the one place
// those flags live) for one or more targets.
//
//   deno task compile                         host target -> dist/penguin
//   deno task compile --target all            linux x64/arm64, macOS x64/arm64
//   deno task compile --target aarch64-apple-darwin
//   deno task compile:dry                     graph + embedded files check, no runtime needed
//   deno task compile:dry -o /tmp/p           same, keeping the (unrunnable) output for inspection
import { parseArgs } from "node:util";

/** The targets `--target` accepts (`all` = every one). */
export const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
];

/** Flags baked into every binary: the "penguin" permission set and no prompts. */
export const BAKED_FLAGS = ["-P=penguin", "--no-prompt"];

/**
 * Modules no static import reaches, embedded with `--include`: the confined
 * file tools' Worker entry (loaded by URL in lib/tools/worker/confined.ts).
 * `--unstable-worker-options`, which that Worker needs, comes from deno.json
 * `"unstable"` and is baked in too.
 */
export const INCLUDES = ["lib/tools/worker/file_worker.ts"];

/**
 * V8 settings baked into every binary: a young generation of at most 4 MB
 * per semi-space (V8's default grows it to 16 MB, which a long agent task
 * fills with short-lived request and stream garbage: about 45 MB more peak
 * RSS after 200 turns for no measurable saving of CPU time;
 * `bench/command_turns.ts` (d)); type feedback collected from a function's
 * first call (`--no-lazy-feedback-allocation`); and no Maglev, V8's
 * mid-tier compiler (`--no-maglev`). A turn's code is warm, not hot: Maglev
 * compiled it bit by bit over a task's first hundred turns, so turn 190 ran
 * some 5-7% faster than turn 10; without it a turn costs the same from the
 * first turns on (`bench/command_turns.ts` (c), turn 10 and turn 190 of two
 * sessions measured in the same seconds: -2.7 and -3.5% against -4.9 and
 * -6.9%), the median turn is as fast (b), and code that is hot (trace stats
 * over 200 MB: 810 against 828 ms; resuming a 100 MB session) still gets
 * TurboFan.
 */
export const RUNTIME_FLAGS = [
  "--v8-flags=--max-semi-space-size=4,--no-lazy-feedback-allocation,--no-maglev",
];

/** Further compile flags: embed only the npm packages the module graph reaches (not test-only ones). */
export const COMPILE_FLAGS = ["--exclude-unused-npm"];

/** Repository root (with a trailing slash). */
export const ROOT = new URL("../", import.meta.url).pathname;

/** The `deno` argv that compiles main.ts to `out` (for `target`, default the host). */
export function compileArgs(out: string, target?: string): string[] {
  const args = [
    "compile",
    ...BAKED_FLAGS,
    ...RUNTIME_FLAGS,
    ...COMPILE_FLAGS,
    "--config",
    `${ROOT}deno.json`,
  ];
  for (const inc of INCLUDES) args.push("--include", `${ROOT}${inc}`);
  args.push("-o", out);
  if (target) args.push("--target", target);
  args.push(`${ROOT}main.ts`);
  return args;
}

/** The INCLUDES whose exact source text is not in the binary at `path`. */
export async function notEmbedded(path: string): Promise<string[]> {
  const bin = await Deno.readFile(path);
  const missing: string[] = [];
  for (const inc of INCLUDES) {
    const src = await Deno.readFile(`${ROOT}${inc}`);
    if (indexOf(bin, src) < 0) missing.push(inc);
  }
  return missing;
}

function indexOf(hay: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = hay.indexOf(needle[0]!); i >= 0; i = hay.indexOf(needle[0]!, i + 1)) {
    if (i + needle.length > hay.length) return -1;
    for (let j = 1; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

interface Options {
  targets: string[];
  output?: string;
  dry: boolean;
}

async function compile(target: string | undefined, o: Options): Promise<boolean> {
  const outDir = o.dry ? await Deno.makeTempDir({ prefix: "penguin-dry-" }) : `${ROOT}dist`;
  const name = target ? `penguin-${target}` : "penguin";
  const out = o.output && o.targets.length <= 1 ? o.output : `${outDir}/${name}`;
  const env: Record<string, string> = {};
  if (o.dry) env.DENORT_BIN = "/bin/true";
  const res = await new Deno.Command(Deno.execPath(), {
    args: compileArgs(out, target),
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(res.stdout) + new TextDecoder().decode(res.stderr);
  if (res.code === 0) {
    if (o.dry) {
      try {
        if (/node_modules\/(?!\.deno)/.test(text) && !text.includes(".deno_compile_node_modules")) {
          console.error(
            "compile:dry: a local node_modules was embedded; remove any package.json above the repo",
          );
          return false;
        }
        const missing = await notEmbedded(out);
        if (missing.length > 0) {
          console.error(`compile:dry: not embedded in the binary: ${missing.join(", ")}`);
          return false;
        }
      } finally {
        await Deno.remove(outDir, { recursive: true });
      }
      console.log(
        `compile:dry ok${
          target ? ` (${target})` : ""
        }: module graph and embedded files are complete`,
      );
    } else {
      console.log(`compile: wrote ${out}`);
    }
    return true;
  }
  if (
    !o.dry && !Deno.env.get("DENORT_BIN") &&
    /Download|dns|error sending request|connect/i.test(text)
  ) {
    console.error(
      `compile: deno compile needs Deno's "denort" runtime for ${target ?? "this machine"} ` +
        `(version ${Deno.version.deno}), which it downloads from Deno's release server, and that ` +
        `download failed (this machine has no route to it). Build on a machine with internet access, ` +
        `or set DENORT_BIN to a denort ${Deno.version.deno} binary for the target. ` +
        `"deno task compile:dry" checks the build without it.`,
    );
  } else {
    console.error(text.trim());
  }
  return false;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      target: { type: "string", multiple: true },
      output: { type: "string", short: "o" },
      dry: { type: "boolean" },
    },
  });
  const requested = values.target ?? [];
  const targets = requested.includes("all") ? TARGETS : requested;
  for (const t of targets) {
    if (!TARGETS.includes(t)) {
      console.error(
        `compile: unknown target "${t}"; expected one of ${TARGETS.join(", ")} or "all"`,
      );
      return 2;
    }
  }
  const o: Options = {
    targets,
    ...(values.output !== undefined ? { output: values.output } : {}),
    dry: values.dry === true,
  };
  let ok = true;
  for (const t of targets.length > 0 ? targets : [undefined]) ok = (await compile(t, o)) && ok;
  return ok ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main());
