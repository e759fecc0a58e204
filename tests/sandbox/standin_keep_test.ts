// A session keeps the stand-ins its commands need from its first command until it ends (made and
// removed once per session, not per command), and at its end names a stand-in it could not
// remove because its directory was moved meanwhile.
import assert from "node:assert/strict";
import { join } from "node:path";
import { holdPlaceholders, keepStandIns, sweepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";
import { penguinArgv, penguinEnv, runCli } from "../support/cli.ts";
import { exists, visibleTempDir } from "./_helpers.ts";
import { dirNames as names } from "../support/dir_names.ts";
import { useTestRunDir } from "../support/run_dir.ts";

// The stand-in registry of this test process is its own (not the user's, in /tmp/penguin-<uid>).
useTestRunDir();

Deno.test({
  name: "penguin run keeps .git and penguin.jsonc stand-ins between commands, none after it",
  ignore: !bwrap,
  fn: async () => {
    const seen: string[][] = [];
    let workspace = "";
    const server = await startModelServer({
      handler: async (_req, i) => {
        // Between commands: what lies in the workspace now.
        if (i > 0) seen.push(await names(workspace));
        if (i < 3) {
          return turn.toolCall("exec_command", {
            cmd: i === 2 ? "mkdir .git/x || rmdir .git || echo refused" : `echo ${i} > f${i}`,
            description: "c",
          });
        }
        return turn.text("done");
      },
    });
    const sb = await makeRoot(server, { visible: true });
    workspace = sb.workspace;
    const runDir = join(sb.base, "run");
    await Deno.mkdir(runDir, { mode: 0o700 });
    try {
      const r = await runCli(
        ["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"],
        { env: { PENGUIN_RUN_DIR: runDir } },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(server.requests.length, 4);
      // Kept from the first command on, read-only inside each one.
      assert.deepEqual(seen, [
        [".git", "f0", "penguin.jsonc"],
        [".git", "f0", "f1", "penguin.jsonc"],
        [".git", "f0", "f1", "penguin.jsonc"],
      ]);
      assert.match(JSON.stringify(server.requests.at(-1)!.body), /refused/);
      // Gone once the session ended, with their records.
      assert.deepEqual(await names(sb.workspace), ["f0", "f1"]);
      assert.doesNotMatch(r.stderr, /stand-in/);
      const records = (await names(join(runDir, "stand-ins"))).filter((n) => n.endsWith(".json"));
      assert.deepEqual(records, []);
    } finally {
      await server.close();
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "penguin run stopped by SIGTERM during a command removes the stand-ins it kept",
  ignore: !bwrap,
  fn: async () => {
    const server = await startModelServer({
      turns: [
        turn.toolCall("exec_command", { cmd: "echo one", description: "c" }),
        turn.toolCall("exec_command", { cmd: "echo begin; sleep 30", description: "long" }),
        turn.text("x"),
      ],
    });
    const sb = await makeRoot(server, { visible: true });
    const runDir = join(sb.base, "run");
    await Deno.mkdir(runDir, { mode: 0o700 });
    try {
      const child = new Deno.Command(Deno.execPath(), {
        args: [...penguinArgv(), "--root", sb.root, "run", "--workspace", sb.workspace, "--json"]
          .concat(["-m", "go"]),
        env: penguinEnv({ PENGUIN_RUN_DIR: runDir }),
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const stderr = new Response(child.stderr).text();
      let during: string[] | undefined;
      let buf = "";
      for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
        buf += chunk;
        // The second command's output has begun: it runs, and the stand-ins are there.
        if (during === undefined && /"partial_tool_call_output"[^\n]*begin/.test(buf)) {
          during = await names(sb.workspace);
          child.kill("SIGTERM");
        }
      }
      const status = await child.status;
      assert.equal(status.code, 1, await stderr);
      assert.deepEqual(during, [".git", "penguin.jsonc"]);
      assert.deepEqual(await names(sb.workspace), [], "none left once it stopped");
      const records = (await names(join(runDir, "stand-ins"))).filter((n) => n.endsWith(".json"));
      assert.deepEqual(records, []);
    } finally {
      await server.close();
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "a stand-in whose directory is moved when the session ends is named, and swept once back",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const base = await visibleTempDir("penguin-standin-keep-");
    const outer = join(base, "outer");
    const ws = join(outer, "ws");
    await Deno.mkdir(ws, { recursive: true });
    await Deno.mkdir(join(base, "victim"));
    await Deno.symlink("../victim", join(outer, "swap"));
    const git = { path: join(ws, ".git"), kind: "dir" as const };
    const cfg = { path: join(ws, "penguin.jsonc"), kind: "file" as const, content: "{}\n" };
    const keeping = keepStandIns();
    try {
      // One command: its stand-ins stay after it while the session is open.
      await (await holdPlaceholders([git, cfg]))();
      assert.deepEqual(await names(ws), [".git", "penguin.jsonc"]);
      // The workspace swapped for a link to another directory as the session ends.
      await Deno.rename(ws, join(outer, "moved"));
      await Deno.rename(join(outer, "swap"), ws);
      const left = await keeping.end();
      assert.deepEqual(left.sort(), [git.path, cfg.path]);
      const lines: string[] = [];
      await keeping.settle((line) => lines.push(line));
      assert.equal(lines.length, 2);
      for (const p of [git.path, cfg.path]) {
        assert.ok(lines.some((l) => l.includes(`"${p}"`) && !l.includes("\n")), lines.join("|"));
      }
      assert.deepEqual(await names(join(base, "victim")), [], "nothing removed or made there");
      assert.deepEqual(await names(join(outer, "moved")), [".git", "penguin.jsonc"]);
      // Back in place: the next sweep removes them.
      await Deno.rename(ws, join(outer, "swap"));
      await Deno.rename(join(outer, "moved"), ws);
      await sweepStandIns(() => true);
      assert.deepEqual(await names(ws), []);
    } finally {
      await keeping.end();
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test({
  name: "a session's end removes the stand-ins it kept, and only once no session keeps them",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const base = await visibleTempDir("penguin-standin-keep-");
    const p = { path: join(base, ".git"), kind: "dir" as const };
    const a = keepStandIns();
    const b = keepStandIns();
    try {
      await (await holdPlaceholders([p]))();
      await (await holdPlaceholders([p]))();
      assert.equal(await exists(p.path), true, "kept between commands");
      assert.deepEqual(await a.end(), []);
      assert.equal(await exists(p.path), true, "another session of the process keeps it");
      // A command still running when the last session ends lets go itself.
      const running = await holdPlaceholders([p]);
      assert.deepEqual(await b.end(), []);
      assert.equal(await exists(p.path), true, "still mounted by the running command");
      await running();
      assert.equal(await exists(p.path), false);
      // Without a session, a command's stand-ins go when it ends, as before.
      await (await holdPlaceholders([p]))();
      assert.equal(await exists(p.path), false);
    } finally {
      await a.end();
      await b.end();
      await Deno.remove(base, { recursive: true });
    }
  },
});
