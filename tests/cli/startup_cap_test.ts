// The startup files' references, when penguin cannot follow them all or they name a writable
// root outside the home (issue 26 item 4, attack pass final10 rows 49-51): real `penguin run`s
// against the scripted model.
// - Row 49: `~/.bashrc` sources `ws/k1.sh`, which sources k2.sh … k70.sh: longer than the 64
//   files penguin reads. The run is refused, naming where following stopped; the same chain
//   outside every writable root is let be.
// - Rows 50/51: the data root is outside `$HOME`; `~/.bashrc` (directly, or through
//   `PROMPT_COMMAND` set in a file it sources) names a missing file in the agent's shared_env:
//   the model cannot create it.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { addServerModel, visibleTempDir } from "../support/roots.ts";
import { useTestRunDir } from "../support/run_dir.ts";
import { startupFacts } from "../../lib/tools/_startup_refusal.ts";

useTestRunDir();

/** Write `dir/k1.sh` … `dir/k<n>.sh`, each sourcing the next, and `home/.bashrc` sourcing k1. */
async function chain(home: string, dir: string, n: number): Promise<void> {
  await Deno.mkdir(home, { recursive: true });
  await Deno.mkdir(dir, { recursive: true });
  for (let i = 1; i < n; i++) {
    await Deno.writeTextFile(join(dir, `k${i}.sh`), `. ${join(dir, `k${i + 1}.sh`)}\n`);
  }
  await Deno.writeTextFile(join(dir, `k${n}.sh`), "export K=1\n");
  await Deno.writeTextFile(join(home, ".bashrc"), `. ${join(dir, "k1.sh")}\n`);
}

/** The tool outputs the model was shown, by call id. */
function outputsOf(body: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(visit);
    if (v === null || typeof v !== "object") return;
    const o = v as Record<string, unknown>;
    const id = o["call_id"] ?? o["tool_call_id"] ?? o["tool_use_id"];
    const text = o["output"] ?? o["content"];
    if (typeof id === "string" && text !== undefined) {
      out[id] = typeof text === "string" ? text : JSON.stringify(text);
    }
    Object.values(o).forEach(visit);
  };
  visit(body);
  return out;
}

Deno.test("run: a chain of sourced workspace files longer than penguin reads is refused by name", async () => {
  const base = await visibleTempDir("penguin-rc-chain-");
  try {
    const home = join(base, "home");
    const ws = join(base, "ws");
    await chain(home, ws, 70);
    const server = await startModelServer({ turns: [turn.text("done")] });
    try {
      const root = join(base, "data");
      await addServerModel(root, server);
      const r = await runCli(["--root", root, "run", "--workspace", ws, "-m", "go"], {
        env: { HOME: home },
      });
      assert.notEqual(r.code, 0, r.stdout);
      // .bashrc and k1 … k63 are the 64 files read: following stopped at k64, sourced by k63.
      assert.ok(r.stderr.includes("stopped following the shell startup files"), r.stderr);
      assert.ok(r.stderr.includes(`"${join(ws, "k64.sh")}"`), r.stderr);
      assert.ok(r.stderr.includes(`sourced or named by "${join(ws, "k63.sh")}"`), r.stderr);
      assert.ok(r.stderr.includes("shorten the chain"), r.stderr);
      assert.equal(server.requests.length, 0);
    } finally {
      await server.close();
    }
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("run: a long chain that has left every writable root is let be", async () => {
  const base = await visibleTempDir("penguin-rc-chain-out-");
  try {
    const home = join(base, "home");
    const ws = join(base, "ws");
    const shared = join(base, "system");
    // The chain leaves the workspace early: what lies past the cap is not the model's to change.
    await Deno.mkdir(ws, { recursive: true });
    await chain(home, shared, 70);
    const server = await startModelServer({
      turns: [
        turn.of(item.toolCall("exec_command", { cmd: "echo r''an" }, { id: "c1" })),
        turn.text("done"),
      ],
    });
    try {
      const root = join(base, "data");
      await addServerModel(root, server);
      const r = await runCli(["--root", root, "run", "--workspace", ws, "-m", "go"], {
        env: { HOME: home },
      });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(server.requests.length, 2);
      assert.ok(outputsOf(server.requests[1]!.body)["c1"]?.includes("ran"), r.stderr);
    } finally {
      await server.close();
    }
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("file tools: a chain past the cap that reaches the workspace refuses every write", async () => {
  const base = await visibleTempDir("penguin-rc-chain-ft-");
  try {
    const home = join(base, "home");
    const ws = join(base, "ws");
    await chain(home, ws, 70);
    const wsReal = await Deno.realPath(ws);
    const facts = await startupFacts(wsReal, [home], []);
    assert.match(facts.refusal ?? "", /stopped following .* at "[^"]*k64\.sh"/);
    assert.match(facts.refusal ?? "", /refuses every write/);
    // Outside the workspace, the same chain refuses nothing.
    const other = join(base, "other");
    await Deno.mkdir(other);
    assert.equal((await startupFacts(await Deno.realPath(other), [home], [])).refusal, undefined);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

/**
 * A run in the data root `base/data` (outside HOME) whose `~/.bashrc` is `bashrc` (given the
 * shared_env path `py`), where the model tries to create `py/<name>` with a command and with
 * write_file; returns the outputs and the path.
 */
async function sharedEnvRun(
  base: string,
  name: string,
  bashrc: (py: string, ws: string) => string,
  wsFiles: (py: string) => Record<string, string> = () => ({}),
): Promise<{ out: Record<string, string>; target: string }> {
  const home = join(base, "home");
  const ws = join(base, "ws");
  const root = join(base, "data");
  const py = join(root, "default_project", "agents", "default_agent", "shared_env", "py");
  await Deno.mkdir(home, { recursive: true });
  await Deno.mkdir(ws, { recursive: true });
  await Deno.mkdir(py, { recursive: true });
  for (const [f, text] of Object.entries(wsFiles(py))) await Deno.writeTextFile(join(ws, f), text);
  await Deno.writeTextFile(join(home, ".bashrc"), bashrc(py, ws));
  const target = join(py, name);
  const server = await startModelServer({
    turns: [
      turn.of(
        item.toolCall("exec_command", {
          cmd: `(printf x > '${target}') 2>&1 && echo wr''ote; echo tr''ied`,
        }, { id: "c1" }),
        item.toolCall("write_file", { file_path: target, content: "touch /tmp/pwned\n" }, {
          id: "w1",
        }),
      ),
      turn.text("done"),
    ],
  });
  try {
    await addServerModel(root, server);
    const r = await runCli(["--root", root, "run", "--workspace", ws, "-m", "go"], {
      env: { HOME: home },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.length, 2);
    return { out: outputsOf(server.requests[1]!.body), target };
  } finally {
    await server.close();
  }
}

/** Whether anything is at `p` on the host. */
async function existsOnHost(p: string): Promise<boolean> {
  try {
    await Deno.lstat(p);
    return true;
  } catch {
    return false;
  }
}

Deno.test("run: a missing file ~/.bashrc names in shared_env (data root outside HOME) cannot be made", async () => {
  const base = await visibleTempDir("penguin-rc-se-missing-");
  try {
    const { out, target } = await sharedEnvRun(
      base,
      "pg.sh",
      (py) => `PROMPT_COMMAND=". ${join(py, "pg.sh")}"\n`,
    );
    assert.ok(out["c1"]?.includes("tried"), JSON.stringify(out));
    assert.ok(!out["c1"]!.includes("wrote"), out["c1"]);
    assert.match(out["w1"] ?? "", /Refusing to write|Failed to write/);
    assert.equal(await existsOnHost(target), false);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("run: a missing shared_env file named by PROMPT_COMMAND in a sourced file cannot be made", async () => {
  const base = await visibleTempDir("penguin-rc-se-prompt-");
  try {
    const { out, target } = await sharedEnvRun(
      base,
      "pc.sh",
      (_py, ws) => `. ${join(ws, "e.sh")}\n`,
      (py) => ({ "e.sh": `PROMPT_COMMAND=". ${join(py, "pc.sh")}"\n` }),
    );
    assert.ok(out["c1"]?.includes("tried"), JSON.stringify(out));
    assert.ok(!out["c1"]!.includes("wrote"), out["c1"]);
    assert.match(out["w1"] ?? "", /Refusing to write|Failed to write/);
    assert.equal(await existsOnHost(target), false);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
