/**
 * How penguin starts another copy of itself: the compiled binary re-executes
 * `Deno.execPath()`; under `deno run` (development, tests) the same entry
 * module runs with the same permission set from the same `deno.json`, so the
 * copy runs under exactly the flags the binary is compiled with.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The hidden subcommand that serves the file tools inside the sandbox. */
export const TOOL_HOST_COMMAND = "__tool-host";

/** The argv that runs `penguin <args…>` as a new process. */
export function selfArgv(args: string[]): string[] {
  if (Deno.build.standalone) return [Deno.execPath(), ...args];
  const main = fileURLToPath(new URL("../../../main.ts", import.meta.url));
  const config = fileURLToPath(new URL("../../../deno.json", import.meta.url));
  return [
    Deno.execPath(),
    "run",
    "--quiet",
    "-P=penguin",
    "--no-prompt",
    // As the `penguin` task: a dynamically imported module is read when the import runs.
    "--unstable-lazy-dynamic-imports",
    "--v8-flags=--max-semi-space-size=4,--no-lazy-feedback-allocation,--no-maglev",
    "--config",
    config,
    main,
    ...args,
  ];
}

/**
 * Host variables the copy needs besides the sandbox's allowlist: where Deno
 * keeps its module cache when not standalone. Values are read from `env`.
 */
export const SELF_ENV_NAMES: readonly string[] = ["DENO_DIR", "XDG_CACHE_HOME"];

/**
 * What a copy needs to read besides the usual system files: the executable
 * and, under `deno run`, the source tree and Deno's module cache (`DENO_DIR`,
 * else `$XDG_CACHE_HOME/deno` or `~/.cache/deno`; `~/Library/Caches/deno` on
 * macOS). These may lie where the sandbox hides things (a private `/tmp`, a
 * hidden home directory), so the sandbox binds them read-only at their own paths.
 */
export function selfReveal(env: Record<string, string>): string[] {
  const out = [Deno.execPath()];
  if (Deno.build.standalone) return out;
  out.push(dirname(fileURLToPath(new URL("../../../main.ts", import.meta.url))));
  const home = env["HOME"];
  const cache = env["DENO_DIR"] ??
    (env["XDG_CACHE_HOME"] ? join(env["XDG_CACHE_HOME"], "deno") : undefined) ??
    (home
      ? join(home, Deno.build.os === "darwin" ? "Library/Caches/deno" : ".cache/deno")
      : undefined);
  if (cache) out.push(cache);
  return out;
}
