/**
 * Why a stdio MCP server failed to start, and what fixes it: a program not
 * installed (a missing runtime), a program or file the server's sandbox
 * hides (with the option that shows it), or a package runner (`npx`,
 * `uvx`, …) that wants to download while the server's network is off.
 * `penguin mcp add` and `penguin mcp test` print the hint under the error.
 *
 * The checks look at the host (is the program on PATH?) and then inside the
 * server's own sandbox (is what exists on the host visible there?).
 *
 * @module
 */
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { isInside, type SandboxPolicy, spawnSandboxed } from "../sandbox/mod.ts";
import type { McpStdioServer } from "../state/mod.ts";

/** Programs that download the server's package on first use, with what installs them. */
const RUNNERS: Readonly<Record<string, string>> = {
  npx: "Node.js (npm)",
  pnpx: "pnpm",
  bunx: "Bun",
  uvx: "uv",
  pipx: "pipx",
};

/** Two-word runner forms: `pnpm dlx`, `npm exec`, `uv tool run`, `pipx run`, `yarn dlx`. */
const RUNNER_SUBCOMMANDS: Readonly<Record<string, string>> = {
  pnpm: "dlx",
  npm: "exec",
  yarn: "dlx",
  uv: "tool",
};

/** What installs a program that is not there. */
const RUNTIMES: Readonly<Record<string, string>> = {
  ...RUNNERS,
  node: "Node.js",
  npm: "Node.js (npm)",
  pnpm: "pnpm",
  bun: "Bun",
  uv: "uv",
  python: "Python",
  python3: "Python",
  deno: "Deno",
  docker: "Docker",
  podman: "Podman",
  java: "a Java runtime",
  go: "Go",
};

/** The runner's name when `server` starts through a package runner that downloads. */
export function packageRunner(server: McpStdioServer): string | undefined {
  const name = basename(server.command);
  if (RUNNERS[name]) return name;
  const sub = RUNNER_SUBCOMMANDS[name];
  return sub !== undefined && server.args[0] === sub ? `${name} ${sub}` : undefined;
}

async function executable(path: string): Promise<boolean> {
  try {
    const s = await Deno.stat(path);
    return s.isFile && ((s.mode ?? 0o755) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** Where the host finds `command` (absolute), or undefined when it does not. */
export async function findOnHost(command: string, cwd: string): Promise<string | undefined> {
  if (command.includes("/")) {
    const abs = isAbsolute(command) ? command : resolve(cwd, command);
    return await executable(abs) ? abs : undefined;
  }
  const dirs = (Deno.env.get("PATH") ?? "").split(":").filter((d) => d.startsWith("/"));
  for (const dir of dirs) {
    if (await executable(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

/** Which of `paths` the sandbox of `policy` does not show (each checked with `test -e`). */
export async function hiddenIn(policy: SandboxPolicy, paths: readonly string[]): Promise<string[]> {
  if (paths.length === 0) return [];
  let out = "";
  const child = await spawnSandboxed({
    argv: [
      "/bin/sh",
      "-c",
      'for p do if [ -e "$p" ]; then echo 1; else echo 0; fi; done',
      "probe",
      ...paths,
    ],
    policy,
    cwd: "/",
    stdin: "null",
    onOutput: (chunk) => out += chunk,
  });
  await child.status;
  await child.outputClosed;
  const seen = out.split("\n").filter((l) => l === "0" || l === "1");
  // A probe that did not run says nothing about the paths.
  if (seen.length !== paths.length) return [];
  return paths.filter((_, i) => seen[i] === "0");
}

/** Files the server needs that exist on the host: its program (and its real path) and path arguments. */
async function serverFiles(server: McpStdioServer, program: string): Promise<string[]> {
  const files = [program];
  const real = await Deno.realPath(program).catch(() => program);
  if (real !== program) files.push(real);
  for (const arg of server.args) {
    if (!isAbsolute(arg) || files.includes(arg)) continue;
    try {
      await Deno.lstat(arg);
      files.push(arg);
    } catch {
      // Not a file of the host: an ordinary argument.
    }
  }
  if (server.cwd !== undefined && !files.includes(server.cwd)) files.push(server.cwd);
  return files;
}

/** How to show `path`, hidden from the server's sandbox. */
function revealHint(path: string, home: string | undefined): string {
  if (isInside(path, "/tmp")) {
    return `${path} is in /tmp, which every sandbox replaces with a private one: ` +
      "install the server elsewhere (e.g. /opt or a directory in your home)";
  }
  if (home && isInside(path, home) && path !== home) {
    const dir = dirname(path);
    const shown = dir === home ? path : dir;
    return `${path} is in your home directory, which the sandbox hides: ` +
      `reveal it to this server read-only with --readable ${shown}`;
  }
  return `${path} is hidden from the sandbox (penguin hides its data roots and run directory): ` +
    "install the server elsewhere";
}

/**
 * A one-line why-and-fix for a stdio server that failed to start under
 * `policy` (the server's own, see `serverPolicy`), or undefined when none
 * of the known causes fits. `cwd` resolves a relative command.
 */
export async function diagnoseStdioFailure(
  server: McpStdioServer,
  policy: SandboxPolicy,
  cwd: string,
): Promise<string | undefined> {
  const program = await findOnHost(server.command, cwd);
  if (program === undefined) {
    const runtime = RUNTIMES[basename(server.command)];
    return server.command.includes("/")
      ? `${server.command} does not exist or is not executable: check the path`
      : `${server.command} is not installed (not found on PATH): install ${
        runtime ?? "it"
      } or give the program's full path`;
  }
  if (policy.mode !== "off") {
    const hidden = await hiddenIn(policy, await serverFiles(server, program));
    if (hidden.length > 0) return hidden.map((p) => revealHint(p, policy.home)).join("; ");
  }
  const runner = packageRunner(server);
  if (runner !== undefined && !policy.network) {
    return `${runner} downloads the server's package when it is not installed, and this server's ` +
      "network is off: install the package first and run its own command, or add --network on";
  }
  return undefined;
}
