/**
 * The first command's set-up, started ahead: when a session opens, the work
 * a penguin process does once before its first command (the sandbox probe,
 * `detect.ts`, which the session's first request no longer waits for; the
 * shell snapshot's login shell, `login_env.ts`; the walks for credential files in
 * the shown toolchains and for other names of protected files, and the
 * rest of the plan the command runs in, `plan.ts`; the seccomp filter file,
 * made for the login shell's sandbox) starts in the background, so that
 * neither the session's first model request nor its first command waits
 * for it. The session starts it once the model begins its first tool call
 * (`after`): begun beside the first request, its processes and walks held
 * up the request on a machine of two cores by about 20 ms, and a session
 * whose model calls no tool has nothing to set up (nor a login shell to
 * stop at its end).
 *
 * Nothing is decided here: every step is the one the first command takes,
 * with the same policy (`commandPolicy`), and each leaves only its
 * per-process cache behind (the snapshot, the walks' answers), which the
 * command then awaits instead of starting. A step that fails is left for
 * the command to meet again and report. {@linkcode CommandWarmUp.stop} ends
 * it (a session closing before any command): the login shell is stopped,
 * and its snapshot is taken again by a later session's first command.
 *
 * @module
 */
import { loginEnvironment, withLoginEnvironment } from "../sandbox/login_env.ts";
import { resolvePlan } from "../sandbox/plan.ts";
import { commandPolicy } from "./_command_args.ts";
import type { CommandToolContext } from "./command_context.ts";

/** A started warm-up. */
export interface CommandWarmUp {
  /** Resolves when every step has ended (or failed); never rejects. */
  readonly done: Promise<void>;
  /** Stop what still runs (the login shell) and wait for the end. */
  stop(): Promise<void>;
}

/** Options of {@linkcode warmUpCommands}. */
export interface WarmUpOptions {
  /** Begin only once this resolves (default: at once); a stop before then begins nothing. */
  after?: Promise<void>;
}

/**
 * Start the set-up of the commands `ctx` would run (exec_command's context:
 * the session's sandbox policy and vault) in the background.
 */
export function warmUpCommands(
  ctx: Pick<CommandToolContext, "sandbox" | "workspace" | "scratchpad" | "vault">,
  opts: WarmUpOptions = {},
): CommandWarmUp {
  const abort = new AbortController();
  const policy = commandPolicy(ctx);
  const stopped = new Promise<void>((resolve) =>
    abort.signal.addEventListener("abort", () => resolve(), { once: true })
  );
  const done = (async () => {
    if (opts.after !== undefined) await Promise.race([opts.after, stopped]);
    if (abort.signal.aborted) return;
    // The login shell runs in a sandbox of its own: its plan starts the credential walk (or
    // awaits the one the session's workspace check started) and makes the seccomp file.
    const login = await loginEnvironment(policy, { signal: abort.signal });
    if (abort.signal.aborted) return;
    // The command's own plan: its PATH (from the snapshot) decides which walks it needs.
    await resolvePlan(withLoginEnvironment(policy, login), policy.workspace);
  })().catch(() => {
    // The command meets the same failure and reports it.
  });
  return {
    done,
    stop: async () => {
      abort.abort();
      await done;
    },
  };
}
