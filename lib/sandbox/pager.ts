/**
 * The user's pager (`$PAGER`, default `less -FRX`) for long terminal output.
 * The pager is the user's own program, not the model's, so it runs outside
 * the sandbox — but with an environment cut down to what a pager needs, so
 * no API key or penguin setting reaches it.
 *
 * @module
 */
import { join } from "node:path";
import { findBash, isExecutable } from "./_probe.ts";

/** A running pager fed through its stdin. */
export interface Pager {
  /** Queue `text` for the pager; silently dropped once the user has quit it. */
  write(text: string): void;
  /** Close the pager's input and wait until the user quits it. */
  close(): Promise<void>;
}

/** Variables a pager may see (besides PAGER itself). */
const PAGER_ENV = [
  "PATH",
  "HOME",
  "TERM",
  "LANG",
  "LANGUAGE",
  "TZ",
  "LESS",
  "COLUMNS",
  "LINES",
  "LESSCHARSET",
];

/** The pager command line: `$PAGER`, else `less -FRX`; undefined when paging is off (`PAGER` empty or `cat`). */
export function pagerCommand(
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): string | undefined {
  const raw = env("PAGER");
  if (raw === undefined) return "less -FRX";
  const cmd = raw.trim();
  if (cmd === "" || cmd === "cat") return undefined;
  return cmd;
}

async function onPath(program: string): Promise<boolean> {
  if (program.includes("/")) return await isExecutable(program);
  for (const dir of (Deno.env.get("PATH") ?? "").split(":").filter((d) => d.startsWith("/"))) {
    if (await isExecutable(join(dir, program))) return true;
  }
  return false;
}

/**
 * Start the pager, or resolve to null when there is none to start (paging
 * off, the program not found, or no bash): the caller then prints directly.
 */
export async function openPager(): Promise<Pager | null> {
  const cmd = pagerCommand();
  if (cmd === undefined) return null;
  const program = cmd.split(/\s+/)[0]!;
  const bash = await findBash();
  if (!bash || !(await onPath(program))) return null;
  const env: Record<string, string> = { PAGER: cmd };
  for (const name of PAGER_ENV) {
    const v = Deno.env.get(name);
    if (v !== undefined) env[name] = v;
  }
  const child = new Deno.Command(bash, {
    args: ["-c", "exec $PAGER"],
    stdin: "piped",
    stdout: "inherit",
    stderr: "inherit",
    clearEnv: true,
    env,
  }).spawn();
  const writer = child.stdin.getWriter();
  const enc = new TextEncoder();
  let open = true;
  let chain: Promise<void> = Promise.resolve();
  return {
    write(text: string) {
      if (!open || text === "") return;
      chain = chain.then(() => open ? writer.write(enc.encode(text)) : undefined).catch(() => {
        open = false; // the user quit the pager: drop the rest
      });
    },
    async close() {
      await chain;
      if (open) {
        open = false;
        await writer.close().catch(() => {});
      }
      await child.status;
    },
  };
}
