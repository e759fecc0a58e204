// A command that signals its sandbox's init the moment it starts does not end the init: the init
// ignores the signals bash would end on before it forks the command (whose subshell restores
// them), not after. With the dispositions set after the fork, a command that ran before its init
// got past `c=$!` ended the kept sandbox (or, in a sandbox of its own, itself) — a race CI lost on
// a loaded machine. Here the race is made certain: strace holds the init at the return of each
// fork for a second (`inject=…:delay_exit`) while the command runs.
import assert from "node:assert/strict";
import { WRAPPER } from "../../lib/sandbox/_supervisor.ts";
import { launcherArgv } from "../../lib/sandbox/_launcher.ts";
import { hostHas } from "../support/host_tools.ts";

const strace = hostHas("/usr/bin/strace");
const unshare = hostHas("/usr/bin/unshare");
const root = Deno.uid() === 0;

/** Signals of the guard's set (with their Linux numbers) that bash ends on (measured: INT, USR2, SEGV). */
const SIGNALS: Record<string, number> = { INT: 2, QUIT: 3, SEGV: 11, USR2: 12, PIPE: 13 };

/**
 * A command that first prints which of {@linkcode SIGNALS} its init ignores at that moment
 * (`/proc/1/status` SigIgn; no fork, each of which strace holds), then sends it each of them.
 */
const PROBE = `while read -r k v; do [ "$k" = SigIgn: ] && ign=$v; done </proc/1/status; ` +
  Object.entries(SIGNALS).map(([g, n]) => `(( 0x$ign >> ${n - 1} & 1 )) && echo "ignores ${g}"; `)
    .join("") +
  `for g in ${Object.keys(SIGNALS).join(" ")}; do kill -s $g 1; done; echo sent`;
const IGNORED = Object.keys(SIGNALS).map((g) => `ignores ${g}\n`).join("");

const FORKS = "clone,clone3,fork,vfork";

/** `strace -f` holding each fork's return in the forking process for a second, then `argv`. */
function heldForks(argv: string[]): string[] {
  return [
    "-f",
    "-e",
    `trace=${FORKS}`,
    "-e",
    `inject=${FORKS}:delay_exit=1000000`,
    "-o",
    "/dev/null",
    ...argv,
  ];
}

/** `argv` as the init of a new PID namespace (as bwrap starts the sandbox's init), signals at their defaults. */
function asInit(argv: string[]): string[] {
  // Every signal at its default, as bwrap leaves them (strace and a test runner may ignore some,
  // and bash cannot restore what was ignored when it started).
  return ["unshare", "--pid", "--fork", "--mount-proc", "env", "--default-signal", ...argv];
}

/** One request of the launcher's protocol (see lib/sandbox/_launcher.ts): fields ended by NUL. */
function request(token: string | undefined, nonce: string, next: string, shell: string): string {
  const fields = [...(token ? [token] : []), nonce, next, "/", "0", "3", "/bin/bash", "-c", shell];
  return fields.map((f) => f + "\0").join("");
}

/** Resolves with the text once `reader` has given text that `done` accepts (or ended). */
async function readUntil(
  reader: ReadableStreamDefaultReader<string>,
  done: (text: string) => boolean,
  text = "",
): Promise<string> {
  while (!done(text)) {
    const r = await reader.read();
    if (r.done) break;
    text += r.value;
  }
  return text;
}

Deno.test({
  name: "a command that signals the kept sandbox's init at once leaves the launcher running",
  ignore: !strace || !unshare || !root,
  fn: async () => {
    // The launcher as the init of a PID namespace, with a process limit so the guard runs; its
    // binary path names nothing (so it is not readable). With job control its command waits for
    // it to close a pipe after the fork, so strace holds the launcher alone (not the command) at
    // the return of each fork and close.
    const child = new Deno.Command("unshare", {
      args: asInit(launcherArgv(64).with(0, "/bin/bash").with(-1, "/nonexistent")).slice(1),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const errs = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    await readUntil(errs, (t) => t.includes("ready"));
    const init = Number(
      (await Deno.readTextFile(`/proc/${child.pid}/task/${child.pid}/children`)).trim(),
    );
    const strace = new Deno.Command("strace", {
      args: [
        "-p",
        String(init),
        "-e",
        `trace=${FORKS},close`,
        "-e",
        `inject=${FORKS},close:delay_exit=200000`,
        "-o",
        "/dev/null",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const said = strace.stderr.pipeThrough(new TextDecoderStream()).getReader();
    await readUntil(said, (t) => t.includes("attached"));
    const [n1, n2, t1, t2] = ["a1".repeat(16), "b2".repeat(16), "c3".repeat(16), "d4".repeat(16)];
    const w = child.stdin.getWriter();
    const enc = new TextEncoder();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    try {
      await w.write(enc.encode(request(undefined, n1, t1, PROBE)));
      // The second request once the first command's status is out (the launcher reads it only then).
      out = await readUntil(reader, (t) => t.includes(`${n1} `) && t.endsWith("\n"));
      await w.write(enc.encode(request(t1, n2, t2, "echo next")));
      out = await readUntil(reader, (t) => t.includes(`${n2} `) && t.endsWith("\n"), out);
    } finally {
      try {
        strace.kill("SIGINT");
      } catch {
        // Ended with the launcher it traced.
      }
      await strace.status;
      await said.cancel();
      await w.close().catch(() => {});
      await child.status;
      await errs.cancel();
    }
    assert.equal(out, `${n1}\n${IGNORED}sent\n${n1} 0\n${n2}\nnext\n${n2} 0\n`);
  },
});

Deno.test({
  name: "a command that signals its own sandbox's init at once still gets its status",
  ignore: !strace || !unshare || !root,
  fn: async () => {
    // The wrapper as the init of a PID namespace (as bwrap starts it), with a process limit so the
    // guard runs; strace follows it and holds each fork's return in the forking process.
    const out = await new Deno.Command("strace", {
      args: heldForks(asInit([
        "/bin/bash",
        "-c",
        WRAPPER,
        "penguin-sandbox",
        "64",
        "0",
        "1",
        "/bin/bash",
        "-c",
        PROBE + "; exit 3",
      ])),
      stdin: "null",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.deepEqual(
      [text, out.code],
      [IGNORED + "sent\n", 3],
      new TextDecoder().decode(out.stderr),
    );
  },
});
