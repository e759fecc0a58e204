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
import { item } from "../support/model_server.ts";
import {
  type HomeBase,
  outputsOf,
  runCalls,
  runRefused,
  withHomeBase,
} from "../support/home_run.ts";
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

Deno.test("run: a chain of sourced workspace files longer than penguin reads is refused by name", async () => {
  await withHomeBase("penguin-rc-chain-", async (run) => {
    await chain(run.home, run.ws, 70);
    const stderr = await runRefused(run);
    // .bashrc and k1 … k63 are the 64 files read: following stopped at k64, sourced by k63.
    assert.ok(stderr.includes("stopped following the shell startup files"), stderr);
    assert.ok(stderr.includes(`"${join(run.ws, "k64.sh")}"`), stderr);
    assert.ok(stderr.includes(`sourced or named by "${join(run.ws, "k63.sh")}"`), stderr);
    assert.ok(stderr.includes("shorten the chain"), stderr);
  });
});

Deno.test("run: a long chain that has left every writable root is let be", async () => {
  await withHomeBase("penguin-rc-chain-out-", async (run) => {
    // The chain leaves the workspace early: what lies past the cap is not the model's to change.
    await chain(run.home, join(run.base, "system"), 70);
    const body = await runCalls(run, [
      item.toolCall("exec_command", { cmd: "echo r''an" }, { id: "c1" }),
    ]);
    assert.ok(outputsOf(body)["c1"]?.includes("ran"), JSON.stringify(body));
  });
});

Deno.test("file tools: a chain past the cap that reaches the workspace refuses every write", async () => {
  await withHomeBase("penguin-rc-chain-ft-", async ({ base, home, ws }) => {
    await chain(home, ws, 70);
    const wsReal = await Deno.realPath(ws);
    const facts = await startupFacts(wsReal, [home], []);
    assert.match(facts.refusal ?? "", /stopped following .* at "[^"]*k64\.sh"/);
    assert.match(facts.refusal ?? "", /refuses every write/);
    // Outside the workspace, the same chain refuses nothing.
    const other = join(base, "other");
    await Deno.mkdir(other);
    assert.equal((await startupFacts(await Deno.realPath(other), [home], [])).refusal, undefined);
  });
});

/**
 * A run in the data root `base/data` (outside HOME) whose `~/.bashrc` is `bashrc` (given the
 * shared_env path `py`), where the model tries to create `py/<name>` with a command and with
 * write_file; returns the outputs and the path.
 */
async function sharedEnvRun(
  run: HomeBase,
  name: string,
  bashrc: (py: string, ws: string) => string,
  wsFiles: (py: string) => Record<string, string> = () => ({}),
): Promise<{ out: Record<string, string>; target: string }> {
  const py = join(run.root, "default_project", "agents", "default_agent", "shared_env", "py");
  await Deno.mkdir(py, { recursive: true });
  for (const [f, text] of Object.entries(wsFiles(py))) {
    await Deno.writeTextFile(join(run.ws, f), text);
  }
  await Deno.writeTextFile(join(run.home, ".bashrc"), bashrc(py, run.ws));
  const target = join(py, name);
  const body = await runCalls(run, [
    item.toolCall("exec_command", {
      cmd: `(printf x > '${target}') 2>&1 && echo wr''ote; echo tr''ied`,
    }, { id: "c1" }),
    item.toolCall("write_file", { file_path: target, content: "touch /tmp/pwned\n" }, {
      id: "w1",
    }),
  ]);
  return { out: outputsOf(body), target };
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
  await withHomeBase("penguin-rc-se-missing-", async (run) => {
    const { out, target } = await sharedEnvRun(
      run,
      "pg.sh",
      (py) => `PROMPT_COMMAND=". ${join(py, "pg.sh")}"\n`,
    );
    assert.ok(out["c1"]?.includes("tried"), JSON.stringify(out));
    assert.ok(!out["c1"]!.includes("wrote"), out["c1"]);
    assert.match(out["w1"] ?? "", /Refusing to write|Failed to write/);
    assert.equal(await existsOnHost(target), false);
  });
});

Deno.test("run: a missing shared_env file named by PROMPT_COMMAND in a sourced file cannot be made", async () => {
  await withHomeBase("penguin-rc-se-prompt-", async (run) => {
    const { out, target } = await sharedEnvRun(
      run,
      "pc.sh",
      (_py, ws) => `. ${join(ws, "e.sh")}\n`,
      (py) => ({ "e.sh": `PROMPT_COMMAND=". ${join(py, "pc.sh")}"\n` }),
    );
    assert.ok(out["c1"]?.includes("tried"), JSON.stringify(out));
    assert.ok(!out["c1"]!.includes("wrote"), out["c1"]);
    assert.match(out["w1"] ?? "", /Refusing to write|Failed to write/);
    assert.equal(await existsOnHost(target), false);
  });
});
