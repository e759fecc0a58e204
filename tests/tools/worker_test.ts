// The confined tool worker: a buggy tool inside it cannot reach outside the
// workspace and scratchpad (checked in the outside world), aborts are
// forwarded, and the proxied file tools answer exactly like the in-process ones.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createEditFileTool } from "../../lib/tools/edit_file.ts";
import { createReadFileTool } from "../../lib/tools/read_file.ts";
import { createWriteFileTool } from "../../lib/tools/write_file.ts";
import type { Tool, ToolDefinition, ToolEvent } from "../../lib/tools/tool.ts";
import {
  confinedFileTools,
  createToolWorkerPool,
  type ToolWorkerPool,
  workerPermissions,
} from "../../lib/tools/worker/mod.ts";
import { type Dirs, run, withDirs } from "./_support.ts";

const SECRET = "TOP-SECRET-CONTENT";
const BUGGY = new URL("./_buggy_worker.ts", import.meta.url);

function def(name: string): ToolDefinition {
  return {
    name,
    description: name,
    parameters: { type: "object", properties: {} },
    permission: "rw",
    timeoutMs: 0,
    maxOutputLength: 0,
    callDescription: false,
  };
}

interface Outcome {
  events: ToolEvent[];
  text: string;
  error?: Error;
}

async function call(
  pool: ToolWorkerPool,
  name: string,
  args: Record<string, unknown>,
  d: Dirs,
  signal = new AbortController().signal,
  readOnlyRoots?: string[],
): Promise<Outcome> {
  const events: ToolEvent[] = [];
  try {
    for await (
      const e of pool.run(def(name), args, {
        workspace: d.ws,
        scratchpad: d.scratch,
        ...(readOnlyRoots ? { readOnlyRoots } : {}),
        sessionId: "session-test",
        toolCallId: "call_1",
        signal,
      })
    ) events.push(e);
  } catch (err) {
    return { events, text: textOf(events), error: err as Error };
  }
  return { events, text: textOf(events) };
}

function textOf(events: ToolEvent[]): string {
  return events.map((e) => (e.type === "delta" ? e.text : "")).join("");
}

/** A pool of the buggy tools; a tool that ignores an abort is cut off after `abortGraceMs`. */
async function withBuggy(
  fn: (pool: ToolWorkerPool, d: Dirs) => Promise<void>,
  abortGraceMs = 300,
): Promise<void> {
  const pool = createToolWorkerPool(BUGGY, { abortGraceMs });
  try {
    await withDirs((d) => fn(pool, d));
  } finally {
    pool.dispose();
  }
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

Deno.test("workerPermissions grants read and write of exactly the roots and nothing else", () => {
  assert.deepEqual(workerPermissions(["/w", "/s"]), {
    read: ["/w", "/s"],
    write: ["/w", "/s"],
    net: false,
    env: false,
    run: false,
    ffi: false,
    sys: false,
    import: false,
  });
});

Deno.test("workerPermissions adds read-only roots to read, never to write", () => {
  const p = workerPermissions(["/w"], ["/skills"]);
  assert.deepEqual([p.read, p.write], [["/w", "/skills"], ["/w"]]);
});

Deno.test("a buggy tool in the confined worker can read a read-only root but not write there", async () => {
  await withBuggy(async (pool, d) => {
    const skills = join(d.outside, "skills");
    await Deno.mkdir(skills);
    await Deno.writeTextFile(join(skills, "SKILL.md"), "skill");
    await Deno.writeTextFile(join(d.outside, "s.txt"), SECRET);
    const never = new AbortController().signal;
    const read = await call(pool, "read_any", { path: join(skills, "SKILL.md") }, d, never, [
      skills,
    ]);
    assert.equal(read.text, "skill");
    const write = await call(
      pool,
      "write_any",
      {
        path: join(skills, "SKILL.md"),
        content: "pwned",
      },
      d,
      never,
      [skills],
    );
    assert.equal(write.error?.name, "NotCapable");
    const neighbour = await call(pool, "read_any", { path: join(d.outside, "s.txt") }, d, never, [
      skills,
    ]);
    assert.equal(neighbour.error?.name, "NotCapable");
    assert.equal(await Deno.readTextFile(join(skills, "SKILL.md")), "skill");
  });
});

Deno.test("a buggy tool in the confined worker cannot read files outside the roots", async () => {
  await withBuggy(async (pool, d) => {
    const secret = join(d.outside, "s.txt");
    await Deno.writeTextFile(secret, SECRET);
    for (const path of [secret, "/etc/hostname", join(d.ws, "../outside/s.txt")]) {
      const r = await call(pool, "read_any", { path }, d);
      assert.equal(r.error?.name, "NotCapable", `${path}: ${r.error?.message}`);
      assert.ok(!r.text.includes(SECRET));
    }
    // Inside the roots the same tool works (the worker is not simply broken).
    await Deno.writeTextFile(join(d.ws, "in.txt"), "inside");
    assert.equal((await call(pool, "read_any", { path: join(d.ws, "in.txt") }, d)).text, "inside");
  });
});

Deno.test("a buggy tool in the confined worker cannot create, overwrite or link outside", async () => {
  await withBuggy(async (pool, d) => {
    const secret = join(d.outside, "s.txt");
    await Deno.writeTextFile(secret, SECRET);
    const attempts: [string, Record<string, unknown>][] = [
      ["write_any", { path: secret, content: "pwned" }],
      ["write_any", { path: join(d.outside, "new.txt"), content: "pwned" }],
      ["write_any", { path: join(d.ws, "../outside/new2.txt"), content: "pwned" }],
      ["mkdir_any", { path: join(d.outside, "dir") }],
      ["symlink", { target: secret, path: join(d.ws, "link") }],
      ["proc_self_mem", {}],
    ];
    for (const [name, args] of attempts) {
      const r = await call(pool, name, args, d);
      assert.equal(r.error?.name, "NotCapable", `${name} ${JSON.stringify(args)}`);
    }
    assert.equal(await Deno.readTextFile(secret), SECRET);
    assert.deepEqual(
      (await Array.fromAsync(Deno.readDir(d.outside))).map((e) => e.name),
      ["s.txt"],
    );
    assert.equal(await exists(join(d.ws, "link")), false);
    // Writing inside the scratchpad root is allowed.
    const ok = await call(pool, "write_any", { path: join(d.scratch, "a.txt"), content: "x" }, d);
    assert.equal(ok.error, undefined);
    assert.equal(await Deno.readTextFile(join(d.scratch, "a.txt")), "x");
  });
});

Deno.test("a buggy tool in the confined worker gets no env, net, run, sys or ffi", async () => {
  const hits: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      hits.push(req.url);
      return new Response("reached");
    },
  );
  try {
    await withBuggy(async (pool, d) => {
      const port = server.addr.port;
      const attempts: [string, Record<string, unknown>][] = [
        ["env", { name: "HOME" }],
        ["env_all", {}],
        ["fetch", { url: `http://127.0.0.1:${port}/` }],
        ["connect", { port }],
        ["spawn", { cmd: "/bin/sh", args: ["-c", `echo ${SECRET}`] }],
        ["sys", {}],
        ["ffi", {}],
      ];
      for (const [name, args] of attempts) {
        const r = await call(pool, name, args, d);
        assert.ok(r.error, `${name} failed`);
        assert.ok(!r.text.includes(SECRET));
        // fetch reports the denial as a TypeError whose message names net access.
        if (name === "fetch") assert.match(r.error.message, /net access|NotCapable|Requires/);
        else assert.equal(r.error.name, "NotCapable", `${name}: ${r.error.message}`);
      }
    });
    assert.deepEqual(hits, [], "the listener was never reached");
  } finally {
    await server.shutdown();
  }
});

Deno.test("an abort reaches the tool inside the worker as an AbortError", async () => {
  await withBuggy(async (pool, d) => {
    const ctl = new AbortController();
    const events: ToolEvent[] = [];
    for await (
      const e of pool.run(def("wait_abort"), {}, {
        workspace: d.ws,
        scratchpad: d.scratch,
        sessionId: "s",
        toolCallId: "c",
        signal: ctl.signal,
      })
    ) {
      events.push(e);
      if (e.type === "delta") ctl.abort(new DOMException("user abort", "AbortError"));
    }
    assert.deepEqual(events.at(-1), { type: "result", status: "aborted" });
    assert.equal(await Deno.readTextFile(join(d.ws, "aborted.txt")), "AbortError");
    // A grace no loaded machine runs out of: the tool must see the abort, not be cut off first.
  }, 120_000);
});

Deno.test("a tool that ignores an abort has its worker terminated; the pool keeps working", async () => {
  await withBuggy(async (pool, d) => {
    const ctl = new AbortController();
    const r = call(pool, "stubborn", {}, d, ctl.signal);
    ctl.abort(new DOMException("user abort", "AbortError"));
    const out = await r;
    assert.match(out.error?.message ?? "", /did not stop/);
    assert.equal(pool.size, 0);
    assert.equal((await call(pool, "echo", { text: "again" }, d)).text, "again");
  });
});

Deno.test("a crashing worker fails its call and does not take the host down", async () => {
  await withBuggy(async (pool, d) => {
    const out = await call(pool, "crash", {}, d);
    assert.match(out.error?.message ?? "", /the tool worker stopped: .*boom/);
    assert.equal((await call(pool, "echo", { text: "alive" }, d)).text, "alive");
  });
});

Deno.test("an unknown tool name fails the call with a clear error", async () => {
  await withBuggy(async (pool, d) => {
    const out = await call(pool, "nope", {}, d);
    assert.equal(out.error?.message, 'the tool worker does not serve "nope"');
  });
});

// ---- proxied file tools == in-process file tools -------------------------------------------

interface Case {
  name: string;
  tool: "read_file" | "write_file" | "edit_file";
  args: Record<string, unknown>;
  setup?: (d: Dirs) => Promise<void>;
  /**
   * Compare only the verdict: the sandboxed tool host cannot even see where
   * the link leads (the outside directory does not exist in its mount view),
   * so it words the refusal without the target.
   */
  verdictOnly?: true;
}

const BIG = Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";

/** A read_file case reading `file_path` (with `more` arguments). */
const read = (name: string, file_path: unknown, more: Record<string, unknown> = {}): Case => ({
  name,
  tool: "read_file",
  args: { file_path, ...more },
});

/** A write_file case writing `content` to `file_path`. */
const write = (name: string, file_path: string, content: string): Case => ({
  name,
  tool: "write_file",
  args: { file_path, content },
});

/** An edit_file case replacing `old_string` with `new_string` in `file_path`. */
const edit = (
  name: string,
  file_path: string,
  old_string: string,
  new_string: string,
  more: Record<string, unknown> = {},
): Case => ({ name, tool: "edit_file", args: { file_path, old_string, new_string, ...more } });

const CASES: Case[] = [
  read("read a file", "a.txt"),
  read("read a window", "big.txt", { offset: 10, limit: 5 }),
  read("read a long file", "big.txt"),
  read("read an absolute path inside", "@ws/a.txt"),
  read("read a missing file (hint)", "sub/a.tx"),
  read("read a directory", "sub"),
  read("read a binary file", "bin.dat"),
  read("read an empty file", "empty.txt"),
  read("read past the end", "a.txt", { offset: 99 }),
  read("read crlf", "crlf.txt"),
  read("read with bad args", 3),
  read("read ../ outside", "../outside/s.txt"),
  read("read absolute outside", "@outside/s.txt"),
  read("read a secret basename", ".vault.toml"),
  {
    name: "read through a symlink to outside",
    tool: "read_file",
    args: { file_path: "link" },
    setup: (d) => Deno.symlink(join(d.outside, "s.txt"), join(d.ws, "link")),
    verdictOnly: true,
  },
  {
    name: "read through a symlink inside",
    tool: "read_file",
    args: { file_path: "inlink" },
    setup: (d) => Deno.symlink(join(d.ws, "a.txt"), join(d.ws, "inlink")),
  },
  read("read the scratchpad", "@scratch/n.txt"),
  write("create a file", "new/x.txt", "x\n"),
  write("overwrite with a diff", "a.txt", "alpha\nBETA\ngamma\n"),
  write("overwrite unchanged", "a.txt", "alpha\nbeta\ngamma\n"),
  write("write into the scratchpad", "@scratch/w.txt", "s"),
  write("write ../ outside", "../outside/n.txt", "p"),
  write("write a directory", "sub", "p"),
  {
    name: "write through a dangling-free symlink to outside",
    tool: "write_file",
    args: { file_path: "link", content: "pwned" },
    setup: (d) => Deno.symlink(join(d.outside, "s.txt"), join(d.ws, "link")),
    verdictOnly: true,
  },
  write("write into .git/hooks", ".git/hooks/pre-commit", "#!/bin/sh\n"),
  edit("edit .git/config", ".git/config", "core", "x"),
  edit("edit once", "a.txt", "beta", "BETA"),
  edit("edit replace_all", "big.txt", "line 1", "LINE 1", { replace_all: true }),
  edit("edit ambiguous", "big.txt", "line 1", "x"),
  edit("edit not found", "a.txt", "zeta", "x"),
  edit("edit a missing file", "nope.txt", "a", "b"),
  edit("edit outside", "@outside/s.txt", "TOP", "x"),
];

async function seed(d: Dirs): Promise<void> {
  for (const dir of [d.ws, d.outside, d.scratch]) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await Deno.mkdir(dir, { recursive: true });
  }
  await Deno.mkdir(join(d.ws, "sub"));
  await Deno.mkdir(join(d.ws, ".git", "hooks"), { recursive: true });
  await Deno.writeTextFile(join(d.ws, ".git", "config"), "[core]\n");
  await Deno.writeTextFile(join(d.ws, "a.txt"), "alpha\nbeta\ngamma\n");
  await Deno.writeTextFile(join(d.ws, "sub", "a.txt"), "in sub\n");
  await Deno.writeTextFile(join(d.ws, "big.txt"), BIG);
  await Deno.writeFile(join(d.ws, "bin.dat"), new Uint8Array([1, 0, 2]));
  await Deno.writeTextFile(join(d.ws, "empty.txt"), "");
  await Deno.writeTextFile(join(d.ws, "crlf.txt"), "a\r\nb\r\n");
  // A workspace with its own penguin.jsonc: the confined host needs no stand-in for it (which
  // the in-process tools would not see), so both list the same entries.
  await Deno.writeTextFile(join(d.ws, "penguin.jsonc"), "{}\n");
  await Deno.writeTextFile(join(d.ws, ".vault.toml"), SECRET);
  await Deno.writeTextFile(join(d.outside, "s.txt"), SECRET);
  await Deno.writeTextFile(join(d.scratch, "n.txt"), "scratch note\n");
}

async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (p: string, rel: string) => {
    for await (const e of Deno.readDir(p)) {
      const full = join(p, e.name);
      const key = rel ? `${rel}/${e.name}` : e.name;
      if (e.isSymlink) out[key] = `-> ${await Deno.readLink(full)}`;
      else if (e.isDirectory) await walk(full, key);
      else out[key] = await Deno.readTextFile(full);
      // The running host's sandbox holds an inert stand-in for a missing penguin.jsonc.
      if (key === "penguin.jsonc" && out[key]!.startsWith("// penguin: a stand-in")) {
        delete out[key];
      }
    }
  };
  await walk(dir, "");
  return out;
}

function expand(args: Record<string, unknown>, d: Dirs): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    out[k] = typeof v === "string"
      ? v.replace("@ws", d.ws).replace("@outside", d.outside).replace("@scratch", d.scratch)
      : v;
  }
  return out;
}

Deno.test("the proxied file tools give byte-identical outputs to the in-process tools", async () => {
  const local: Record<string, Tool> = {
    read_file: createReadFileTool(),
    write_file: createWriteFileTool(),
    edit_file: createEditFileTool(),
  };
  const confined = confinedFileTools();
  try {
    await withDirs(async (d) => {
      for (const c of CASES) {
        const results = [];
        for (
          const tool of [local[c.tool]!, confined.factories[c.tool]!(local[c.tool]!.definition)]
        ) {
          await seed(d);
          await c.setup?.(d);
          const r = await run(tool, expand(c.args, d), d, { id: "call_x" });
          results.push({
            items: c.verdictOnly
              ? [r.status, /outside the workspace/.test(r.output), r.output.includes(SECRET)]
              : r.items,
            ws: await snapshot(d.ws),
            outside: await snapshot(d.outside),
            scratch: await snapshot(d.scratch),
          });
        }
        assert.deepEqual(results[1], results[0], c.name);
        assert.equal(results[0]!.outside["s.txt"], SECRET, `${c.name}: the outside file is intact`);
      }
    });
  } finally {
    await confined.dispose();
  }
});

Deno.test("the proxied file tools refuse a symlink the model made, though Deno would follow it", async () => {
  const confined = confinedFileTools();
  try {
    await withDirs(async (d) => {
      await seed(d);
      await Deno.symlink(d.outside, join(d.ws, "out"));
      const read = confined.factories.read_file!(createReadFileTool().definition);
      const write = confined.factories.write_file!(createWriteFileTool().definition);
      const r = await run(read, { file_path: "out/s.txt" }, d);
      assert.equal(r.status, "failed");
      assert.ok(!r.output.includes(SECRET));
      const w = await run(write, { file_path: "out/new.txt", content: "pwned" }, d);
      assert.equal(w.status, "failed");
      assert.equal(await exists(join(d.outside, "new.txt")), false);
    });
  } finally {
    await confined.dispose();
  }
});
