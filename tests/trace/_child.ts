// A child process for the trace tests: `deno run -A _child.ts <mode> <tracesDir> <sessionId>`.
// Modes:
//   try-open    open a writer for the session; print {"ok"} or {"ok":false,"kind","message"}
//   hold        take the session lock, print "held" (or "locked <message>"), release on stdin EOF
//   umask       under umask 0277, write one record (checks the writer's modes)
//   torn-write  make one append fail half-way (RLIMIT_FSIZE), then append again; print the error
import { modelMsg, PenguinError, userText } from "../../lib/protocol/mod.ts";
import { acquireSessionLock, openTraceWriter, releaseSessionLock } from "../../lib/trace/mod.ts";
import { bigText, meta } from "./_support.ts";

const [mode, tracesDir, sessionId] = Deno.args as [string, string, string];

function print(value: unknown): void {
  console.log(typeof value === "string" ? value : JSON.stringify(value));
}

async function waitForStdinEof(): Promise<void> {
  const buf = new Uint8Array(64);
  while ((await Deno.stdin.read(buf)) !== null) { /* drain */ }
}

if (mode === "try-open") {
  try {
    const w = await openTraceWriter({ tracesDir, sessionId });
    await w.close();
    print({ ok: true });
  } catch (err) {
    const kind = err instanceof PenguinError ? err.kind : "other";
    print({ ok: false, kind, message: err instanceof Error ? err.message : String(err) });
  }
} else if (mode === "hold") {
  try {
    const lock = await acquireSessionLock(tracesDir, sessionId);
    print("held");
    await waitForStdinEof();
    await releaseSessionLock(lock);
  } catch (err) {
    print(`locked ${err instanceof Error ? err.message : String(err)}`);
  }
} else if (mode === "umask") {
  Deno.umask(0o277);
  const w = await openTraceWriter({ tracesDir, sessionId, dateDir: "2026-01-02", lock: false });
  await w.append(meta(sessionId));
  await w.close();
  print({ path: w.path });
} else if (mode === "torn-write") {
  const libc = Deno.dlopen("libc.so.6", {
    setrlimit: { parameters: ["i32", "buffer"], result: "i32" },
    getrlimit: { parameters: ["i32", "buffer"], result: "i32" },
    signal: { parameters: ["i32", "usize"], result: "usize" },
  });
  const RLIMIT_FSIZE = 1;
  const SIGXFSZ = 25;
  const SIG_IGN = 1n;
  const w = await openTraceWriter({
    tracesDir,
    sessionId,
    dateDir: "2026-01-02",
    lock: false,
    fsync: "never",
  });
  await w.append(meta(sessionId));
  const size = (await Deno.stat(w.path)).size;
  const old = new BigUint64Array(2);
  libc.symbols.getrlimit(RLIMIT_FSIZE, new Uint8Array(old.buffer));
  libc.symbols.signal(SIGXFSZ, SIG_IGN); // get EFBIG instead of being killed
  const limited = new BigUint64Array([BigInt(size + 100), old[1]!]);
  if (libc.symbols.setrlimit(RLIMIT_FSIZE, new Uint8Array(limited.buffer)) !== 0) {
    throw new Error("setrlimit failed");
  }
  let failed = "";
  try {
    await w.append(bigText(5000, "x"));
  } catch (err) {
    failed = err instanceof Error ? err.message : String(err);
  }
  libc.symbols.setrlimit(RLIMIT_FSIZE, new Uint8Array(old.buffer));
  const wroteAfter = await w.append(modelMsg(userText("after the failure")));
  await w.close();
  libc.close();
  print({ path: w.path, size, failed, wroteAfter });
} else {
  throw new Error(`unknown mode ${mode}`);
}
