/**
 * GNU `stat`'s answers for the nested-repository walk's stamps
 * (`_walk_stamps.ts`) from one process this one keeps running: it reads
 * NUL-separated paths on its stdin and answers each look as `stat
 * --printf='%i %.9Z %n\0'` would, ended by `END` (python3 where there is
 * one, with no process a look; else a bash that forks `stat`). A walk stamps every recently changed directory before and
 * after it lists the tree, and a process spawned by Deno for each look cost
 * a session's turn 20 to 35 ms (spawned through bash, as penguin's
 * permission set requires since attack round 24 perms B4); a fork by bash
 * costs about one, python nothing. Looks are answered one at a time. If the bash cannot be
 * started or stops answering as expected, undefined is returned and the
 * caller runs `stat` itself. Not started until a look needs it; the process
 * does not wait for it to exit (it ends when penguin closes its stdin).
 *
 * @module
 */
import { findBash } from "./_executables.ts";

// Python reads ctime in whole nanoseconds with no process for each look (`os.lstat`, as `stat`
// looks: no link followed) and answers in `stat`'s form.
const PYTHON = `import os, sys
pending, paths = b"", []
while True:
    chunk = os.read(0, 1 << 16)
    if not chunk:
        break
    pending += chunk
    *parts, pending = pending.split(b"\\0")
    for p in parts:
        if p:
            paths.append(p)
            continue
        out = []
        for q in paths:
            try:
                st = os.lstat(q)
            except OSError:
                continue
            c = st.st_ctime_ns
            out.append(b"%d %d.%09d %s\\0" % (st.st_ino, c // 10**9, c % 10**9, q))
        out.append(b"END\\0")
        sys.stdout.buffer.write(b"".join(out))
        sys.stdout.buffer.flush()
        paths = []
`;

// Python where there is one; else `set --` gathers one look's paths (an empty one ends it) for
// `stat`, forked for each look. EOF ends either.
const SCRIPT = `tool=$1
if command -v python3 >/dev/null 2>&1; then exec python3 -c "$2"; fi
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

/** The end of an answer: `END` and a NUL, after a record's NUL or alone. */
const END = new TextEncoder().encode("END\0");

/** Whether `chunks` (`size` bytes in all) end with an answer's end. */
function answered(chunks: readonly Uint8Array[], size: number): boolean {
  if (size < END.length) return false;
  // The last END.length + 1 bytes, across chunks.
  const tail: number[] = [];
  for (let i = chunks.length - 1; i >= 0 && tail.length <= END.length; i--) {
    const c = chunks[i]!;
    for (let j = c.length - 1; j >= 0 && tail.length <= END.length; j--) tail.unshift(c[j]!);
  }
  const end = tail.slice(-END.length);
  if (!end.every((b, k) => b === END[k])) return false;
  return size === END.length || tail[0] === 0;
}

let server: Promise<Server | undefined> | undefined;
let queue: Promise<unknown> = Promise.resolve();
const encoder = new TextEncoder();

async function start(tool: string): Promise<Server | undefined> {
  const bash = await findBash();
  if (bash === undefined) return undefined;
  try {
    const child = new Deno.Command(bash, {
      args: ["--noprofile", "--norc", "-c", SCRIPT, "penguin-stat", tool, PYTHON],
      clearEnv: true,
      env: { LC_ALL: "C", PATH: "/usr/bin:/bin" },
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
      // Gathered as bytes and decoded once: an answer for 10,000 long paths is megabytes.
      const chunks: Uint8Array[] = [];
      let size = 0;
      while (!answered(chunks, size)) {
        const { value, done } = await s.reader.read();
        if (done) {
          broken(s);
          return undefined;
        }
        chunks.push(value);
        size += value.length;
      }
      const all = new Uint8Array(size);
      let at = 0;
      for (const c of chunks) all.set(c, at), at += c.length;
      return new TextDecoder().decode(all.subarray(0, size - END.length));
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
