import assert from "node:assert/strict";
import { PenguinError } from "../../lib/protocol/errors.ts";
import {
  agentPaths,
  projectConfigPath,
  sessionScratchpadDir,
  truncatedOutputDir,
} from "../../lib/state/paths.ts";

const ref = { root: "/r", projectId: "default_project", agentId: "default_agent" };

Deno.test("paths follow the documented layout", () => {
  const p = agentPaths(ref);
  const a = "/r/default_project/agents/default_agent";
  assert.deepEqual(p, {
    project: "/r/default_project",
    projectConfig: "/r/default_project/.project_config.toml",
    agent: a,
    agentState: `${a}/agent_state`,
    systemConfig: `${a}/agent_state/system_config.yaml`,
    agentsMd: `${a}/agent_state/AGENTS.md`,
    vault: `${a}/agent_state/.vault.toml`,
    tools: `${a}/agent_state/tools`,
    skills: `${a}/agent_state/skills`,
    memory: `${a}/agent_state/memory`,
    userMemory: `${a}/agent_state/memory/user`,
    userMemoryIndex: `${a}/agent_state/memory/user/MEMORY.md`,
    schedule: `${a}/agent_state/schedule`,
    traces: `${a}/traces`,
    scratchpad: `${a}/scratchpad`,
    workspaces: `${a}/workspaces`,
    benchmarks: `${a}/benchmarks`,
    snapshots: `${a}/snapshots`,
    sharedEnv: `${a}/shared_env`,
  });
  const sid = "session-2026-07-18-11-10-22-3f8a1c2d";
  assert.equal(sessionScratchpadDir(ref, sid), `${a}/scratchpad/${sid}`);
  assert.equal(truncatedOutputDir(ref, sid), `${a}/scratchpad/${sid}/truncated-tool-output`);
});

Deno.test("paths refuse ids that could escape the data root", () => {
  assert.throws(() => projectConfigPath({ root: "/r", projectId: "../etc" }), PenguinError);
  assert.throws(() => agentPaths({ ...ref, agentId: "a/../../b" }), PenguinError);
  assert.throws(() => sessionScratchpadDir(ref, "../../x"), PenguinError);
});
