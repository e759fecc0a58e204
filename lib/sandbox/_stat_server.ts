/**
 * GNU `stat` answers for the nested-repository walk's stamps
 * (`_walk_stamps.ts`) from one bash this process keeps running: it reads
 * NUL-separated paths on its stdin, runs `stat` on them and ends the answer
 * with `END`. A walk stamps every recently changed directory before and
 * after it lists the tree, and a process spawned by Deno for each look cost
 * a session's turn 20 to 35 ms (spawned through bash, as penguin's
 * permission set requires since attack round 24 perms B4); a fork by bash
 * costs about one. Looks are answered one at a time. If the bash cannot be
 * started or stops answering as expected, undefined is returned and the
 * caller runs `stat` itself. Not started until a look needs it; the process
 * does not wait for it to exit (it ends when penguin closes its stdin).
 *
 * @module
 */
import { findBash } from "./_executables.ts";

// `set --` gathers one look's paths (an empty one ends it); EOF ends the bash.
const SCRIPT = `tool=$1
while :; do
  set --
  eof=1
  while IFS= read -r -d '' p; do
    if [ -z "$p" ]; then eof=0; break; fi
    set -- "$@" "$p"
  done
  [ "$eof" = 1 ] && exit 0
  if [ "$#" -gt 0 ]; then "$tool" --printf='%i %.9Z %n\\0' -- "$@" 2>/dev/null; fi
  printf 'END\\0'
done`;

interface Server {
  child: Deno.ChildProcess;
  writer: WritableStreamDefaultWriter<Uint8Array>;
  reader: ReadableStreamDefaultReader<Uint8Array>;
}

let server: Promise<Server | undefined> | undefined;
let queue: Promise<unknown> = Promise.resolve();
const encoder = new TextEncoder();

async function start(tool: string): Promise<Server | undefined> {
  const bash = await findBash();
  if (bash === undefined) return undefined;
  try {
    const child = new Deno.Command(bash, {
      args: ["--noprofile", "--norc", "-c", SCRIPT, "penguin-stat", tool],
      clearEnv: true,
      env: { LC_ALL: "C" },
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    child.unref();
    return { child, writer: child.stdin.getWriter(), reader: child.stdout.getReader() };
  } catch {
    return undefined;
  }
}

/** Stop using the server (it answered wrong or is gone): later looks run `stat` themselves. */
function broken(s: Server): void {
  server = Promise.resolve(undefined);
  try {
    s.child.kill("SIGKILL");
  } catch {
    // gone already
  }
}

/**
 * `stat --printf='%i %.9Z %n\0' -- paths…` as `tool` answers it, from the
 * kept bash; undefined when it cannot answer (the caller runs `stat`).
 */
export function statThroughServer(tool: string, paths: readonly string[]): Promise<
  string | undefined
> {
  const run = async (): Promise<string | undefined> => {
    const s = await (server ??= start(tool));
    if (s === undefined) return undefined;
    // Held in the event loop while a look waits for its answer, let go between looks.
    s.child.ref();
    try {
      await s.writer.write(encoder.encode(paths.map((p) => `${p}\0`).join("") + "\0"));
      const decoder = new TextDecoder();
      let text = "";
      while (!(text === "END\0" || text.endsWith("\0END\0"))) {
        const { value, done } = await s.reader.read();
        if (done) {
          broken(s);
          return undefined;
        }
        text += decoder.decode(value, { stream: true });
      }
      return text.slice(0, -"END\0".length);
    } catch {
      broken(s);
      return undefined;
    } finally {
      s.child.unref();
    }
  };
  const answer = queue.then(run, run);
  queue = answer.catch(() => {});
  return answer;
}
