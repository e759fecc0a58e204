// A penguin-created `system_config.yaml` holds every key PenguinHarness keeps there, with
// penguin's values, so PenguinHarness runs the agent without mixing in its own defaults.
import assert from "node:assert/strict";
import { parse } from "yaml";
import { defaultBuiltinToolConfigs } from "../../lib/agent/builtin_tool_config.ts";
import { resolveToolDefinitions } from "../../lib/agent/toolset.ts";
import {
  DEFAULT_COMPACTION_PROMPT,
  DEFAULT_MEMORY_PROMPT,
  DEFAULT_MEMORY_WORKSPACE_PROMPT,
  DEFAULT_SCHEDULES_PROMPT,
  DEFAULT_SKILLS_PROMPT,
  DEFAULT_VAULT_PROMPT,
} from "../../lib/state/default_prompts.ts";
import { agentPaths } from "../../lib/state/paths.ts";
import { runCli } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";

Deno.test("a new agent's system_config.yaml has the section prompts and the full tools.builtin list", async () => {
  await withRoot(async (root) => {
    // `skills list` initializes the agent without a model.
    const r = await runCli(["--root", root, "skills", "list"]);
    assert.equal(r.code, 0, r.stderr);
    const path = agentPaths({ root, projectId: "default_project", agentId: "default_agent" })
      .systemConfig;
    const cfg = parse(await Deno.readTextFile(path));
    assert.equal(cfg.compaction.prompt, DEFAULT_COMPACTION_PROMPT);
    assert.equal(cfg.memory.prompt, DEFAULT_MEMORY_PROMPT);
    assert.equal(cfg.memory.workspace_prompt, DEFAULT_MEMORY_WORKSPACE_PROMPT);
    assert.equal(cfg.vault.prompt, DEFAULT_VAULT_PROMPT);
    assert.equal(cfg.skills.prompt, DEFAULT_SKILLS_PROMPT);
    assert.equal(cfg.schedules.prompt, DEFAULT_SCHEDULES_PROMPT);
    const defaults = resolveToolDefinitions();
    assert.deepEqual(
      cfg.tools.builtin.map((t: { name: string }) => t.name),
      defaults.map((d) => d.name),
    );
    for (const [i, d] of defaults.entries()) {
      const t = cfg.tools.builtin[i];
      assert.equal(t.description, d.description, d.name);
      assert.deepEqual(t.parameters, d.parameters, d.name);
      assert.equal(t.permission, d.permission, d.name);
      assert.equal(t.timeoutMs, d.timeoutMs, d.name);
      assert.equal(t.maxOutputLength, d.maxOutputLength, d.name);
    }
    assert.deepEqual(cfg.tools.mcpServers, []);
  });
});

Deno.test("the written tools.builtin list resolves to exactly the default tool definitions", () => {
  assert.deepEqual(resolveToolDefinitions(defaultBuiltinToolConfigs()), resolveToolDefinitions());
});
