/**
 * `penguin sandbox check` and `penguin sandbox run`.
 *
 * @module
 */
import { resolve } from "node:path";
import { PenguinError } from "../../protocol/errors.ts";
import { resolveDataRoot } from "../../state/root.ts";
import {
  createPolicy,
  detectSandbox,
  isInside,
  type SandboxReport,
  spawnSandboxed,
  withCgroupChecks,
} from "../../sandbox/mod.ts";
import { bool, type Flag, flagHelp, flagValue, parseDeclared } from "../args.ts";
import { JSON_OUTPUT } from "./_common_flags.ts";
import type { Command, CommandContext } from "../command.ts";
import { effectivePolicy, POLICY_FILE_HELP } from "./_workspace_policy.ts";
import {
  ALLOW_HOME_WORKSPACE,
  GIT_WRITABLE,
  GRANT_WRITABLE_ROOTS,
  NETWORK,
  requireWorkspace,
  SANDBOX,
  WORKSPACE,
} from "./_session_flags.ts";

const ENV_HELP = `Environment:
  PENGUIN_BWRAP   use this bubblewrap binary instead of searching /usr/bin,
                  /usr/local/bin, /bin and PATH
`;

function bwrapOverride(): { bwrapPath?: string } {
  const v = Deno.env.get("PENGUIN_BWRAP");
  return v ? { bwrapPath: v } : {};
}

function renderReport(r: SandboxReport): string {
  const width = Math.max(...r.checks.map((c) => c.name.length));
  const lines = r.checks.map((c) => {
    const tag = c.status === "fail" ? "FAIL" : c.status;
    const fix = c.fix && c.status !== "ok"
      ? `\n  ${"".padEnd(4)}  ${"".padEnd(width)}  fix: ${c.fix}`
      : "";
    return `  ${tag.padEnd(4)}  ${c.name.padEnd(width)}  ${c.detail}${fix}`;
  });
  const mode = r.usable
    ? `Sandbox: ${
      r.kind === "seatbelt" ? "Seatbelt (sandbox-exec)" : "bubblewrap"
    }; commands for the model run confined (workspace-write, network off by default).`
    : `Sandbox: none. Commands for the model are refused (${r.failure}); fix the failures above, or opt out with --sandbox off.`;
  return `${lines.join("\n")}\n\n${mode}\n`;
}

const CHECK_FLAGS: readonly Flag<unknown>[] = [{
  ...JSON_OUTPUT,
  help: "print the report as JSON: {usable, kind, failure?, checks: [{name,\n" +
    "status, detail, fix?}], seccomp?: {installed, arch, blocks}}",
}];

const check: Command = {
  path: ["sandbox", "check"],
  summary: "check whether sandboxed commands can run here",
  help: `Usage: penguin sandbox check [--json]

Probe whether commands for the model can run sandboxed on this machine:
bubblewrap present, user namespaces allowed, a trivial command runs under
the full flag set and is confined (read-only root, no capabilities, private
PID and network namespaces, the seccomp filter that refuses Unix sockets,
io_uring and the kernel keyrings), and the kernel's bounds on what commands
hold (a pids and a memory cgroup as root, made as a command would make them).
Prints each check as ok, warn or FAIL with the fix for each problem, then the
sandbox penguin will use.

Flags:
${flagHelp(CHECK_FLAGS, 12)}

Exit code: 0 when the sandbox works, 1 when it does not.

${ENV_HELP}`,
  async run(args: string[], ctx: CommandContext): Promise<number> {
    const p = parseDeclared("sandbox check", args, CHECK_FLAGS, 0);
    const report = await withCgroupChecks(
      await detectSandbox({ ...bwrapOverride(), version: true }),
    );
    if (bool(p, "json")) {
      const { usable, kind, failure, checks, seccomp } = report;
      const json = {
        usable,
        kind,
        ...(failure ? { failure } : {}),
        checks,
        ...(seccomp ? { seccomp } : {}),
      };
      ctx.io.out(JSON.stringify(json, null, 2) + "\n");
    } else {
      ctx.io.out(renderReport(report));
    }
    return report.usable ? 0 : 1;
  },
};

function dataRoot(root: string | undefined): string | undefined {
  try {
    return resolveDataRoot({ root, anyKind: true });
  } catch {
    return undefined;
  }
}

/** The flags of `sandbox run`: the session flags' parsing, with help about one command. */
const RUN_FLAGS: readonly Flag<unknown>[] = [
  { ...WORKSPACE, help: "the writable directory (default: the current directory)" },
  { ...NETWORK, help: "network access (default: off)" },
  {
    ...SANDBOX,
    help: "workspace-write (default), read-only, or off: no OS\nsandbox at all (prints a warning)",
  },
  GRANT_WRITABLE_ROOTS,
  {
    ...GIT_WRITABLE,
    help: "let the command commit: open the workspace's .git object\n" +
      "and ref stores (config, hooks and redirections stay\nread-only; default: .git is read-only)",
  },
  ALLOW_HOME_WORKSPACE,
];

const run: Command = {
  path: ["sandbox", "run"],
  summary: "run a command under the model's sandbox",
  help: `Usage: penguin sandbox run [flags] -- <command> [args...]

Run a command under the sandbox penguin uses for the model: read-only root,
writable workspace, private /tmp, no network, penguin's data root and the home
directory hidden (except read-only toolchains and shell startup files; see
docs/security.md), Unix sockets refused by a seccomp filter, and an
environment rebuilt from an allowlist (never API keys or PENGUIN_* variables).
stdin, stdout and stderr are passed through; the exit code is the command's
(128+N when a signal N ended it).

Flags:
${flagHelp(RUN_FLAGS, 22)}

${POLICY_FILE_HELP} Its approval mode and command rules
concern the model's commands and do not apply here.

Fails closed: when the sandbox cannot run here nothing runs, and the error
says how to fix it (see "penguin sandbox check").

${ENV_HELP}`,
  async run(args: string[], ctx: CommandContext): Promise<number> {
    const p = parseDeclared("sandbox run", args, RUN_FLAGS);
    const argv = p.positionals;
    if (argv.length === 0) {
      throw new PenguinError("usage", "sandbox run: no command given; put it after --");
    }
    const workspace = resolve(flagValue(p, WORKSPACE) ?? Deno.cwd());
    await requireWorkspace("sandbox run", workspace);
    const eff = await effectivePolicy(workspace, {
      sandbox: flagValue(p, SANDBOX) ?? "workspace-write",
      network: flagValue(p, NETWORK) ?? false,
      grantWritableRoots: bool(p, GRANT_WRITABLE_ROOTS.name),
      gitWritable: bool(p, GIT_WRITABLE.name),
    }, { ...(ctx.root !== undefined ? { root: ctx.root } : {}), warn: ctx.io.err });
    const mode = eff.sandbox;
    const policy = createPolicy({
      workspace,
      mode,
      network: eff.network,
      extraWritable: eff.extraWritable,
      git: eff.git,
      ...(bool(p, ALLOW_HOME_WORKSPACE.name) ? { allowHomeWorkspace: true } : {}),
      ...(eff.homeReadable.length > 0 ? { homeReadable: eff.homeReadable } : {}),
      dataRoot: dataRoot(ctx.root),
      ...bwrapOverride(),
    });
    if (mode === "off") {
      ctx.io.err(
        `penguin: warning: --sandbox off: ${
          JSON.stringify(argv.join(" "))
        } runs without any OS sandbox; ` +
          `it can read and write everything you can, and only its environment is filtered\n`,
      );
    }
    let cwd = workspace;
    try {
      const here = await Deno.realPath(Deno.cwd());
      if (isInside(here, await Deno.realPath(workspace))) cwd = here;
    } catch {
      // A missing workspace is reported by spawnSandboxed.
    }
    const child = await spawnSandboxed({ argv, policy, cwd, stdin: "inherit", stdio: "inherit" });
    // Ctrl-C and hangups go to the command's process group; SIGTERM ends it (and escalates to SIGKILL).
    const handlers: [Deno.Signal, () => void][] = [
      ["SIGINT", () => child.signal("SIGINT")],
      ["SIGHUP", () => child.signal("SIGHUP")],
      ["SIGTERM", () => void child.kill()],
    ];
    for (const [sig, fn] of handlers) Deno.addSignalListener(sig, fn);
    try {
      return (await child.status).code;
    } finally {
      for (const [sig, fn] of handlers) Deno.removeSignalListener(sig, fn);
    }
  },
};

/** The sandbox commands. */
export const sandboxCommands: Command[] = [check, run];
