import assert from "node:assert/strict";
import { join } from "node:path";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { DEFAULT_SYSTEM_PROMPT } from "../../lib/state/default_prompts.ts";
import {
  defaultSystemConfig,
  KERNEL_VERSION,
  resolveSystemConfig,
} from "../../lib/state/system_config.ts";
import {
  loadSystemConfig,
  parseSystemConfig,
  renderSystemConfig,
  saveSystemConfig,
} from "../../lib/state/system_config_parse.ts";

Deno.test("omitted keys fall back to the documented defaults at resolve time", () => {
  const cfg = parseSystemConfig("system_prompt: hello\n", "f");
  assert.deepEqual(cfg, { system_prompt: "hello" });
  const r = resolveSystemConfig(cfg);
  assert.equal(r.version, 1);
  assert.equal(r.kernel_version, KERNEL_VERSION);
  assert.equal(r.max_turns, -1);
  assert.deepEqual(r.model, { max_tokens: 32000, thinking_level: "medium", timeoutMs: 120000 });
  assert.equal(r.compaction.max_context_length, 256000);
  assert.equal(r.compaction.max_session_turns, -1);
  assert.equal(r.compaction.mode, "summarize");
  assert.match(r.compaction.prompt, /\[summary\]put the summary text here\.\.\.\[\/summary\]/);
  for (const s of [r.memory, r.vault, r.skills, r.schedules]) assert.equal(s.enabled, true);
  assert.match(r.memory.prompt, /\{\{USER_MEMORY_INDEX\}\}/);
  assert.match(r.memory.workspace_prompt, /\{\{WORKSPACE_MEMORY_INDEX\}\}/);
  assert.match(r.memory.workspace_prompt, /\{\{WORKSPACE_MEMORY_DIR\}\}/);
  assert.match(r.vault.prompt, /\{\{VAULT_KEYS\}\}/);
  assert.match(r.skills.prompt, /\{\{SKILL_METADATA\}\}/);
  assert.match(r.schedules.prompt, /\{\{SCHEDULE_LIST\}\}/);
  assert.deepEqual(r.tools, { mcpServers: [] });
});

Deno.test("given values win; invalid version reads as 1; unknown compaction mode reads as summarize", () => {
  const cfg = parseSystemConfig(
    [
      "system_prompt: p",
      "version: 0",
      "max_turns: 7",
      "model: {max_tokens: -1, thinking_level: none, timeoutMs: 0}",
      "compaction: {mode: shrink, max_context_length: 1000}",
      "memory: {enabled: false}",
      "tools:",
      "  builtin:",
      "    - name: read_file",
      "      timeoutMs: 5",
      "  mcpServers: [{name: fs, config: {command: x}}]",
      "custom_key: kept",
    ].join("\n"),
    "f",
  );
  const r = resolveSystemConfig(cfg);
  assert.equal(r.version, 1);
  assert.equal(r.max_turns, 7);
  assert.deepEqual(r.model, { max_tokens: -1, thinking_level: "none", timeoutMs: 0 });
  assert.equal(r.compaction.mode, "summarize");
  assert.equal(r.compaction.max_context_length, 1000);
  assert.equal(r.memory.enabled, false);
  assert.deepEqual(r.tools.builtin, [{ name: "read_file", timeoutMs: 5 }]);
  assert.deepEqual(r.tools.mcpServers, [{ name: "fs", config: { command: "x" } }]);
  assert.equal((cfg as Record<string, unknown>).custom_key, "kept");
  assert.equal(
    resolveSystemConfig(parseSystemConfig("system_prompt: p\ncompaction: {mode: discard}\n", "f"))
      .compaction.mode,
    "discard",
  );
});

Deno.test("the default config round-trips through YAML with the prompt as a literal block", async () => {
  const dir = await Deno.makeTempDir({ prefix: "penguin-sc-" });
  try {
    const path = join(dir, "agent_state", "system_config.yaml");
    const cfg = defaultSystemConfig({ name: "General Agent", description: "d" });
    await saveSystemConfig(path, cfg);
    assert.deepEqual(await loadSystemConfig(path), cfg);
    const text = await Deno.readTextFile(path);
    assert.match(text, /^name: General Agent\ndescription: d\n/);
    assert.match(text, /^system_prompt: \|/m);
    assert.equal(renderSystemConfig(parseSystemConfig(text, path)), text);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the default system prompt has every section heading and placeholder", () => {
  const headings = [
    "# Role",
    "# Personality",
    "# Success criteria",
    "# Constraints",
    "# Stop rules",
    "# Tool use",
    "# System markers",
    "# File system",
    "# Suggested workflows",
    "# Environment",
  ];
  let at = -1;
  for (const h of headings) {
    const i = DEFAULT_SYSTEM_PROMPT.indexOf(`\n${h}\n`) >= 0
      ? DEFAULT_SYSTEM_PROMPT.indexOf(`\n${h}\n`)
      : DEFAULT_SYSTEM_PROMPT.indexOf(`${h}\n`);
    assert.ok(i > at, `${h} missing or out of order`);
    at = i;
  }
  assert.ok(DEFAULT_SYSTEM_PROMPT.startsWith("# Role\n"), "no fmt directive leaks into the prompt");
  for (
    const p of [
      "AGENTS_MD",
      "AGENT_ID",
      "PROJECT_DIR",
      "SESSION_ID",
      "CWD",
      "PROVIDER",
      "MODEL_ID",
      "PLATFORM",
      "OS_VERSION",
      "SHELL",
      "DATE",
      "MEMORY",
      "VAULT",
      "SKILLS",
      "SCHEDULES",
    ]
  ) {
    assert.ok(DEFAULT_SYSTEM_PROMPT.includes(`{{${p}}}`), p);
  }
  assert.match(
    DEFAULT_SYSTEM_PROMPT,
    /\[developer_instructions\]\n[^]*\n\n\{\{AGENTS_MD\}\}\n\[\/developer_instructions\]/,
  );
  for (
    const marker of ["[turn_aborted]", "[turn_retried]", "[context_summary]", "[user_steering]"]
  ) {
    assert.ok(DEFAULT_SYSTEM_PROMPT.includes(marker), marker);
  }
  for (
    const line of [
      "Platform",
      "OS Version",
      "Shell",
      "Date",
      "App Data Dir",
      "Agent ID",
      "CWD",
      "Provider",
      "Model ID",
      "Session ID",
    ]
  ) {
    assert.match(DEFAULT_SYSTEM_PROMPT, new RegExp(`^- ${line}: \\{\\{`, "m"), line);
  }
});

Deno.test("malformed YAML is reported with path, line and column", () => {
  assert.throws(
    () => parseSystemConfig("system_prompt: x\nmodel: [1\n", "/a/system_config.yaml"),
    (err: unknown) => {
      assert.ok(err instanceof PenguinError);
      assert.equal(err.kind, "config");
      assert.match(
        err.message,
        /^Cannot parse "\/a\/system_config\.yaml": line \d+, column \d+: \S/,
      );
      return true;
    },
  );
  assert.throws(
    () => parseSystemConfig("system_prompt: x\nsystem_prompt: y\n", "/a/s.yaml"),
    /line 2, column 1: Map keys must be unique/,
  );
});

Deno.test("schema errors in system_config.yaml point at the offending line", () => {
  assert.throws(
    () => parseSystemConfig("system_prompt: x\nmodel:\n  thinking_level: turbo\n", "/a/s.yaml"),
    /^PenguinError: Invalid "\/a\/s\.yaml": line 3, column 19: model\.thinking_level: expected one of "none", .*found "turbo"$/,
  );
  assert.throws(
    () => parseSystemConfig("name: x\n", "/a/s.yaml"),
    /system_prompt: expected a string \(the system prompt template; the field is required\), found nothing/,
  );
});
