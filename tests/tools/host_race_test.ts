// The file tools run inside the sandbox's mount view: a command racing
// renameat2(RENAME_EXCHANGE) between a workspace file and a symlink cannot
// make read_file return a hidden secret, nor write_file create a file
// outside the workspace. Real processes, a real race, bounded in count.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, type SandboxedProcess, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { READ_FILE_DEFINITION, WRITE_FILE_DEFINITION } from "../../lib/tools/mod.ts";
import type { ToolContext } from "../../lib/tools/context.ts";
import type { ToolEvent } from "../../lib/tools/tool.ts";
import { confinedFileTools } from "../../lib/tools/worker/mod.ts";
import { visibleTempDir } from "../sandbox/_helpers.ts";

const PYTHON = "/usr/bin/python3";
const hasPython = await Deno.stat(PYTHON).then(() => true, () => false);

// Exchanges two paths as fast as it can, at most 50 million times.
const RACER = `
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
print("racing", flush=True)
for _ in range(50_000_000):
    libc.renameat2(-100, a, -100, b, 2)
`;

async function startRacer(
  policy: ReturnType<typeof createPolicy>,
  a: string,
  b: string,
): Promise<SandboxedProcess> {
  const child = await spawnSandboxed({ argv: [PYTHON, "-c", RACER, a, b], policy });
  const reader = child.output.getReader();
  let seen = "";
  while (!seen.includes("racing")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the racer did not start: ${seen}`);
    seen += value;
  }
  reader.releaseLock();
  child.output.cancel().catch(() => {});
  return child;
}

async function text(events: AsyncIterable<ToolEvent>): Promise<string> {
  let out = "";
  for await (const e of events) if (e.type === "delta") out += e.text;
  return out;
}

interface World {
  base: string;
  ws: string;
  root: string;
  outside: string;
  secret: string;
}

async function withWorld(fn: (w: World) => Promise<void>): Promise<void> {
  const base = await visibleTempDir("penguin-race-");
  const w: World = {
    base,
    ws: join(base, "ws"),
    root: join(base, "data"),
    outside: join(base, "outside"),
    secret: `api_key = "sk-race-${crypto.randomUUID()}"`,
  };
  await Deno.mkdir(w.ws);
  await Deno.mkdir(w.root);
  await Deno.mkdir(w.outside);
  await Deno.writeTextFile(join(w.root, "notes.txt"), `${w.secret}\n`);
  try {
    await fn(w);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
}

/**
 * The call's output, or the refusal when no sandbox could be planned for it: each call plans what
 * its sandbox hides (a host of another plan is replaced), and a plan made while a command renames
 * directories in a loop is refused (the nested-repository walk never settles).
 */
async function refusedOr(out: Promise<string>): Promise<string> {
  try {
    return await out;
  } catch (err) {
    if (/Cannot sandbox/.test(String(err))) return `Refused: ${err}`;
    throw err;
  }
}

function ctxFor(w: World, policy: ReturnType<typeof createPolicy>): ToolContext {
  return {
    workspace: w.ws,
    sessionId: "session-race",
    toolCallId: "call",
    signal: new AbortController().signal,
    sandbox: policy,
  };
}

Deno.test({
  name: "read_file never returns a hidden file while a command swaps a symlink into the path",
  ignore: !hasPython,
  async fn() {
    await withWorld(async (w) => {
      await Deno.writeTextFile(join(w.ws, "a.txt"), "harmless\n");
      await Deno.symlink(join(w.root, "notes.txt"), join(w.ws, "b"));
      const policy = createPolicy({ workspace: w.ws, dataRoot: w.root });
      const tools = confinedFileTools();
      const read = tools.factories.read_file!(READ_FILE_DEFINITION);
      // The tool host starts (and plans its sandbox) before the race, as in the write test below.
      assert.match(
        await text(read.run({ file_path: "a.txt" }, ctxFor(w, policy))),
        /harmless/,
      );
      const racer = await startRacer(policy, join(w.ws, "a.txt"), join(w.ws, "b"));
      try {
        let normal = 0, swapped = 0, leaked = 0;
        // Read until both states were seen many times (bounded), so the race really ran.
        for (let i = 0; i < 3000 && (normal < 30 || swapped < 30); i++) {
          const out = await refusedOr(text(read.run({ file_path: "a.txt" }, ctxFor(w, policy))));
          if (out.includes("sk-race-")) leaked++;
          else if (out.includes("harmless")) normal++;
          else swapped++;
        }
        assert.equal(leaked, 0, `${leaked} reads returned the hidden secret`);
        assert.ok(normal >= 30 && swapped >= 30, `the race ran (${normal} / ${swapped})`);
      } finally {
        await racer.kill(200);
        await tools.dispose();
      }
    });
  },
});

Deno.test({
  name: "write_file never creates a file outside the workspace while a command swaps a directory",
  ignore: !hasPython,
  async fn() {
    await withWorld(async (w) => {
      await Deno.mkdir(join(w.ws, "d"));
      await Deno.symlink(w.outside, join(w.ws, "e"));
      const policy = createPolicy({ workspace: w.ws, dataRoot: w.root });
      const tools = confinedFileTools();
      const write = tools.factories.write_file!(WRITE_FILE_DEFINITION);
      // The tool host starts (and plans its sandbox) before the race: a plan made while a command
      // renames directories in a loop is refused (the nested-repository walk never settles).
      assert.match(
        await text(write.run({ file_path: "warm.txt", content: "x" }, ctxFor(w, policy))),
        /Wrote|Created|bytes/,
      );
      const racer = await startRacer(policy, join(w.ws, "d"), join(w.ws, "e"));
      try {
        let written = 0, refused = 0;
        for (let i = 0; i < 3000 && (written < 30 || refused < 30); i++) {
          const out = await refusedOr(
            text(write.run({ file_path: `d/f${i}.txt`, content: "x" }, ctxFor(w, policy))),
          );
          if (/^Wrote|^Created|bytes/.test(out) && !/outside|Cannot|Refus/.test(out)) written++;
          else refused++;
        }
        assert.ok(written >= 30 && refused >= 30, `the race ran (${written} / ${refused})`);
      } finally {
        await racer.kill(200);
        await tools.dispose();
      }
      const outside = await Array.fromAsync(Deno.readDir(w.outside));
      assert.deepEqual(outside.map((e) => e.name), [], "nothing was created outside");
    });
  },
});
