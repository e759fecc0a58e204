// `deno task install` / `deno task uninstall`: puts a `penguin` command into
// `$DENO_INSTALL_ROOT/bin` (default `~/.deno/bin`) that runs this checkout's
// main.ts, or removes it again.
//
//   deno task install                   write the launcher, cache the dependencies
//   deno task install --force           replace a `penguin` the installer did not write
//   deno task install --deno <path>     the Deno the launcher runs (default: this one)
//   deno task uninstall                 remove the launcher (only one this installer wrote)
//
// The launcher is a small POSIX sh script. It runs `deno run` with the flags of
// the `penguin` task in deno.json (which names the permission set
// `permissions.penguin` and the V8 flags: the one place they live), read from
// deno.json here at install time, and with this checkout's deno.json and
// main.ts by absolute path. So it works from any directory, the current
// directory stays penguin's default workspace, and nothing but penguin's own
// output is printed (no `Task …` line of `deno task`). Re-run the install
// after a change to that task line.
import { parseArgs } from "node:util";
import { join } from "node:path";

/** Repository root (with a trailing slash). */
export const ROOT = new URL("../", import.meta.url).pathname;

/** The first line after the shebang of every launcher this script writes; uninstall looks for it. */
export const MARKER = "# penguin launcher written by `deno task install`";

/**
 * The `deno run` flags of the `penguin` task in deno.json's text (the words
 * between `deno` and `main.ts`); throws when the task has another shape.
 */
export function taskFlags(denoJson: string): string[] {
  const config = JSON.parse(denoJson) as { tasks?: Record<string, unknown> };
  const line = config.tasks?.penguin;
  if (typeof line !== "string") throw new Error(`deno.json has no "penguin" task`);
  const words = line.trim().split(/\s+/);
  if (words[0] !== "deno" || words[1] !== "run" || words.at(-1) !== "main.ts") {
    throw new Error(`deno.json task "penguin" is not "deno run <flags> main.ts": ${line}`);
  }
  return words.slice(1, -1);
}

/** `s` as one single-quoted sh word. */
export function shQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** The launcher script: `deno` runs `<root>main.ts` with `flags` and `<root>deno.json`. */
export function launcher(deno: string, root: string, flags: string[]): string {
  const main = join(root, "main.ts");
  const config = join(root, "deno.json");
  return [
    "#!/bin/sh",
    MARKER,
    `# from ${root.replaceAll("\n", " ")}; \`deno task uninstall\` there removes it.`,
    `deno=${shQuote(deno)}`,
    `main=${shQuote(main)}`,
    `if [ ! -x "$deno" ]; then`,
    `  found=$(command -v deno 2>/dev/null) || found=`,
    `  if [ -z "$found" ]; then`,
    `    echo "penguin: Deno is missing: $deno is gone and no deno is on PATH; install Deno 2.9 (https://deno.com), then run 'deno task install' in the penguin checkout again" >&2`,
    `    exit 127`,
    `  fi`,
    `  deno=$found`,
    `fi`,
    `if [ ! -f "$main" ]; then`,
    `  echo "penguin: the penguin checkout is gone: $main does not exist; install penguin again" >&2`,
    `  exit 127`,
    `fi`,
    `exec "$deno" ${flags.map(shQuote).join(" ")} --config ${shQuote(config)} "$main" "$@"`,
    "",
  ].join("\n");
}

/** Where the launcher goes: `$DENO_INSTALL_ROOT/bin/penguin`, else `$HOME/.deno/bin/penguin`. */
export function binDir(env: (name: string) => string | undefined): string {
  const root = env("DENO_INSTALL_ROOT");
  if (root) return join(root, "bin");
  const home = env("HOME");
  if (!home) throw new InstallError("neither DENO_INSTALL_ROOT nor HOME is set");
  return join(home, ".deno", "bin");
}

/** A failure the installer reports as one line. */
export class InstallError extends Error {}

function reason(e: unknown): string {
  if (e instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (e instanceof Deno.errors.NotADirectory) return "a path component is not a directory";
  if (e instanceof Deno.errors.AlreadyExists) return "a path component is not a directory";
  return e instanceof Error ? e.message : String(e);
}

async function isOurs(path: string): Promise<boolean | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    return false;
  }
  return text.split("\n", 2)[1] === MARKER;
}

/** Write the launcher into `dir` (created if missing); returns its path. */
export async function install(
  dir: string,
  opts: { deno: string; force: boolean },
): Promise<string> {
  const flags = taskFlags(await Deno.readTextFile(join(ROOT, "deno.json")));
  try {
    await Deno.mkdir(dir, { recursive: true });
  } catch (e) {
    throw new InstallError(`cannot create the install directory ${dir}: ${reason(e)}`);
  }
  const target = join(dir, "penguin");
  if (!opts.force && await isOurs(target) === false) {
    throw new InstallError(
      `${target} exists and was not written by penguin's installer; remove it or pass --force`,
    );
  }
  const tmp = join(dir, `.penguin.${crypto.randomUUID()}.tmp`);
  try {
    await Deno.writeTextFile(tmp, launcher(opts.deno, ROOT, flags), { mode: 0o755 });
    await Deno.chmod(tmp, 0o755);
    await Deno.rename(tmp, target);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw new InstallError(`cannot write ${target}: ${reason(e)}`);
  }
  return target;
}

/** Fetch every module main.ts and the file tools' Worker reach, so the first run needs no network. */
async function cacheDependencies(deno: string): Promise<void> {
  const res = await new Deno.Command(deno, {
    args: [
      "cache",
      "--quiet",
      "--config",
      join(ROOT, "deno.json"),
      join(ROOT, "main.ts"),
      join(ROOT, "lib/tools/worker/file_worker.ts"),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output().catch((e) => {
    throw new InstallError(`cannot run ${deno}: ${reason(e)}`);
  });
  if (res.code !== 0) {
    const msg = new TextDecoder().decode(res.stderr).trim().split("\n")[0] ?? "";
    throw new InstallError(`cannot fetch penguin's dependencies (deno cache failed): ${msg}`);
  }
}

/** Whether `dir` is one of the entries of `PATH`. */
function onPath(dir: string): boolean {
  return (Deno.env.get("PATH") ?? "").split(":").some((p) => p.replace(/\/+$/, "") === dir);
}

async function main(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      uninstall: { type: "boolean" },
      force: { type: "boolean" },
      deno: { type: "string" },
    },
  });
  const name = values.uninstall ? "uninstall" : "install";
  try {
    const dir = binDir((n) => Deno.env.get(n));
    if (values.uninstall) {
      const target = join(dir, "penguin");
      const ours = await isOurs(target);
      if (ours === undefined) {
        console.log(`penguin is not installed in ${dir}; nothing to remove`);
        return 0;
      }
      if (!ours) {
        throw new InstallError(`${target} was not written by penguin's installer; left in place`);
      }
      await Deno.remove(target).catch((e) => {
        throw new InstallError(`cannot remove ${target}: ${reason(e)}`);
      });
      console.log(`Removed ${target}`);
      return 0;
    }
    const deno = values.deno ?? Deno.execPath();
    await cacheDependencies(deno);
    const target = await install(dir, { deno, force: values.force === true });
    console.log(`Installed ${target}`);
    if (!onPath(dir)) {
      console.log(
        `${dir} is not on your PATH; add it (e.g. in ~/.bashrc or ~/.zshrc): export PATH="${dir}:$PATH"`,
      );
    }
    return 0;
  } catch (e) {
    console.error(`${name}: ${e instanceof InstallError ? e.message : reason(e)}`);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
