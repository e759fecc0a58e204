// `deno task compile` / `deno task compile:dry`: builds the penguin binary
// with the production permission set "penguin" from deno.json (the one place
// those flags live) for one or more targets.
//
//   deno task compile                         host target -> dist/penguin
//   deno task compile --target all            linux x64/arm64, macOS x64/arm64
//   deno task compile --target aarch64-apple-darwin
//   deno task compile:dry                     graph + embedded files check, no runtime needed
import { parseArgs } from "node:util";

const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
];

/** Flags baked into every binary besides the "penguin" permission set. */
export const BAKED_FLAGS = ["-P=penguin", "--no-prompt"];

const { values } = parseArgs({
  args: Deno.args,
  options: {
    target: { type: "string", multiple: true },
    output: { type: "string", short: "o" },
    dry: { type: "boolean" },
  },
});

const root = new URL("../", import.meta.url).pathname;
const requested = values.target ?? [];
const targets = requested.includes("all") ? TARGETS : requested;
for (const t of targets) {
  if (!TARGETS.includes(t)) {
    console.error(`compile: unknown target "${t}"; expected one of ${TARGETS.join(", ")} or "all"`);
    Deno.exit(2);
  }
}

async function compile(target: string | undefined): Promise<boolean> {
  const outDir = values.dry ? await Deno.makeTempDir({ prefix: "penguin-dry-" }) : `${root}dist`;
  const name = target ? `penguin-${target}` : "penguin";
  const out = values.output && targets.length <= 1 ? values.output : `${outDir}/${name}`;
  const args = ["compile", ...BAKED_FLAGS, "--config", `${root}deno.json`, "-o", out];
  if (target) args.push("--target", target);
  args.push(`${root}main.ts`);
  const env: Record<string, string> = {};
  if (values.dry) env.DENORT_BIN = "/bin/true";
  const res = await new Deno.Command(Deno.execPath(), {
    args,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(res.stdout) + new TextDecoder().decode(res.stderr);
  if (res.code === 0) {
    if (values.dry) {
      if (/node_modules\/(?!\.deno)/.test(text) && !text.includes(".deno_compile_node_modules")) {
        console.error(
          "compile:dry: a local node_modules was embedded; remove any package.json above the repo",
        );
        return false;
      }
      console.log(
        `compile:dry ok${
          target ? ` (${target})` : ""
        }: module graph and embedded files are complete`,
      );
      await Deno.remove(outDir, { recursive: true });
    } else {
      console.log(`compile: wrote ${out}`);
    }
    return true;
  }
  if (
    !values.dry && !Deno.env.get("DENORT_BIN") &&
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

let ok = true;
for (const t of targets.length > 0 ? targets : [undefined]) ok = (await compile(t)) && ok;
Deno.exit(ok ? 0 : 1);
