import assert from "node:assert/strict";
import {
  assembleSystemPrompt,
  EMPTY_MEMORY_INDEX,
  memoryIndexText,
  type PromptSections,
  type PromptVars,
  workspaceMemoryKey,
} from "../../lib/agent/mod.ts";

const vars: PromptVars = {
  agentsMd: "\n  Use {{CWD}} as home.  \n",
  agentId: "a1",
  projectDir: "/data/p",
  sessionId: "session-2026-01-02-03-04-05-0123abcd",
  cwd: "/work",
  provider: "custom",
  modelId: "m",
  platform: "linux",
  osVersion: "Linux 6.1",
  shell: "bash",
  date: "2026-01-02",
};

const sections: PromptSections = {
  vault: "VAULT[{{SKILLS}}]",
  skills: "SKILLS",
  memory: "MEMORY mentions {{CWD}}",
  schedules: "",
  vaultKeys: "- K1",
  skillMetadata: "- `s`",
};

Deno.test("prompt assembly substitutes in order, expands sections in one pass and trims", () => {
  const template =
    "  {{AGENTS_MD}}|{{VAULT_KEYS}}|{{SKILL_METADATA}}|{{AGENT_ID}}|{{PROJECT_DIR}}|" +
    "{{SESSION_ID}}|{{PROVIDER}}/{{MODEL_ID}}|{{PLATFORM}}|{{OS_VERSION}}|{{SHELL}}|{{DATE}}|" +
    "{{VAULT}}|{{MEMORY}}|{{SCHEDULES}}|{{SKILLS}}\n\n";
  const out = assembleSystemPrompt(template, vars, sections);
  assert.equal(
    out,
    "Use /work as home.|- K1|- `s`|a1|/data/p|session-2026-01-02-03-04-05-0123abcd|custom/m|" +
      "linux|Linux 6.1|bash|2026-01-02|VAULT[{{SKILLS}}]|MEMORY mentions {{CWD}}||SKILLS",
  );
});

Deno.test("a memory index is trimmed, marked when empty and truncated at 200 lines or 25000 chars", () => {
  assert.equal(memoryIndexText(undefined), EMPTY_MEMORY_INDEX);
  assert.equal(memoryIndexText("  \n\n"), EMPTY_MEMORY_INDEX);
  assert.equal(memoryIndexText("\n- a.md: A\n"), "- a.md: A");
  const many = Array.from({ length: 250 }, (_, i) => `- t${i}.md`).join("\n");
  const cut = memoryIndexText(many).split("\n");
  assert.equal(cut.length, 201);
  assert.equal(cut[199], "- t199.md");
  assert.equal(
    cut[200],
    "(index truncated: showing 200 of 250 lines — open MEMORY.md for the rest)",
  );
  const long = Array.from({ length: 100 }, () => "x".repeat(299)).join("\n");
  const byChars = memoryIndexText(long);
  const lines = byChars.split("\n");
  assert.equal(
    lines.at(-1),
    "(index truncated: showing the first 25000 characters — open MEMORY.md for the rest)",
  );
  assert.ok(lines.slice(0, -1).every((l) => l.length === 299), "cut at a line boundary");
  assert.ok(lines.slice(0, -1).join("\n").length <= 25000);
});

Deno.test("the workspace memory key is a sanitized basename plus 8 hex of the path hash", async () => {
  assert.match(await workspaceMemoryKey("/home/u/My Project!"), /^my-project-[0-9a-f]{8}$/);
  assert.match(await workspaceMemoryKey("/"), /^workspace-[0-9a-f]{8}$/);
  assert.notEqual(await workspaceMemoryKey("/a/x"), await workspaceMemoryKey("/b/x"));
  const long = await workspaceMemoryKey(`/w/${"a".repeat(60)}`);
  assert.equal(long.length, 40 + 1 + 8);
});
