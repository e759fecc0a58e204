import assert from "node:assert/strict";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { DEFAULT_AGENT_PRESET, loadOrInitAgent } from "../../lib/state/agent_init.ts";
import { agentPaths } from "../../lib/state/paths.ts";
import { DEFAULT_SYSTEM_PROMPT } from "../../lib/state/default_prompts.ts";
import { resolveSystemConfig } from "../../lib/state/system_config.ts";
import { withRoot } from "../support/roots.ts";

Deno.test("init creates the agent layout and writes system_config.yaml last", async () => {
  await withRoot(async (root) => {
    const ref = { root, projectId: "default_project", agentId: "default_agent" };
    const p = agentPaths(ref);
    const order: string[] = [];
    const a = await loadOrInitAgent(ref, { onCreate: (path) => order.push(path) });
    assert.equal(a.created, true);
    assert.equal(order.at(-1), p.systemConfig);
    for (
      const path of [
        p.agentState,
        p.tools,
        p.userMemory,
        p.skills,
        p.scratchpad,
        p.userMemoryIndex,
        p.agentsMd,
      ]
    ) {
      assert.ok(order.indexOf(path) >= 0 && order.indexOf(path) < order.length - 1, path);
    }
    for (const dir of [p.agentState, p.tools, p.userMemory, p.skills, p.scratchpad]) {
      const st = await Deno.stat(dir);
      assert.ok(st.isDirectory, dir);
      if (Deno.build.os !== "windows") assert.equal(st.mode! & 0o777, 0o700, dir);
    }
    assert.equal(await Deno.readTextFile(p.userMemoryIndex), "");
    assert.equal(a.agentsMd, "");
    assert.equal(a.systemConfig.name, DEFAULT_AGENT_PRESET.name);
    assert.equal(a.systemConfig.system_prompt, DEFAULT_SYSTEM_PROMPT);
    for (const absent of [p.benchmarks, p.workspaces, p.traces, p.sharedEnv, p.vault]) {
      await assert.rejects(Deno.stat(absent), Deno.errors.NotFound, absent);
    }
  });
});

Deno.test("a second load reads the existing config and never rewrites it", async () => {
  await withRoot(async (root) => {
    const ref = { root, projectId: "p1", agentId: "helper" };
    const first = await loadOrInitAgent(ref);
    assert.equal(first.systemConfig.name, "helper");
    const p = agentPaths(ref);
    const edited = "name: mine\nsystem_prompt: |\n  custom {{CWD}}\nmax_turns: 3\n";
    await Deno.writeTextFile(p.systemConfig, edited);
    await Deno.writeTextFile(p.agentsMd, "  be brief\n");
    const second = await loadOrInitAgent(ref);
    assert.equal(second.created, false);
    assert.equal(resolveSystemConfig(second.systemConfig).max_turns, 3);
    assert.equal(second.agentsMd, "  be brief\n");
    assert.equal(await Deno.readTextFile(p.systemConfig), edited);
  });
});

Deno.test("an init interrupted before system_config.yaml re-runs and keeps files already written", async () => {
  await withRoot(async (root) => {
    const ref = { root, projectId: "p", agentId: "a" };
    const p = agentPaths(ref);
    await assert.rejects(
      loadOrInitAgent(ref, {
        onCreate: (path) => {
          if (path === p.agentsMd) throw new Error("simulated crash");
        },
      }),
      /simulated crash/,
    );
    await assert.rejects(Deno.stat(p.systemConfig), Deno.errors.NotFound);
    await Deno.writeTextFile(p.agentsMd, "keep me");
    const again = await loadOrInitAgent(ref);
    assert.equal(again.created, true);
    assert.equal(again.agentsMd, "keep me");
    assert.ok((await Deno.stat(p.systemConfig)).isFile);
  });
});

Deno.test("a malformed system_config.yaml is a config error with its line, and is left as it is", async () => {
  await withRoot(async (root) => {
    const ref = { root, projectId: "p", agentId: "a" };
    await loadOrInitAgent(ref);
    const p = agentPaths(ref);
    const bad = "system_prompt: ok\nmodel:\n  max_tokens: [1\n";
    await Deno.writeTextFile(p.systemConfig, bad);
    await assert.rejects(loadOrInitAgent(ref), (err: unknown) => {
      assert.ok(err instanceof PenguinError);
      assert.equal(err.kind, "config");
      assert.ok(err.message.startsWith(`Cannot parse "${p.systemConfig}": line `), err.message);
      return true;
    });
    await Deno.writeTextFile(p.systemConfig, "name: x\n");
    await assert.rejects(loadOrInitAgent(ref), /system_prompt: expected a string/);
    assert.equal(await Deno.readTextFile(p.systemConfig), "name: x\n");
  });
});

Deno.test("invalid agent ids are refused before any directory is made", async () => {
  await withRoot(async (root) => {
    await assert.rejects(
      loadOrInitAgent({ root, projectId: "p", agentId: "../x" }),
      /Invalid agent id/,
    );
    assert.deepEqual(await Array.fromAsync(Deno.readDir(root)), []);
  });
});

Deno.test("a load repairs an agent import that died between its renames: the old state comes back, never a default one", async () => {
  await withRoot(async (root) => {
    const ref = { root, projectId: "default_project", agentId: "default_agent" };
    const p = agentPaths(ref);
    await loadOrInitAgent(ref);
    await Deno.writeTextFile(p.agentsMd, "My own rules.");
    // The import renamed agent_state away and died before renaming its stage in.
    const old = `${p.agent}/.agent_state.old-deadbeef`;
    const stage = `${p.agent}/.agent_state.import-deadbeef`;
    await Deno.rename(p.agentState, old);
    await Deno.mkdir(stage);
    await Deno.writeTextFile(`${stage}/AGENTS.md`, "Imported rules.");
    const a = await loadOrInitAgent(ref);
    assert.equal(a.created, false);
    assert.equal(a.agentsMd, "My own rules.");
    assert.equal(a.recovered.length, 2);
    assert.match(a.recovered[0]!, /^restored ".*agent_state" from ".*\.agent_state\.old-deadbeef"/);
    assert.match(
      a.recovered[1]!,
      /^removed ".*\.agent_state\.import-deadbeef", the unfinished stage/,
    );
    const names: string[] = [];
    for await (const e of Deno.readDir(p.agent)) names.push(e.name);
    assert.deepEqual(names.filter((n) => n.startsWith(".agent_state")), []);
    // Nothing left to repair: the next load reports nothing.
    assert.deepEqual((await loadOrInitAgent(ref)).recovered, []);
  });
});
